"""DBOS's log records about runs, each as one line: no traceback for a run that ended badly.

DBOS logs an exception that ends a background workflow with its traceback, and a cancelled run
twice (the run "was cancelled during execution", then the awaited cancellation with a
traceback). A cancel, a timeout or a failing run is an outcome the caller reads in the run's
status; on stderr it gets one line saying what happened.
"""

from __future__ import annotations

import logging

__all__ = ["OneLineRunLogs", "install"]

# By name: these live in a private module of DBOS, and a renamed class only costs the tidy line.
_CANCELLATIONS = frozenset({"DBOSAwaitedWorkflowCancelledError", "DBOSWorkflowCancelledError"})
_CANCELLED_DURING = "was cancelled during execution"


class OneLineRunLogs(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _CANCELLED_DURING in str(record.msg):
            return False  # the awaited cancellation below says it once
        if not record.exc_info or record.exc_info[1] is None:
            return True
        error = record.exc_info[1]
        if type(error).__name__ in _CANCELLATIONS:
            run_id = getattr(error, "workflow_id", None)
            record.msg = f"run {run_id} was cancelled" if run_id else "a run was cancelled"
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        else:
            record.msg = f"{record.getMessage()} {type(error).__name__}: {error}"
        record.args, record.exc_info, record.exc_text = None, None, None
        return record.levelno >= logging.getLogger("dbos").getEffectiveLevel()


def install() -> None:
    """On DBOS's logger: its records, before any handler formats them (idempotent)."""
    logger = logging.getLogger("dbos")
    if not any(isinstance(f, OneLineRunLogs) for f in logger.filters):
        logger.addFilter(OneLineRunLogs())
