"""The system (Debian) packages some tests need, and what a test does when one is missing.

On a developer's machine a missing package skips the test, saying what is missing and which
package to install: the README's test command passes with Python alone. Under CI (``CI=true``)
`.ci/run` installs every one of them first, so the same absence fails the test instead: a skip
there would hide a part of the product that CI no longer covers.

``WORKRAIL_TESTS_WITHOUT`` (comma-separated package names, or ``all``) makes the tests behave as
if those packages were missing, to try a fresh machine without uninstalling anything.

Three suites run only when asked (`opt_in`), whatever is installed: each costs far more than a
test of its size should on a developer's run of the README's test command (`SWITCHES` says what),
and `.ci/run` asks for all three.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["PACKAGES", "SWITCHES", "SystemPackage", "chromium", "missing", "opt_in", "require"]


@dataclass(frozen=True)
class SystemPackage:
    apt: str  # what `apt-get install` takes
    what: str  # what the tests use it for, in a few words
    present: Callable[[], bool]


def _postgres_binaries() -> list[Path]:
    return sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))


PACKAGES = {
    "postgresql": SystemPackage(
        "postgresql",
        "a PostgreSQL server for the runs on Postgres",
        lambda: bool(_postgres_binaries()),
    ),
    "bubblewrap": SystemPackage(
        "bubblewrap",
        "bwrap, the sandbox of sandboxed command steps",
        lambda: bool(shutil.which("bwrap")),
    ),
    "chromium": SystemPackage(
        "chromium", "the browser Playwright drives", lambda: bool(shutil.which("chromium"))
    ),
    "libkrb5-dev": SystemPackage(
        "libkrb5-dev",
        "the GSSAPI headers code-server's native modules are built with",
        lambda: Path("/usr/include/gssapi/gssapi.h").exists(),
    ),
    "npm": SystemPackage(
        "nodejs npm",
        "Node.js and npm (the VS Code extension, code-server, MCP clients written in TypeScript)",
        lambda: bool(shutil.which("npm") and shutil.which("node")),
    ),
    "git": SystemPackage(
        "git", "git (pre-commit clones the hook's repository)", lambda: bool(shutil.which("git"))
    ),
}


def _hidden() -> set[str]:
    names = {n.strip() for n in os.environ.get("WORKRAIL_TESTS_WITHOUT", "").split(",")}
    return set(PACKAGES) if "all" in names else names & set(PACKAGES)


def missing(name: str) -> str | None:
    """Why the test cannot use package ``name`` here, or None when it can."""
    package = PACKAGES[name]
    if name not in _hidden() and package.present():
        return None
    return (
        f"needs {package.what}: install the Debian package(s) `{package.apt}` "
        f"(apt-get install {package.apt}; .ci/run installs them)"
    )


def require(*names: str) -> None:
    """Skip the calling test (fail it under CI=true) unless every package in ``names`` is here."""
    reasons = [reason for name in names if (reason := missing(name))]
    if not reasons:
        return
    text = "; ".join(reasons)
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and a system package is missing: {text}", pytrace=False)
    pytest.skip(text)


# Each suite's switch, and why it is asked for rather than run by default.
SWITCHES = {
    "WORKRAIL_TESTS_VSCODE": (
        "the VS Code extension's tests download about 1 GB the first time (code-server 806 MB, "
        "the extension's npm packages 169 MB)"
    ),
    "WORKRAIL_TESTS_POSTGRES": (
        "the tests of the runs on Postgres start a PostgreSQL server and about a hundred processes "
        "that open it (about a tenth of the suite's CPU time)"
    ),
    "WORKRAIL_TESTS_BROWSER": (
        "the dashboard's browser tests drive Chromium through Playwright (a browser per module, "
        "about a minute of CPU time in all)"
    ),
}


def opt_in(switch: str) -> None:
    """Skip the calling test unless ``switch`` is 1 (fail it under CI=true: .ci/run sets it)."""
    if os.environ.get(switch) == "1":
        return
    reason = f"{SWITCHES[switch]}: set {switch}=1 to run them (.ci/run does)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {switch} is not 1: {reason}", pytrace=False)
    pytest.skip(reason)


def chromium() -> str:
    """The path of Debian's chromium (the test skips, or fails under CI, without it)."""
    require("chromium")
    found = shutil.which("chromium")
    assert found
    return found
