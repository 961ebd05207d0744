"""The VS Code tests are opt-in: without WORKRAIL_TESTS_VSCODE=1 they skip naming the switch, and
under CI=true (which sets it) its absence fails them rather than skipping quietly.

Run through a real pytest process on the extension's build test, with npm hidden
(WORKRAIL_TESTS_WITHOUT) so that nothing is downloaded whatever the outcome."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_system_packages import pytest_without
from vscode_build import VSCODE_SWITCH

BUILD_TEST = Path(__file__).with_name("test_editors_vscode.py")


def pytest_without_the_switch(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return pytest_without(
        VSCODE_SWITCH,
        f"{BUILD_TEST}::test_vsix_manifest",
        tmp_path,
        WORKRAIL_TESTS_WITHOUT="npm",
        **env,
    )


def test_without_the_switch_the_vscode_tests_skip_naming_it(tmp_path):
    done = pytest_without_the_switch(tmp_path)
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout + done.stderr
    assert f"set {VSCODE_SWITCH}=1" in done.stdout and "1 GB" in done.stdout, done.stdout


def test_under_ci_the_missing_switch_fails_them(tmp_path):
    done = pytest_without_the_switch(tmp_path, CI="true")
    # the check is in the fixture that builds the extension: pytest counts it as an error
    assert done.returncode == 1 and "1 error" in done.stdout, done.stdout + done.stderr
    assert "skipped" not in done.stdout, done.stdout
    assert f"CI=true and {VSCODE_SWITCH} is not 1" in done.stdout, done.stdout


def test_ci_sets_the_switch():
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    assert f"export {VSCODE_SWITCH}=1" in ci
