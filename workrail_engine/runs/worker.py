"""Handing runs to a live process: the rule for a process that stops executing a run on purpose.

A run must never stay ``running`` without a live process executing it, nor ``waiting`` on a step
whose answer was accepted, for longer than the liveness interval (docs/runs.md, "No run left
behind"). Processes that only look at runs or answer them (`workrail runs`, `run-status`,
`continue`, `cancel`) never execute one: they dequeue nothing. When such a process finds a run
that needs an executor — an answer it just recorded for a run whose process is gone, runs handed
back from a dead process — it starts a **worker**: ``workrail worker``, a detached process that
takes those runs over, executes them to their next wait or end, and exits once nothing is left
for it to do. A server that shuts down with runs in flight starts one too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from . import step_processes

__all__ = ["spawn_worker"]

WORKER_LOG = "worker.log"


def spawn_worker(home: Path, database: str | None, project: Path) -> subprocess.Popen[bytes]:
    """Start ``workrail worker`` for the store at ``home`` (or ``database``) in a session of its
    own (a Ctrl-C in the terminal that started it does not reach it); its log goes to
    ``worker.log`` in the store. Returns its process (reaped by a thread here when it ends:
    ``poll()`` is None while it lives)."""
    env = dict(os.environ)
    if database:
        env["WORKRAIL_DATABASE_URL"] = database
    log = os.open(home / WORKER_LOG, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
    try:
        with step_processes.spawning() as spawning:
            process = _popen(home, project, env, log)
            spawning.started_own(process.pid)
    finally:
        os.close(log)

    def reap() -> None:
        # Reaped when it ends, so that a long-lived parent (a server) keeps no zombie.
        process.wait()
        step_processes.ended_own(process.pid)

    threading.Thread(target=reap, name="workrail-worker-reaper", daemon=True).start()
    return process


def _popen(home: Path, project: Path, env: dict[str, str], log: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli.app import main; main()",
            "worker",
            "--store",
            str(home),
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
        close_fds=True,
    )
