"""The packaged extension inside a real VS Code: code-server in Debian's Chromium, driven by Playwright.

code-server 4.139.1 is VS Code 1.139.1 served to a browser. The test installs the `.vsix` built from
editors/vscode, points `workrail.server.path` at this environment's `workrail-lsp`, opens a
workspace of workflow files and checks what a user sees: each problem once in the Problems panel
(ours, not also VS Code's JSON service), our hover, our completion, a quick fix that edits the
file, "WorkRail: Validate workspace", and the message for a missing server.

Only with WORKRAIL_TESTS_VSCODE=1: the first run fetches about 1 GB (tests/editors/vscode_build.py).
code-server is installed from the npm registry on first use (tests/editors/vscode_build.py); the
browser is Debian's `chromium` package (Playwright's own browser download cannot work here).
Without chromium, npm or (for code-server's first install) libkrb5-dev the tests skip, naming the
package; under CI=true that fails them (tests/system_packages.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from system_packages import chromium, require
from vscode_build import code_server, run

if TYPE_CHECKING:
    from playwright.sync_api import Locator, LocatorAssertions, Page

pytestmark = pytest.mark.slow


def expect(locator: Locator) -> LocatorAssertions:
    """playwright's `expect`, imported when a test first asserts: every pytest-xdist worker
    collects this module, opted in or not, and importing playwright cost each ≈ 0.14 s of CPU."""
    from playwright.sync_api import expect as playwright_expect

    # On a loaded 2-core machine the first completion or code action (the server loads its tree
    # and checkers on first use) can take seconds; a missing item still fails, only later.
    playwright_expect.set_options(timeout=30_000)
    return playwright_expect(locator)


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Where the Problems panel's screenshot goes (docs/images/vscode-problems.png is one of them).
SCREENSHOTS = Path(os.environ.get("WORKRAIL_SCREENSHOTS", tempfile.gettempdir()))

BROKEN = """{
  "id": "broken-flow",
  "name": "Broken",
  "description": "A workflow with a typo in a condition",
  "steps": [
    {
      "id": "one",
      "title": "One",
      "prompt": "Do it",
      "runCondition": {"var": "mode", "equalz": "fast"}
    }
  ]
}
"""
YAML_FLOW = """id: yaml-flow
name: YAML flow
description: A workflow written in YAML
steps:
  - id: first
    title: First
    promt: Do the first thing
"""
SETTINGS = {
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "workbench.tips.enabled": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": "off",  # the form VS Code would otherwise rewrite the file into
    "update.mode": "none",
    "chat.disableAIFeatures": True,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def vscode(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """code-server serving a workspace of workflow files, with the extension installed."""
    require("chromium")
    command = code_server()
    home = tmp_path_factory.mktemp("code-server")
    extensions, user = home / "extensions", home / "user"
    workspace = home / "workspace"
    (workspace / "workflows").mkdir(parents=True)
    (workspace / "workflows" / "broken.json").write_text(BROKEN, encoding="utf-8")
    (workspace / "workflows" / "yaml-flow.yaml").write_text(YAML_FLOW, encoding="utf-8")
    (user / "User").mkdir(parents=True)
    settings = user / "User" / "settings.json"
    server = Path(sys.executable).parent / "workrail-lsp"
    settings.write_text(json.dumps({**SETTINGS, "workrail.server.path": str(server)}))
    common = ["--extensions-dir", str(extensions), "--user-data-dir", str(user)]
    run([*command, *common, "--install-extension", str(built / "workrail.vsix")], home)
    port = free_port()
    log = (home / "code-server.log").open("w")
    process = subprocess.Popen(
        [*command, *common, "--bind-addr", f"127.0.0.1:{port}", "--auth", "none",
         "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
         str(workspace)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert process.poll() is None, (home / "code-server.log").read_text()
            time.sleep(0.2)
    try:
        yield {
            "url": f"http://127.0.0.1:{port}/?folder={workspace}",
            "workspace": workspace,
            "settings": settings,
            "log": home / "code-server.log",
        }
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def page(vscode: dict[str, Path]) -> Iterator[Page]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(30_000)
        page.goto(str(vscode["url"]))
        page.get_by_role("treeitem", name="workflows").click()
        yield page
        browser.close()


def open_file(page: Page, name: str) -> None:
    page.get_by_role("treeitem", name=name).click()
    expect(page.locator(".tab", has_text=name)).to_be_visible()
    page.locator(".monaco-editor .view-lines").first.click()


def go_to(page: Page, line: int, column: int) -> None:
    page.keyboard.press("Control+g")
    page.keyboard.type(f"{line}:{column}")
    page.keyboard.press("Enter")
    # Keys pressed before the go-to box has closed and the cursor has moved land in the box (an
    # Enter swallowed there put the typed quote on the wrong line): wait for both.
    expect(page.locator(".quick-input-widget")).to_be_hidden()
    expect(page.get_by_role("button", name=f"Ln {line}, Col {column}")).to_be_visible()


def run_command(page: Page, title: str) -> None:
    page.keyboard.press("F1")
    page.keyboard.type(title)
    page.locator(".quick-input-list .monaco-list-row", has_text=title).first.click()


def problem_rows(page: Page) -> list[str]:
    """The Problems panel's problem rows (not the per-file header rows)."""
    rows = page.locator(".markers-panel .monaco-list-row").all_inner_texts()
    return [r for r in rows if "[Ln " in r]


def wait_for_problems(page: Page, *codes: str) -> list[str]:
    deadline = time.monotonic() + 45
    rows: list[str] = []
    while time.monotonic() < deadline:
        rows = problem_rows(page)
        if all(any(code in r for r in rows) for code in codes):
            page.wait_for_timeout(1500)  # a second voice would speak by now
            return problem_rows(page)
        page.wait_for_timeout(250)
    raise AssertionError(f"problems {codes} never appeared; the panel shows {rows}")


def test_each_problem_is_reported_once_and_only_by_workrail(page: Page):
    open_file(page, "broken.json")
    page.keyboard.press("Control+Shift+m")
    rows = wait_for_problems(page, "WR102", "WR601")
    assert len(rows) == len(set(rows)), rows
    assert all("workrail" in r for r in rows), rows  # VS Code's JSON service says nothing
    assert not [r for r in rows if "is not allowed" in r], rows
    assert any("did you mean 'equals'" in r for r in rows)
    expect(page.locator(".statusbar").get_by_text("WorkRail workflow (JSON)")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "vscode-problems.png")


def test_yaml_workflows_get_diagnostics_from_our_server(page: Page):
    open_file(page, "yaml-flow.yaml")
    rows = wait_for_problems(page, "WR102")
    assert any("promt" in r and "workrail" in r for r in rows), rows
    expect(page.locator(".statusbar").get_by_text("WorkRail workflow (YAML)")).to_be_visible()
    open_file(page, "broken.json")


def test_hover_on_run_condition_shows_our_text_once(page: Page):
    go_to(page, 10, 10)
    page.keyboard.press("Control+k")
    page.keyboard.press("Control+i")
    hover = page.locator(".monaco-hover:visible .hover-contents")
    expect(hover.first).to_contain_text("Run condition")
    assert hover.count() == 1, hover.all_inner_texts()
    assert "the step is skipped" in hover.first.inner_text()
    page.keyboard.press("Escape")


def _complete_a_key_in_the_step(page: Page, unclosed: bool) -> None:
    go_to(page, 9, 22)  # the end of `"prompt": "Do it",`
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    try:
        page.keyboard.type('"')
        if unclosed:  # the quote as typed where it is not auto-closed (or the closing one removed)
            page.keyboard.press("Shift+End")
            page.keyboard.press("Delete")
        page.keyboard.press("Control+Space")
        suggestions = page.locator(".suggest-widget .monaco-list-row")
        expect(suggestions.first).to_be_visible()
        page.keyboard.type("valid")
        expect(suggestions.first).to_contain_text("valid")
        # Each row's own label: a row's aria-label carries the item's documentation when VS Code
        # shows the details, and hasValidation's mentions validationCriteria.
        labels = suggestions.locator(".label-name").all_inner_texts()
        assert labels.count("validationCriteria") == 1, labels
    finally:  # leave the document as the next tests expect it
        page.keyboard.press("Escape")
        for _ in range(4 if unclosed else 3):
            page.keyboard.press("Control+z")


def test_completion_in_a_step_offers_validation_criteria_once(page: Page):
    _complete_a_key_in_the_step(page, unclosed=False)


def test_completion_after_a_quote_not_closed_yet(page: Page):
    # The server read the unclosed string up to the next quote, a line below, and answered with
    # that two-line range: VS Code drops items whose range leaves the cursor's line and shows
    # "No suggestions." (what failed under load, when the typed quote was not auto-closed).
    _complete_a_key_in_the_step(page, unclosed=True)


def test_quick_fix_replaces_the_misspelt_operator(page: Page, vscode: dict[str, Path]):
    path = vscode["workspace"] / "workflows" / "broken.json"
    go_to(page, 10, 40)
    page.keyboard.press("Control+.")
    fix = page.locator(".action-widget .monaco-list-row", has_text="equals").first
    expect(fix).to_be_visible()
    fix.click()
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 10
    while '"equals": "fast"' not in path.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    text = path.read_text()
    assert '"equals": "fast"' in text and "equalz" not in text
    assert json.loads(text)["steps"][0]["runCondition"] == {"var": "mode", "equals": "fast"}


def test_validate_workspace_reports_the_workspace_files(page: Page):
    run_command(page, "WorkRail: Validate workspace")
    toast = page.locator(".notification-toast", has_text="WorkRail: 2 workflow files")
    expect(toast).to_be_visible()
    output = page.locator(".output-view, .view-lines", has_text="yaml-flow.yaml")
    expect(output.first).to_be_visible()


def test_a_missing_server_gives_a_clear_message(page: Page, vscode: dict[str, Path]):
    # Edited as a user would, in VS Code's own settings editor (code-server does not notice an
    # outside edit of its settings file): the extension restarts its server on a change of
    # workrail.server.* and finds no executable there.
    settings = json.loads(vscode["settings"].read_text())
    settings["workrail.server.path"] = "/nonexistent/workrail-lsp"
    run_command(page, "Preferences: Open User Settings (JSON)")
    editor = page.locator(".monaco-editor", has_text="workbench.startupEditor").last
    expect(editor).to_be_visible()
    editor.locator(".view-lines").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(json.dumps(settings))
    page.keyboard.press("Control+Shift+End")  # whatever auto-closing added after the cursor
    page.keyboard.press("Delete")
    page.keyboard.press("Control+s")
    toast = page.locator(".notification-toast", has_text="cannot find the language server")
    expect(toast).to_be_visible(timeout=30_000)
    text = toast.inner_text()
    assert "/nonexistent/workrail-lsp" in text and "workrail.server.pythonPath" in text
    assert not re.search(r"\bat \S+ \(|Error:|\.js:\d+", text), text  # no stack trace
    assert (
        json.loads(vscode["settings"].read_text())["workrail.server.path"]
        == "/nonexistent/workrail-lsp"
    )
