"""The dashboard's doors: the token (sign-in cookie or header, nothing served without it), CSRF on
every change, the Host/Origin checks of /mcp, the security headers — on `workrail dashboard` and
on the MCP server's HTTP transport, where the dashboard sits at / beside /mcp."""

from __future__ import annotations

import re
import sys
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.mcp.dashboard.conftest import cli_run, env_for, served, workrail
from tests.mcp.messages import INITIALIZE

pytestmark = pytest.mark.slow

TOKEN = "s3cret-dashboard-token"
DATA_PATHS = (
    "",
    "runs",
    "live/runs",
    "workflows",
    "workflows/dash-demo",
    "runs/{run}",
    "live/runs/{run}",
)


@pytest.fixture(scope="module")
def demo_run(project, home) -> str:
    return cli_run(project, home, "dash-demo")


@pytest.fixture(scope="module")
def locked_url(project, home):
    with served(
        workrail("dashboard", "--port", "0"),
        project,
        env_for(home, WORKRAIL_HTTP_TOKEN=TOKEN),
        r"listening on (http://\S+/)",
    ) as url:
        yield url


@pytest.fixture(scope="module")
def mcp_url(project, home):
    """`workrail-mcp --transport http` with a token: the dashboard's URL from its banner."""
    with served(
        [
            sys.executable,
            "-m",
            "workrail_mcp",
            "--project",
            str(project),
            "--transport",
            "http",
            "--port",
            "0",
        ],
        project,
        env_for(home, WORKRAIL_HTTP_TOKEN=TOKEN),
        r"Dashboard .*: (http://\S+/)",
    ) as url:
        yield url


def _csrf(html: str) -> str:
    return re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)


@pytest.mark.parametrize("which", ["dashboard", "mcp"])
def test_nothing_is_served_without_the_token(which, locked_url, mcp_url, demo_run):
    base = locked_url if which == "dashboard" else mcp_url
    with httpx2.Client(base_url=base, follow_redirects=False) as client:
        for path in DATA_PATHS:
            url = "/" + path.format(run=demo_run)
            for headers in ({}, {"Accept": "text/html"}, {"Authorization": "Bearer wrong"}):
                response = client.get(url, headers=headers)
                assert response.status_code in (401, 303), (url, response.status_code)
                assert demo_run not in response.text and "dash-demo" not in response.text
                if response.status_code == 303:
                    assert urlsplit(response.headers["location"]).path == "/signin"
        refused = client.post(f"/runs/{demo_run}/cancel", data={"csrf": "x"})
        assert refused.status_code == 401
        # with the header, the pages are there
        allowed = client.get("/runs", headers={"Authorization": f"Bearer {TOKEN}"})
        assert allowed.status_code == 200 and demo_run in allowed.text


def test_the_mcp_endpoint_keeps_its_bearer_rule_next_to_the_dashboard(mcp_url):
    with httpx2.Client(base_url=mcp_url) as client:
        body = INITIALIZE
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        assert client.post("/mcp", json=body, headers=headers).status_code == 401
        ok = client.post("/mcp", json=body, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and "workflowlookup" in ok.text
        # the dashboard's sign-in cookie is not a key to /mcp
        client.post("/signin", data={"token": TOKEN, "next": "/"})
        assert client.cookies.get("workrail_session")
        assert client.post("/mcp", json=body, headers=headers).status_code == 401


def test_signing_in_sets_an_httponly_strict_cookie(browser, locked_url, demo_run, screenshots):
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{locked_url}runs/{demo_run}")
        assert urlsplit(page.url).path == "/signin"
        assert page.locator("#token").get_attribute("type") == "password"
        page.screenshot(path=str(screenshots / "signin.png"))
        page.fill("#token", "not it")
        page.get_by_role("button", name="Sign in").click()
        assert "not the one" in page.locator(".problem").text_content()
        page.fill("#token", TOKEN)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"**/runs/{demo_run}")
        assert TOKEN not in page.url
        assert page.locator("#run-status").text_content() == "partial"
        (cookie,) = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert TOKEN not in cookie["value"]
        assert page.evaluate("document.cookie") == ""
        # signing out ends it
        page.get_by_role("button", name="Sign out").click()
        page.goto(f"{locked_url}runs")
        assert urlsplit(page.url).path == "/signin"
    finally:
        context.close()


def test_signing_in_goes_back_only_to_a_page_of_ours(locked_url):
    with httpx2.Client(base_url=locked_url) as client:
        for target, landing in (
            ("/runs?status=failed", "/runs?status=failed"),
            ("//evil.example/x", "/"),
            ("/\\evil.example", "/"),
            ("/\t/evil.example", "/"),
            ("https://evil.example/", "/"),
        ):
            response = client.post("/signin", data={"token": TOKEN, "next": target})
            assert response.status_code == 303
            assert response.headers["location"] == landing, target


def test_state_changes_need_the_csrf_token(locked_url, demo_run):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=locked_url, headers=auth) as client:
        csrf = _csrf(client.get("/workflows/dash-demo").text)
        for data in ({}, {"csrf": "0" * 64}):
            assert client.post(f"/runs/{demo_run}/cancel", data=data).status_code == 403
            assert client.post("/workflows/dash-demo/dry-run", data=data).status_code == 403
        cross = client.post(
            "/workflows/dash-demo/dry-run",
            data={"csrf": csrf},
            headers={"Sec-Fetch-Site": "cross-site"},
        )
        assert cross.status_code == 403
        planned = client.post("/workflows/dash-demo/dry-run", data={"csrf": csrf})
        assert planned.status_code == 200 and "nothing was executed" in planned.text
        # starting a real run needs --allow-commands on the server
        started = client.post("/workflows/dash-demo/run", data={"csrf": csrf})
        assert started.status_code == 403


def test_the_dry_run_plans_the_compiled_workflow(locked_url):
    """A promptBlocks step has no prompt as written: the plan shows the compiled one."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=locked_url, headers=auth) as client:
        csrf = _csrf(client.get("/workflows/blocks-flow").text)
        planned = client.post("/workflows/blocks-flow/dry-run", data={"csrf": csrf})
    assert planned.status_code == 200, planned.text
    assert "## Goal\nPlan the change.\n\n## Procedure\n1. Read\n2. Write" in planned.text


def test_foreign_hosts_and_origins_are_refused_as_on_mcp(locked_url):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=locked_url, headers=auth) as client:
        assert client.get("/runs", headers={"Host": "evil.example:80"}).status_code == 421
        assert client.get("/runs", headers={"Origin": "http://evil.example"}).status_code == 403
        signin = client.post(
            "/signin", data={"token": TOKEN}, headers={"Origin": "http://evil.example"}
        )
        assert signin.status_code == 403


def test_every_response_forbids_inline_script(locked_url):
    with httpx2.Client(base_url=locked_url) as client:
        for path in ("/signin", "/static/dashboard.css", "/runs"):
            headers = client.get(path).headers
            policy = headers["content-security-policy"]
            assert "script-src 'self'" in policy and "unsafe-inline" not in policy
            assert headers["x-frame-options"] == "DENY"
            assert headers["x-content-type-options"] == "nosniff"


def test_the_mcp_server_serves_the_dashboard_at_root(mcp_url, demo_run):
    """The module's `workrail-mcp --transport http` (its token sent as the header): a server of
    its own would tell nothing more and cost a start (the suite's time, docs/benchmarks.md)."""
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=mcp_url, headers=bearer) as client:
        page = client.get("/")
        assert page.status_code == 200 and demo_run in page.text
        assert client.get("/workflows/dash-demo").status_code == 200


def test_the_mcp_servers_dashboard_forks_runs_only_with_allow_commands(mcp_url, demo_run):
    """The dashboard keeps the opt-in of the server that hosts it: `workrail-mcp` without
    --allow-commands starts no run from "Run again from here", and says why."""
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=mcp_url, headers=bearer) as client:
        page = client.get(f"/runs/{demo_run}")
        assert "Run again from here" not in page.text
        refused = client.post(
            f"/runs/{demo_run}/fork", data={"step": "shout", "csrf": _csrf(page.text)}
        )
        assert refused.status_code == 403
        assert "needs a server started with --allow-commands" in refused.text
        assert "Forks" not in client.get(f"/runs/{demo_run}").text


def test_an_invalid_workflows_page_is_a_404_not_a_server_error(dashboard_url):
    """A run's page links to its workflow, whose file may have broken since: the page says the
    workflow is invalid (404) instead of failing with a traceback (500)."""
    answer = httpx2.get(dashboard_url + "workflows/broken-flow", timeout=30)
    assert answer.status_code == 404, answer.text[:500]
    assert "broken-flow" in answer.text and "invalid" in answer.text
