"""The dashboard in Chromium: runs from the CLI appear and update live, a run's steps, the workflow
diagram, cancel from the page, the dry-run form, HTML in outputs stays text."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.mcp.dashboard.conftest import cli, cli_run, env_for, workrail
from workrail_engine.runs.history import RunHistory

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(project, home) -> str:
    return cli_run(project, home, "dash-demo")


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors


def _mark_no_reload(page) -> None:
    page.evaluate("window.__noReload = 'still the same document'")


def _still_same_document(page) -> bool:
    return page.evaluate("window.__noReload") == "still the same document"


def test_a_cli_run_appears_and_reaches_its_final_status_without_reload(
    page, dashboard_url, project, home, screenshots
):
    page.goto(dashboard_url)
    _mark_no_reload(page)
    process = subprocess.Popen(
        workrail("run", "slow-steps"),
        cwd=project,
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        row = page.locator("tr", has=page.locator("a", has_text="slow-steps")).first
        row.wait_for(timeout=20_000)
        page.wait_for_function(
            """() => [...document.querySelectorAll('tr')].some(r =>
                   r.textContent.includes('slow-steps') && r.textContent.includes('running'))""",
            timeout=20_000,
        )
        page.wait_for_function(
            """() => [...document.querySelectorAll('tr')].some(r =>
                   r.textContent.includes('slow-steps') && r.textContent.includes('success')
                   && r.textContent.includes('3/3'))""",
            timeout=30_000,
        )
        assert _still_same_document(page)
        page.screenshot(path=str(screenshots / "runs-live.png"), full_page=True)
    finally:
        process.wait(60)


def test_a_step_end_reaches_the_run_page_within_a_second(page, dashboard_url, project, home):
    process = subprocess.Popen(
        workrail("run", "slow-steps"),
        cwd=project,
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        history = RunHistory(home=home / "runs")
        deadline = time.monotonic() + 20
        run_id = None
        while run_id is None and time.monotonic() < deadline:
            rows = history.page(workflow="slow-steps", status="running").rows
            run_id = rows[0].run_id if rows else None
            time.sleep(0.05)
        assert run_id, "the CLI's run never showed up in the store"
        page.goto(f"{dashboard_url}runs/{run_id}")
        _mark_no_reload(page)
        delays = []
        for step in ("step-1", "step-2", "step-3"):
            page.wait_for_function(
                f"""() => {{
                    const li = document.querySelector('li[data-step="{step}"]');
                    return li && li.dataset.status === 'success';
                }}""",
                timeout=20_000,
                polling=20,
            )
            seen = time.time()
            view = history.run(run_id)
            ended = next(s for s in view["steps"] if s["key"] == step)["attempts"][-1]["end"]
            delays.append(seen - ended)
        page.wait_for_function(
            "() => document.getElementById('run-status').textContent === 'success'",
            timeout=20_000,
        )
        assert _still_same_document(page)
        print(f"step end → page: {', '.join(f'{d * 1000:.0f} ms' for d in delays)}")
        assert max(delays) < 1.0, delays
    finally:
        process.wait(60)


def test_the_run_page_lists_steps_with_statuses(page, dashboard_url, demo_run, screenshots):
    page.goto(f"{dashboard_url}runs/{demo_run}")
    statuses = {
        li.get_attribute("data-step"): li.get_attribute("data-status")
        for li in page.locator("li.step").all()
    }
    assert statuses == {
        "greet": "success",
        "shout": "skipped",
        "check-one": "success",
        "check-two": "failed",
        "tick[1]": "success",
        "tick[2]": "success",
        "review": "skipped",
    }
    assert page.locator("#run-status").text_content() == "partial"
    retried = page.locator('li[data-step="check-two"]')
    assert "2 attempts" in retried.text_content()
    assert retried.locator("rect.bar").count() == 2  # one bar per attempt
    # the parallel members sit under their group's label, and overlap in time
    assert page.locator("li.group-label", has_text="checks").count() == 1
    page.locator('li[data-step="check-two"] details summary').click()
    assert "flaky" in retried.locator("pre.stderr").text_content()
    page.screenshot(path=str(screenshots / "run.png"), full_page=True)


def test_a_waiting_agent_step_shows_its_guidance(page, dashboard_url, project, home):
    run_id = cli_run(project, home, "asks-agent")  # the CLI leaves it waiting for the agent
    page.goto(f"{dashboard_url}runs/{run_id}")
    assert page.locator("#run-status").text_content() == "waiting"
    waiting = page.locator('li[data-step="decide"]')
    assert waiting.get_attribute("data-status") == "waiting"
    text = waiting.locator(".guidance").text_content()
    assert "Pick the option that keeps the tests green." in text
    assert "Explain the choice in one line" in text


def test_a_skipped_step_shows_as_skipped_with_its_condition(page, dashboard_url, demo_run):
    page.goto(f"{dashboard_url}runs/{demo_run}")
    skipped = page.locator('li[data-step="shout"]')
    assert skipped.locator(".status").text_content() == "skipped"
    assert "parameters.loud is true" in skipped.locator(".why").text_content()


def test_step_output_containing_html_stays_text(page, dashboard_url, demo_run):
    page.goto(f"{dashboard_url}runs/{demo_run}")
    greet = page.locator('li[data-step="greet"]')
    greet.locator("details summary").click()
    shown = greet.locator("pre.stdout").text_content()
    assert '<script>window.pwned=1</script><b id="injected">hi</b> world' in shown
    assert page.locator("#injected").count() == 0
    assert page.evaluate("window.pwned") is None
    assert page.locator("main script").count() == 0


def test_the_workflow_page_draws_its_steps(page, dashboard_url, screenshots):
    page.goto(f"{dashboard_url}workflows/dash-demo")
    svg = page.locator("svg.diagram")
    drawn = {a.get_attribute("data-step") for a in svg.locator("a").all()}
    assert drawn == {
        "greet",
        "shout",
        "checks",
        "check-one",
        "check-two",
        "repeat",
        "tick",
        "review",
    }
    assert svg.locator("a.kind-command").count() == 5
    assert svg.locator("a.kind-agent").count() == 1
    text = svg.text_content()
    assert "only if parameters.loud is true" in text
    assert "at most 5 iterations" in text
    # parallel members side by side: same top, different left
    one = svg.locator('a[data-step="check-one"] rect').bounding_box()
    two = svg.locator('a[data-step="check-two"] rect').bounding_box()
    assert one["y"] == two["y"] and one["x"] < two["x"]
    # the side panel: argv, prompt, rules; keyboard: following a step's link focuses its entry
    assert "parameters.who" in page.locator("#step-greet pre.argv").text_content()
    assert "polite" in page.locator("#step-review .rules").text_content()
    page.focus('svg.diagram a[data-step="review"]')
    page.keyboard.press("Enter")
    page.wait_for_url("**#step-review")
    page.screenshot(path=str(screenshots / "workflow.png"), full_page=True)
    page.goto(f"{dashboard_url}workflows/python-quality-gate")  # a bundled one, for the docs
    assert page.locator('svg.diagram a[data-step="lint"]').count() == 1
    page.screenshot(path=str(screenshots / "workflow-bundled.png"), full_page=True)


def test_the_dry_run_form_shows_the_plan(page, dashboard_url):
    page.goto(f"{dashboard_url}workflows/dash-demo")
    page.fill("#param-who", "Ada")
    page.check("#param-loud")
    page.select_option("#param-flavour", "fancy")
    page.get_by_role("button", name="Dry run (show the plan)").click()
    plan = page.locator("section.plan")
    plan.wait_for()
    text = plan.text_content()
    assert "Ada" in text and "nothing was executed" in text
    assert "shout" in text and "runs" in text


def test_the_workflows_page_lists_sources_and_invalid_files(page, dashboard_url, screenshots):
    page.goto(f"{dashboard_url}workflows")
    card = page.locator('li.card[data-workflow="dash-demo"]')
    assert "v1.2.0" in card.text_content() and "testing" in card.text_content()
    assert "project" in card.locator(".source").text_content()
    invalid = page.locator("ul.invalid").text_content()
    assert "broken-flow.json:" in invalid and "WR" in invalid
    page.fill("#q", "slow")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/workflows?q=slow**")
    assert page.locator("li.card").count() == 1
    page.goto(f"{dashboard_url}workflows")
    page.screenshot(path=str(screenshots / "workflows.png"), full_page=True)


def test_cancel_from_the_page_stops_the_processes_within_5_seconds(
    page, dashboard_url, project, home, tmp_path
):
    pidfile = tmp_path / "pid"
    process = subprocess.Popen(
        workrail("run", "sleeper", "--param", f"pidfile={pidfile}"),
        cwd=project,
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        run_id = RunHistory(home=home / "runs").page(workflow="sleeper").rows[0].run_id
        page.goto(f"{dashboard_url}runs/{run_id}")
        started = time.monotonic()
        page.get_by_role("button", name="Cancel run").click()
        while _alive(pid) and time.monotonic() - started < 10:
            time.sleep(0.05)
        stopped = time.monotonic() - started
        assert not _alive(pid), "the step's process still runs 10 s after the cancel"
        print(f"cancel → process gone: {stopped * 1000:.0f} ms")
        assert stopped < 5.0
        page.wait_for_function(
            "() => document.getElementById('run-status').textContent === 'cancelled'",
            timeout=10_000,
        )
    finally:
        process.wait(30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" not in status.read_text()
    except OSError:
        return False


def test_the_pages_fit_320_px_and_follow_the_dark_scheme(
    browser, dashboard_url, allowed_dashboard_url, demo_run, screenshots
):
    context = browser.new_context(viewport={"width": 320, "height": 700}, color_scheme="dark")
    page = context.new_page()
    try:
        for name, url in (
            ("runs", dashboard_url),
            ("run", f"{dashboard_url}runs/{demo_run}"),
            # with a "Run again from here" button on each step
            ("run-with-actions", f"{allowed_dashboard_url}runs/{demo_run}"),
            ("workflows", f"{dashboard_url}workflows"),
            ("workflow", f"{dashboard_url}workflows/dash-demo"),
        ):
            page.goto(url)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 320, f"{name} page is {width} px wide at 320"
            page.screenshot(path=str(screenshots / f"{name}-320-dark.png"), full_page=True)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)"
        # keyboard: the first Tab reaches the skip link, which leads to the content
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    finally:
        context.close()


def test_runs_can_be_filtered_by_status_and_workflow(page, dashboard_url, demo_run, screenshots):
    page.goto(dashboard_url)
    page.screenshot(path=str(screenshots / "runs.png"), full_page=True)
    page.goto(f"{dashboard_url}runs?status=partial")
    ids = page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert demo_run in ids
    page.goto(f"{dashboard_url}runs?workflow=slow-steps")
    assert page.locator(f'tr[data-run="{demo_run}"]').count() == 0
    assert json.dumps(page.url).count("token") == 0


def test_runs_start_from_the_page_only_with_allow_commands(
    browser, dashboard_url, allowed_dashboard_url
):
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{dashboard_url}workflows/dash-demo")  # a server without --allow-commands
        assert page.get_by_role("button", name="Start a run").count() == 0
        page.goto(f"{allowed_dashboard_url}workflows/dash-demo")
        page.fill("#param-who", "from the page")
        page.get_by_role("button", name="Start a run").click()
        page.wait_for_url("**/runs/wf-*")
        page.wait_for_function(
            "() => document.getElementById('run-status').textContent === 'partial'",
            timeout=30_000,
        )
        page.locator('li[data-step="greet"] details summary').click()
        assert "from the page" in page.locator('li[data-step="greet"] pre.stdout').text_content()
    finally:
        context.close()


def test_run_again_from_a_step_keeps_what_ran_before_it(
    page, dashboard_url, allowed_dashboard_url, project, home, tmp_path, screenshots
):
    log = tmp_path / "log"
    parent = cli_run(project, home, "appends", f"log={log}")
    assert log.read_text().split() == ["first", "second", "third"]
    page.goto(f"{dashboard_url}runs/{parent}")  # a server without --allow-commands
    assert page.get_by_role("button", name="Run again from here").count() == 0
    page.goto(f"{allowed_dashboard_url}runs/{parent}")
    second = page.locator('li[data-step="second"]')
    second.get_by_role("button", name="Run again from here").click()
    page.wait_for_url(lambda url: "/runs/wf-" in url and parent not in url)
    fork = urlsplit(page.url).path.rsplit("/", 1)[1]
    forked_from = page.locator("#forked-from")
    assert parent in forked_from.text_content() and "second" in forked_from.text_content()
    assert forked_from.locator("a").get_attribute("href") == f"/runs/{parent}"
    page.wait_for_function(
        "() => document.getElementById('run-status').textContent === 'success'",
        timeout=30_000,
    )
    # the kept step shows its recorded result; only the steps from the fork point ran again
    assert page.locator('li[data-step="first"]').get_attribute("data-status") == "success"
    assert log.read_text().split() == ["first", "second", "third", "second", "third"]
    page.screenshot(path=str(screenshots / "run-forked.png"), full_page=True)
    forked_from.locator("a").click()
    page.wait_for_url(f"**/runs/{parent}")
    listed = page.locator("#forks li", has=page.locator(f'a[href="/runs/{fork}"]'))
    assert "second" in listed.text_content()


def test_a_forks_kept_steps_are_drawn_when_they_ran_in_the_parent(
    page, dashboard_url, project, home, tmp_path, screenshots
):
    """The steps a fork kept ran in its parent, before the fork started: their bars sit at
    their recorded times, in the order they ran there (not all at the fork's start), marked
    kept; the fork's own step after them, past the line where the fork started."""
    parent = cli_run(project, home, "appends", f"log={tmp_path / 'log'}")
    forked = cli(project, home, "fork", parent, "--from", "third", "--format", "json")
    fork = json.loads(forked)["workflow_id"]
    page.goto(f"{dashboard_url}runs/{fork}")

    def bar(key: str) -> tuple[float, float, str]:
        found = page.locator(f'li[data-step="{key}"] rect.bar')
        assert found.count() == 1, key
        return (
            float(found.get_attribute("x")),
            float(found.get_attribute("width")),
            found.get_attribute("class"),
        )

    (first, _, first_class), (second, second_width, second_class) = bar("first"), bar("second")
    third, _, third_class = bar("third")
    assert first < second < third, (first, second, third)
    assert "bar-kept" in first_class and "bar-kept" in second_class
    assert "bar-kept" not in third_class
    kept = page.locator("li[data-kept=true]")
    assert [kept.nth(n).get_attribute("data-step") for n in range(kept.count())] == [
        "first",
        "second",
    ]
    assert kept.first.locator(".kept-badge").text_content() == "kept from the parent"
    fork_x = float(page.locator('li[data-step="third"] line.fork-point').get_attribute("x1"))
    assert second + second_width <= fork_x <= third, (second, second_width, fork_x, third)
    page.screenshot(path=str(screenshots / "run-forked-timeline.png"), full_page=True)


@pytest.mark.parametrize("key", ["tick[2]", "check-two"])
def test_run_again_from_a_loop_iteration_or_a_parallel_member(
    page, allowed_dashboard_url, demo_run, home, key
):
    """The button names the step by its key: a loop's iteration, a member of a parallel group."""
    page.goto(f"{allowed_dashboard_url}runs/{demo_run}")
    page.locator(f'li[data-step="{key}"]').get_by_role("button", name="Run again from here").click()
    page.wait_for_url(lambda url: "/runs/wf-" in url and demo_run not in url)
    assert f"{demo_run} at step {key}" in page.locator("#forked-from").text_content()
    fork = urlsplit(page.url).path.rsplit("/", 1)[1]
    history = RunHistory(home=home / "runs")
    try:
        assert history.run(fork)["forked_from"] == {"run_id": demo_run, "step": key}
    finally:
        history.close()
