"""Wheels of the project's dependencies, built once per machine, for the tests that install the
project into a fresh environment of their own (pre-commit's, in tests/test_pre_commit.py).

pip installing the project from the package index spends most of its time asking the index about
each of its ≈ 45 dependencies (over the network, one request each) and compiling every installed
module to bytecode (≈ 2,000 files): 35 s of wall and 16 s of CPU on a quiet 2-core machine. From
a directory of wheels (`PIP_NO_INDEX`, `PIP_FIND_LINKS`) without the bytecode (`PIP_COMPILE=0`)
the same install is ≈ 10 s of wall and 4 s of CPU. The project itself is still built from its
source tree by pip, through its build backend, as pre-commit does it.

The wheels are those of the versions installed in the test environment (so they follow it: a
fresh `.venv` with newer releases gets a new wheel directory), built with the ordinary
`pip wheel` into a directory named by what they were built from, made once
(tests/machine_cache.py): another pytest-xdist worker or another test run
waits and reuses them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

from machine_cache import made_once

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("WORKRAIL_TEST_CACHE", "/tmp/workrail-test-cache"))


def install_from_wheels(root: Path = ROOT) -> dict[str, str]:
    """The environment variables under which `pip install <root>` (in any environment of this
    Python) takes every dependency from `wheel_directory` and writes no bytecode."""
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheel_directory(root)),
        "PIP_COMPILE": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def wheel_directory(root: Path = ROOT) -> Path:
    """A directory holding a wheel of every build requirement and dependency of `root`'s project
    (and theirs), built on first use."""
    build, runtime = _requirements(root)
    pins = _installed_versions()
    key = json.dumps([build, runtime, pins, sys.implementation.cache_tag, sysconfig.get_platform()])

    def make(staging: Path) -> None:
        constraints = staging / "constraints.txt"
        constraints.write_text("".join(f"{name}=={version}\n" for name, version in pins))
        # Resolved apart, as pip resolves them apart: the build backend in its own environment,
        # the dependencies in the project's.
        _pip_wheel(staging, build)
        _pip_wheel(staging, runtime, "--constraint", str(constraints))
        constraints.unlink()

    return made_once(CACHE / "wheels" / hashlib.sha256(key.encode()).hexdigest()[:16], make)


def _requirements(root: Path) -> tuple[list[str], list[str]]:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(project["build-system"]["requires"]), list(project["project"]["dependencies"])


def _installed_versions() -> list[tuple[str, str]]:
    """This environment's distributions and versions (the project's own editable one left out)."""
    found = {
        re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower(): dist.version
        for dist in metadata.distributions()
        if dist.metadata["Name"]
    }
    found.pop("workrail-kit", None)
    return sorted(found.items())


def _pip_wheel(into: Path, requirements: list[str], *options: str) -> None:
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(into)]
    command += ["--cache-dir", str(CACHE / "pip"), *options, *requirements]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}"
