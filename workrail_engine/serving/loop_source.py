"""Where a while/until loop takes its decision from (upstream's ``conditionSource``).

``{"kind": "artifact_contract", "contractRef": "wr.contracts.loop_control"}``: the agent decides,
with a loop-control artifact handed over with the step that ends each iteration ("continue" runs
the body again, "stop" leaves; ``maxIterations`` still bounds it). ``{"kind": "context_variable",
"condition": …}``: the condition, as if written as ``condition``. Without ``conditionSource`` the
loop's own ``condition`` decides — unless a step of its body has the loop-control output contract:
then, as upstream's compiler derives it, the agent's artifact decides (``body_decides``; the
compile step writes the derived ``conditionSource`` into the served workflow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..evaluation.contract_refs import LOOP_CONTROL

__all__ = ["artifact_source", "body_decides", "derive_artifact_sources", "loop_condition"]


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


def body_decides(loop_step: Mapping[str, Any], steps: Sequence[Any]) -> bool:
    """A while/until loop without ``conditionSource`` whose body (inline, or the top-level step
    it names) holds a step with the loop-control output contract."""
    spec = loop_step.get("loop")
    if not isinstance(spec, Mapping) or spec.get("type") not in ("while", "until"):
        return False
    if "conditionSource" in spec:
        return False
    body = loop_step.get("body")
    if isinstance(body, str):
        body = [s for s in steps if isinstance(s, Mapping) and s.get("id") == body]
    return isinstance(body, list) and any(
        isinstance(s, Mapping)
        and isinstance(s.get("outputContract"), Mapping)
        and s["outputContract"].get("contractRef") == LOOP_CONTROL
        for s in body
    )


def derive_artifact_sources(steps: list[Any]) -> None:
    """Write the derived artifact ``conditionSource`` into each loop of ``steps`` that
    ``body_decides`` (the served form; the file as written is left alone)."""
    for step in steps:
        if isinstance(step, dict) and body_decides(step, steps):
            step["loop"] = {
                **step["loop"],
                "conditionSource": {"kind": "artifact_contract", "contractRef": LOOP_CONTROL},
            }
