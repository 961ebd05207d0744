"""Where a command step may run: its ``cwd`` confined to the project, optionally inside bubblewrap.

The confinement is checked on the resolved path, so neither ``..`` nor a symlink that points out
of the project lets a step run elsewhere. The sandbox (`bwrap`, Debian package ``bubblewrap``)
mounts the system read-only, the project read-write, a private ``/tmp``, and no network.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from ..errors import SecurityViolation

__all__ = [
    "SandboxUnavailable",
    "bubblewrap_argv",
    "check_sandbox",
    "minimal_environment",
    "resolve_cwd",
]


class SandboxUnavailable(SecurityViolation):
    """A step asked for the sandbox and bubblewrap cannot provide it here."""


@functools.lru_cache(maxsize=32)
def _resolved(project: Path) -> Path:
    return project.resolve()  # once per project: resolving costs more than a step's bookkeeping


def resolve_cwd(project: Path, cwd: str | None) -> Path:
    """The directory a step runs in; raises `SecurityViolation` when it would leave ``project``."""
    root = _resolved(project)
    if not cwd:
        return root
    relative = PurePosixPath(cwd)
    if relative.is_absolute() or ".." in relative.parts:
        raise SecurityViolation(
            f"cwd {cwd!r} must be a relative path inside the project, without '..'", cwd=cwd
        )
    target = (root / relative).resolve()
    if target != root and root not in target.parents:
        raise SecurityViolation(f"cwd {cwd!r} leaves the project (through a symlink)", cwd=cwd)
    if not target.is_dir():
        raise SecurityViolation(f"cwd {cwd!r} is not a directory of the project", cwd=cwd)
    return target


@functools.lru_cache(maxsize=1)
def _probe(bwrap: str) -> str | None:
    """None when bubblewrap works here, else why not (user namespaces are often disabled)."""
    try:
        probe = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if probe.returncode != 0:
        return probe.stderr.decode(errors="replace").strip() or f"exit status {probe.returncode}"
    return None


def check_sandbox() -> str:
    """The path of a working ``bwrap``; raises `SandboxUnavailable` with the reason and the fix."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(
            "sandbox requested but bubblewrap is not installed (install the Debian package "
            "'bubblewrap', or run without sandbox)"
        )
    problem = _probe(bwrap)
    if problem is not None:
        raise SandboxUnavailable(f"sandbox requested but bubblewrap cannot run here: {problem}")
    return bwrap


def bubblewrap_argv(bwrap: str, project: Path, cwd: Path, argv: list[str]) -> list[str]:
    root = str(project.resolve())
    return [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        root,
        root,
        "--unshare-all",
        "--die-with-parent",
        "--chdir",
        str(cwd),
        "--",
        *argv,
    ]


def minimal_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The part of the server's environment a step inherits: enough to find and run programs.

    Everything else (tokens, cloud credentials, ...) stays out unless the workflow declares it as
    a secret or sets it in ``run.env``.
    """
    source = os.environ if environ is None else environ
    keep = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "SHELL")
    env = {key: source[key] for key in keep if key in source}
    env.update({key: value for key, value in source.items() if key.startswith("LC_")})
    env.setdefault("PATH", os.defpath)
    return env
