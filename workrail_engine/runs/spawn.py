"""Starting a step's main process: ``os.posix_spawn`` where it can, ``subprocess.Popen`` elsewhere.

Why not ``Popen`` every time: for a step of ``true`` its Python side (the object, its file
objects, the exit stack, the error pipe) cost ≈ 0.09 ms of the run's thread, about as much as the
spawn itself, and a step's whole budget over a bare ``subprocess.run`` is ≈ 0.15 ms
(docs/benchmarks.md, "Speed goals, fourth pass"). ``os.posix_spawn`` does the same work in one C
call (glibc spawns with ``CLONE_VFORK``, as ``Popen`` does here).

What ``Popen`` gives a step that ``posix_spawn`` has to be told, or cannot do:

- A working directory: Python's ``posix_spawn`` has no ``chdir`` action, so it is used only when
  the step runs in the engine's own working directory (``workrail run`` in its project, a server
  started in its project); a step anywhere else is started by ``Popen``.
- The program is looked up in the *step's* ``PATH`` (``Popen`` with ``env=`` does so; glibc's
  ``posix_spawnp`` would search the engine's). Not found here: ``Popen`` starts it, and reports
  the error it always did.
- ``close_fds``: ``Popen`` closes every descriptor above 2 in the child. Python opens its own
  descriptors close-on-exec (PEP 446), but a C library may not: any descriptor found inheritable
  is closed in the child by a file action.
- SIGPIPE and SIGXFSZ, which Python ignores, are back to their default in the child
  (``restore_signals``).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["Spawned", "spawn"]

_DEFAULT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name)
)


class Spawned:
    """The step's main process: its pid, the read ends of its stdout and stderr pipes (the
    caller closes them), and its exit status once waited for (negative: the signal that
    ended it), as ``Popen`` reports it."""

    def __init__(
        self, pid: int, stdout: int, stderr: int, popen: subprocess.Popen[bytes] | None = None
    ) -> None:
        self.pid, self.stdout, self.stderr = pid, stdout, stderr
        self._popen = popen
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._reaped(os.WNOHANG)

    def wait(self) -> int:
        code = self._reaped(0)
        assert code is not None
        return code

    def _reaped(self, options: int) -> int | None:
        if self.returncode is None:
            if self._popen is not None:
                self.returncode = self._popen.wait() if options == 0 else self._popen.poll()
            else:
                try:
                    pid, status = os.waitpid(self.pid, options)
                except ChildProcessError:  # reaped elsewhere: unknown, as Popen says
                    pid, status = self.pid, 0
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def spawn(argv: list[str], cwd: Path, env: Mapping[str, str], *, new_session: bool) -> Spawned:
    """Start ``argv`` in ``cwd`` with exactly ``env``, stdin from ``/dev/null``, stdout and stderr
    into pipes, in a process group of its own (and a session of its own with ``new_session``).
    Raises `OSError` when it cannot be started."""
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    try:
        executable = _executable(argv[0], env) if str(cwd) == os.getcwd() else None
        leaked = _inheritable() if executable is not None else None
        if executable is not None and leaked is not None:
            actions = [
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, stdout_write, 1),
                (os.POSIX_SPAWN_DUP2, stderr_write, 2),
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in leaked),
            ]
            # (setpgroup must be left out, not None, for a session)
            group: dict[str, Any] = {"setsid": True} if new_session else {"setpgroup": 0}
            pid = os.posix_spawn(
                executable,
                argv,
                env,
                file_actions=actions,
                setsigdef=_DEFAULT_SIGNALS,
                **group,
            )
            return Spawned(pid, stdout_read, stderr_read)
        popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout_write,
            stderr=stderr_write,
            close_fds=True,
            start_new_session=new_session,
            process_group=None if new_session else 0,
        )
        return Spawned(popen.pid, stdout_read, stderr_read, popen)
    except BaseException:
        os.close(stdout_read)
        os.close(stderr_read)
        raise
    finally:
        os.close(stdout_write)
        os.close(stderr_write)


def _executable(name: str, env: Mapping[str, str]) -> str | None:
    """The file ``exec`` would run for ``name`` with the step's ``PATH``; None when none is found."""
    if not name or os.sep in name:
        return name or None
    for directory in os.get_exec_path(env):
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def _inheritable() -> list[int] | None:
    """This process's descriptors above 2 that a spawned program would inherit; None where
    ``/proc/self/fd`` cannot be read (Popen is used then)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    found = []
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed by now
                pass
    return found
