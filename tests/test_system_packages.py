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
         f"{__file__}::test_a_present_package_runs_the_test"],
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


# A real test of each opt-in suite, run without its switch: it skips naming it, or under CI=true
# fails; nothing is started either way (the switch is asked before the server or the browser).
OPT_IN_TESTS = [
    pytest.param(
        "WORKRAIL_TESTS_POSTGRES",
        "engine/runs/test_pg_prepared.py::test_an_error_is_psycopgs_own_and_leaves_the_connection_usable",
        id="postgres",
    ),
    pytest.param(
        "WORKRAIL_TESTS_BROWSER",
        "mcp/dashboard/test_dashboard_browser.py::test_the_run_page_lists_steps_with_statuses",
        id="browser",
    ),
]


def pytest_without(
    switch: str, test: str, tmp_path: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """A real pytest process on ``test`` (under tests/, or a path) with ``switch`` unset."""
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", switch, "PYTEST_ADDOPTS")}
    environment.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            str(HERE / test),
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("switch", "test"), OPT_IN_TESTS)
def test_an_opt_in_suite_skips_without_its_switch_naming_it(tmp_path, switch, test):
    done = pytest_without(switch, test, tmp_path)
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout + done.stderr
    assert f"set {switch}=1 to run them" in done.stdout, done.stdout


@pytest.mark.parametrize(("switch", "test"), OPT_IN_TESTS)
def test_under_ci_an_opt_in_suite_without_its_switch_fails(tmp_path, switch, test):
    done = pytest_without(switch, test, tmp_path, CI="true")
    # the switch is asked by a fixture: pytest counts its failure as an error
    assert done.returncode == 1 and "1 error" in done.stdout, done.stdout + done.stderr
    assert "skipped" not in done.stdout, done.stdout
    assert f"CI=true and {switch} is not 1" in done.stdout, done.stdout
