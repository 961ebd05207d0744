"""Runs as DBOS workflows, with command steps checkpointed in the step journal (docs/runs.md).

Importing this package imports DBOS (about half a second), so only the service imports it, and
only once a run is asked for. The store is one database: DBOS's system tables plus ours (the
journal, the member queue, the sessions) — SQLite under ``WORKRAIL_HOME`` by default, Postgres
when ``WORKRAIL_DATABASE_URL`` names one. Values are stored as JSON (DBOS's portable serializer),
so what is in the database is readable — and the tests can prove that no secret is in it.

Split by job, as DBOS's own package is:

- ``runtime``: DBOS in this process — one `DurableRuntime` per process (`launch`, `current`,
  `running`), its launch and shutdown, the run's DBOS workflow (`workrail_run`) and every DBOS
  call the service makes.
- ``recovery``: the runs of dead processes handed to living ones; a worker started when a run
  needs a process to act on it (`hand_over`).
- ``progress``: the runs executing here, as a waiter here watches them.
- ``effects``: the walk's side effects, each one durable (`RunEffects`).
- ``members``: a parallel group's members — threads here on SQLite, the member queue on Postgres.
"""

from .recovery import APP_VERSION
from .runtime import DurableRuntime, NotLaunched, current, launch, running, workrail_run

__all__ = [
    "APP_VERSION",
    "DurableRuntime",
    "NotLaunched",
    "current",
    "launch",
    "running",
    "workrail_run",
]
