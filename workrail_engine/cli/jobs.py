"""How many processes `workrail validate` shares a batch's files with (`--jobs`); the sharing
itself is the engine's (`lint.worker_processes`). Kept apart from it so that the command line's
options import nothing of the engine."""

from __future__ import annotations

import os

__all__ = ["MAX_PROCESSES", "MIN_FILES_FOR_PROCESSES", "processes_for", "usable_cpus"]

MIN_FILES_FOR_PROCESSES = 300
"""Fewer files than this are checked in one process. Sharing costs ~45 ms of CPU and of wall
time whatever the batch (importing `concurrent.futures` and `multiprocessing`, the fork, the
first task's copied pages, the pool's shutdown: `--jobs 2` against `--jobs 1` on three files),
and a second core saves at most half of ~0.45 ms a file. Measured on 200 and 400 files of
bench/validate.py's `--distinct` corpus, medians of nine runs taking turns, load 1.0: one
process 0.348 and 0.457 s, two 0.358 and 0.416 s."""

MAX_PROCESSES = 64
"""The most processes one batch is shared by (`--jobs`): each is a fork of the parent, with its
own copy of every page it writes; past the CPUs a machine has, more only cost memory."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def processes_for(file_count: int) -> int:
    """How many processes check ``file_count`` files best: one below `MIN_FILES_FOR_PROCESSES`,
    else one per usable CPU (at most `MAX_PROCESSES`)."""
    return 1 if file_count < MIN_FILES_FOR_PROCESSES else min(usable_cpus(), MAX_PROCESSES)
