"""Stage 3: workflow ``features`` add cross-cutting items to every ``promptBlocks`` step.

A feature appends constraints, procedure steps and verify items (never replaces any) to each step
written with ``promptBlocks``; steps written as a raw ``prompt`` are the author's own text and are
left alone, as upstream WorkRail does. The set is closed (upstream's ids, our wording); an unknown
feature id is a problem.
"""

from __future__ import annotations

from typing import Any

from ..evaluation.problems import Problem
from ._budget import CompileBudget, text_size
from ._sites import StepVisitor

__all__ = ["FEATURES", "applier"]

_MEMORY = [[{"kind": "ref", "refId": "wr.refs.memory_usage"}]]

FEATURES: dict[str, dict[str, list[Any]]] = {
    "wr.features.memory_context": {"constraints": _MEMORY},
    "wr.features.capabilities": {
        "constraints": [
            "Do not take an optional capability for granted because the workflow can use it.",
            "Before relying on delegation, web access or another optional capability, check that "
            "it works by trying it.",
            "When a capability is missing, say so and take the fallback path openly.",
        ],
        "procedure": [
            "Decide whether an optional capability would change the quality of this step enough "
            "to be worth using.",
            "When you take a path that depends on a capability, note what showed it was available.",
            "When you do without delegation or another capability, do the work yourself and note "
            "why the fallback is enough.",
        ],
        "verify": [
            "Every capability-dependent path rests on an observation, a probe or an actual attempt.",
            "Any unavailable or skipped capability, its fallback and the fallback's limits are "
            "written down.",
            "The synthesis and the final judgment remain yours.",
        ],
    },
    "wr.features.subagent_guidance": {
        "constraints": [
            "Delegate only to the generic WorkRail executor; do not count on named specialist "
            "agents.",
            "You keep the strategy, the decisions, the synthesis and the final outputs; helpers "
            "only contribute independent perspectives.",
            [{"kind": "ref", "refId": "wr.refs.parallelize_cognition_serialize_synthesis"}],
        ],
        "procedure": [
            "Give each delegated executor a distinct focus and the shared facts as its primary "
            "source.",
            "Combine parallel results yourself; no single helper's answer becomes the answer "
            "without your review.",
        ],
        "verify": [
            "Delegated results were synthesized by you, not adopted word for word.",
            "No helper had the final say over findings, recommendations or artifacts.",
        ],
    },
}


def applier(feature_ids: Any, problems: list[Problem], budget: CompileBudget) -> StepVisitor:
    chosen: list[dict[str, list[Any]]] = []
    for index, feature_id in enumerate(feature_ids if isinstance(feature_ids, list) else []):
        if isinstance(feature_id, str) and feature_id in FEATURES:
            chosen.append(FEATURES[feature_id])
        else:
            problems.append(
                Problem(
                    f"/features/{index}",
                    "WR805",
                    f"Unknown feature {feature_id!r} (known: {', '.join(sorted(FEATURES))}).",
                )
            )

    added = text_size(chosen)

    def apply(step: dict[str, Any], pointer: str) -> None:
        blocks = step.get("promptBlocks")
        if not chosen or not isinstance(blocks, dict):
            return
        if not budget.grows(step, added, f"{pointer}/promptBlocks"):
            return
        for feature in chosen:
            for key, items in feature.items():
                current = blocks.get(key)
                existing: list[Any] = current if isinstance(current, list) else []
                blocks[key] = [*existing, *items]

    return apply
