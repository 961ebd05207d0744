"""Ending the `workrail` process without freeing, object by object, what a command built.

`workrail validate` keeps every document it checks until the report is written. Freeing them one
object at a time, then the interpreter's modules, costs ~3 % of its instructions on 1,000 files,
for memory the operating system takes back at once when the process ends. So the command hands
what it built to `keep_until_exit`, and the console script's entry point (never click's
``CliRunner`` or another caller inside a longer-lived process) ends with `exit_without_teardown`:
the standard streams flushed, then `os._exit` — but only when nothing else is owed at exit: no
`atexit` handler registered (logging's, a run's) and no other thread.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

__all__ = ["exit_without_teardown", "keep_until_exit"]

# What the last command built; one command's worth at most, should a caller run many in-process.
_kept: list[object] = []


def keep_until_exit(built: object) -> None:
    """Keep ``built`` alive until the process ends (in place of what the previous call kept)."""
    _kept[:] = [built]


def exit_without_teardown(code: int) -> None:
    """End the process now with ``code`` if a command kept what it built and nothing else is
    owed at exit; otherwise return, for the usual exit. Standard output and error are flushed
    first: a flush that fails (a closed pipe) returns too, so that Python reports it as usual."""
    if not _kept or _exit_work_pending():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _exit_work_pending() -> bool:
    # atexit keeps no public count of its handlers; without this private one, assume some.
    handlers = getattr(atexit, "_ncallbacks", None)
    return handlers is None or handlers() > 0 or threading.active_count() > 1
