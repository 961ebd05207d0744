"""A test whose system package is missing skips, naming the package; under CI=true it fails.

Run through a real pytest process on a small test file, with the package hidden both ways a fresh
machine hides it: not on PATH, and named in WORKRAIL_TESTS_WITHOUT."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from system_packages import PACKAGES, SWITCHES, require

HERE = Path(__file__).resolve().parent
NEEDS_BWRAP = """
from system_packages import require

def test_sandbox():
    require("bubblewrap")
"""


def pytest_on(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_needs_bwrap.py").write_text(NEEDS_BWRAP, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    # No plugin of this environment's is loaded: the file needs none, and their imports
    # (pytest-lsp's lsprotocol, playwright, hypothesis …) were 2-3 s of CPU of each such run.
    environment.update(PYTHONPATH=str(HERE), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist", "."],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


# The suite's own pytest processes below run tests that need no language-server client: its plugin
# imports lsprotocol's classes, ≈ 0.6 s of CPU of each such process.
WITHOUT_UNUSED_PLUGINS = ("-p", "no:pytest-lsp")

HIDDEN = [
    pytest.param({"WORKRAIL_TESTS_WITHOUT": "bubblewrap"}, id="named"),
    pytest.param({"PATH": "/nonexistent"}, id="not-on-path"),
]


@pytest.mark.parametrize("hidden", HIDDEN)
def test_a_missing_package_skips_with_the_package_to_install(tmp_path, hidden):
    done = pytest_on(tmp_path, **hidden)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout, done.stdout
    assert "apt-get install bubblewrap" in done.stdout, done.stdout


@pytest.mark.parametrize("hidden", HIDDEN)
def test_under_ci_a_missing_package_fails_the_run(tmp_path, hidden):
    done = pytest_on(tmp_path, CI="true", **hidden)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout and "skipped" not in done.stdout, done.stdout
    assert "CI=true and a system package is missing" in done.stdout, done.stdout
    assert "apt-get install bubblewrap" in done.stdout, done.stdout


def test_a_present_package_runs_the_test(tmp_path):
    require("bubblewrap")  # without it: a skip here, a failure under CI=true (CI installs it)
    done = pytest_on(tmp_path, CI="true")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_this_modules_own_need_of_a_package_fails_under_ci(tmp_path):
    """The test above needs bubblewrap too; under CI=true its absence fails it, never skips it."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0",
         *WITHOUT_UNUSED_PLUGINS, f"{__file__}::test_a_present_package_runs_the_test"],
        cwd=tmp_path,
        env={**os.environ, "CI": "true", "WORKRAIL_TESTS_WITHOUT": "bubblewrap",
             "PYTEST_ADDOPTS": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout + done.stderr
    assert "skipped" not in done.stdout, done.stdout


def test_every_package_names_what_apt_installs_and_ci_installs_it():
    ci = (HERE.parent / ".ci" / "run").read_text(encoding="utf-8")
    development = (HERE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    for package in PACKAGES.values():
        for name in package.apt.split():
            assert f"missing+=({name}" in ci or f" {name})" in ci, name
            assert f"`{name}`" in development, name


def test_every_switch_is_set_by_ci_and_told_in_the_docs():
    ci = (HERE.parent / ".ci" / "run").read_text(encoding="utf-8")
    development = (HERE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    for switch in SWITCHES:
        assert f"export {switch}=1" in ci, switch
        assert f"`{switch}=1`" in development, switch


# A real test of each opt-in suite, all run in one pytest process without their switches: each
# skips naming its switch, or under CI=true fails; nothing is started either way (the switch is
# asked before the server, the browser or npm — hidden as well, so nothing is downloaded whatever
# the outcome).
OPT_IN_TESTS = {
    "WORKRAIL_TESTS_POSTGRES": (
        "engine/runs/test_pg_prepared.py::test_an_error_is_psycopgs_own_and_leaves_the_connection_usable"
    ),
    "WORKRAIL_TESTS_BROWSER": (
        "mcp/dashboard/test_dashboard_browser.py::test_the_run_page_lists_steps_with_statuses"
    ),
    "WORKRAIL_TESTS_VSCODE": "editors/test_editors_vscode.py::test_vsix_manifest",
}


def pytest_without_the_switches(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A real pytest process on a test of each opt-in suite, every switch unset."""
    unset = ("CI", "PYTEST_ADDOPTS", *SWITCHES)
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    environment.update(WORKRAIL_TESTS_WITHOUT="npm", **env)
    tests = [str(HERE / test) for test in OPT_IN_TESTS.values()]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-n", "0",
         *WITHOUT_UNUSED_PLUGINS, *tests],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


def test_every_switch_has_a_test_of_its_suite_here():
    assert set(OPT_IN_TESTS) == set(SWITCHES)


def test_without_their_switches_the_opt_in_suites_skip_naming_them(tmp_path):
    done = pytest_without_the_switches(tmp_path)
    skipped = f"{len(OPT_IN_TESTS)} skipped"
    assert done.returncode == 0 and skipped in done.stdout, done.stdout + done.stderr
    for switch in OPT_IN_TESTS:
        assert f"set {switch}=1 to run them" in done.stdout, (switch, done.stdout)
    assert "1 GB" in done.stdout, done.stdout  # what the VS Code switch spares a first run


def test_under_ci_the_opt_in_suites_without_their_switches_fail(tmp_path):
    done = pytest_without_the_switches(tmp_path, CI="true")
    # each switch is asked by a fixture: pytest counts its failure as an error
    errors = f"{len(OPT_IN_TESTS)} errors"
    assert done.returncode == 1 and errors in done.stdout, done.stdout + done.stderr
    assert "skipped" not in done.stdout, done.stdout
    for switch in OPT_IN_TESTS:
        assert f"CI=true and {switch} is not 1" in done.stdout, (switch, done.stdout)
