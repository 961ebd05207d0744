"""The orchestrator: durable runs of workflows (docs/runs.md).

`RunService` is the facade the MCP tools and the CLI use. Nothing here imports DBOS at import
time; the durable layer is loaded when the first run is started or read.
"""

from typing import TYPE_CHECKING

from ..lazy_names import names_loaded_on_first_use

if TYPE_CHECKING:
    from .command_process import CommandOutcome, CommandSpec, run_command
    from .params import check_parameters, refuse_undeclared
    from .plan import plan_run
    from .resolve import resolve_workflow, store_home
    from .run_results import ACTIVE, RUN_STATUSES, STEP_STATUSES, TERMINAL
    from .secrets import MASK, SecretSet
    from .service import RunOptions, RunService

# Each name loads its module on first use, so that reading one module of the package (the MCP
# server's start reads `runs.resolve`) does not load the command runner, planner and walker.
_MODULE_OF = {
    "CommandOutcome": "command_process",
    "CommandSpec": "command_process",
    "run_command": "command_process",
    "ACTIVE": "run_results",
    "RUN_STATUSES": "run_results",
    "STEP_STATUSES": "run_results",
    "TERMINAL": "run_results",
    "check_parameters": "params",
    "refuse_undeclared": "params",
    "plan_run": "plan",
    "resolve_workflow": "resolve",
    "store_home": "resolve",
    "MASK": "secrets",
    "SecretSet": "secrets",
    "RunOptions": "service",
    "RunService": "service",
}

__getattr__ = names_loaded_on_first_use(__name__, _MODULE_OF)


def durable_runs_in_progress() -> bool:
    """Whether runs are executing in this process (without importing DBOS when none can be)."""
    import sys

    durable = sys.modules.get("workrail_engine.runs.durable")
    runtime = durable.running() if durable is not None else None
    return bool(runtime is not None and runtime.progress.live)


__all__ = [
    "ACTIVE",
    "MASK",
    "RUN_STATUSES",
    "STEP_STATUSES",
    "TERMINAL",
    "CommandOutcome",
    "CommandSpec",
    "RunOptions",
    "RunService",
    "SecretSet",
    "check_parameters",
    "durable_runs_in_progress",
    "plan_run",
    "refuse_undeclared",
    "resolve_workflow",
    "run_command",
    "store_home",
]
