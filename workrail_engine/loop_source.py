"""Where a while/until loop takes its decision from (upstream's ``conditionSource``).

``{"kind": "artifact_contract", "contractRef": "wr.contracts.loop_control"}``: the agent decides,
with a loop-control artifact handed over with the step that ends each iteration ("continue" runs
the body again, "stop" leaves; ``maxIterations`` still bounds it). ``{"kind": "context_variable",
"condition": …}``: the condition, as if written as ``condition``. Without ``conditionSource`` the
loop's own ``condition`` decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .contracts import LOOP_CONTROL

__all__ = ["artifact_source", "loop_condition"]


def artifact_source(spec: Mapping[str, Any]) -> bool:
    source = spec.get("conditionSource")
    return (
        spec.get("type") in ("while", "until")
        and isinstance(source, Mapping)
        and source.get("kind") == "artifact_contract"
        and source.get("contractRef", LOOP_CONTROL) == LOOP_CONTROL
    )


def loop_condition(spec: Mapping[str, Any]) -> Any:
    source = spec.get("conditionSource")
    if isinstance(source, Mapping) and source.get("kind") == "context_variable":
        return source.get("condition")
    return spec.get("condition")
