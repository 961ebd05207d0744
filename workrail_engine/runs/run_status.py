"""A run's status from DBOS's status of its workflow: the one mapping, in Python and in SQL.

DBOS knows whether the workflow is in flight, ended, failed or cancelled; the run itself reports
the rest in its ``state`` event (running or waiting while in flight; success, failed or partial
in the summary it ends with, which is also the workflow's output). `RunService` maps one run at
a time in Python; `RunHistory` filters and counts thousands in SQL (`status_sql`): both read the
same tables below, and tests/engine/runs/test_run_status.py runs the SQL against the Python for
every DBOS status.

Plain strings, no DBOS import: the history reads the store without loading DBOS.
"""

from __future__ import annotations

from .run_results import ACTIVE, TERMINAL

__all__ = [
    "CANCELLED",
    "DBOS_STATUSES",
    "FAILED",
    "IN_FLIGHT",
    "PENDING",
    "run_status",
    "status_sql",
]

# DBOS's statuses of a workflow not ended yet (DBOS's `WorkflowStatusString`; DELAYED: enqueued
# with a delay).
PENDING = "PENDING"  # executing (or waiting for the agent), in some process
IN_FLIGHT = (PENDING, "ENQUEUED", "DELAYED")
CANCELLED = "CANCELLED"
FAILED = ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")  # the workflow raised, or kept crashing
SUCCESS = "SUCCESS"  # the workflow returned the run's summary: the summary says how the run ended
DBOS_STATUSES = (*IN_FLIGHT, SUCCESS, CANCELLED, *FAILED)

# The DBOS statuses that decide the run's status on their own.
_DECIDED = {CANCELLED: "cancelled", **dict.fromkeys(FAILED, "failed")}
# What an in-flight run may report of itself (a summary written just before DBOS records the
# workflow's end counts already); anything else reads as running.
_REPORTABLE = ACTIVE + TERMINAL


def run_status(dbos_status: str, reported: object) -> str:
    """The run's status: ``reported`` is the status the run last reported of itself (its state
    event's, or its summary's once ended; None when it has reported none)."""
    decided = _DECIDED.get(dbos_status)
    if decided is not None:
        return decided
    if dbos_status in IN_FLIGHT:
        return reported if isinstance(reported, str) and reported in _REPORTABLE else "running"
    return "failed" if reported is None else str(reported)


def status_sql(dbos_status: str, reported: str) -> str:
    """`run_status` as an SQL expression (SQLite and Postgres) of the columns ``dbos_status``
    and ``reported`` (a text expression, NULL when the run reported nothing)."""
    decided = "".join(
        f" WHEN {dbos_status} IN ({_sql_list(statuses)}) THEN '{ours}'"
        for ours, statuses in _by_outcome().items()
    )
    return (
        f"CASE{decided}"
        f" WHEN {dbos_status} IN ({_sql_list(IN_FLIGHT)}) THEN"
        f" (CASE WHEN {reported} IN ({_sql_list(_REPORTABLE)}) THEN {reported} ELSE 'running' END)"
        f" ELSE COALESCE({reported}, 'failed') END"
    )


def _by_outcome() -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for dbos, ours in _DECIDED.items():
        grouped.setdefault(ours, []).append(dbos)
    return grouped


def _sql_list(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)
