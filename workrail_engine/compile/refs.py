"""Stage 4: references to canonical snippets (``wr.refs.*``) become their text.

A prompt part ``{"kind": "ref", "refId": "wr.refs.x"}`` inside ``promptBlocks`` and a
``{{wr.refs.x}}`` token in any prompt text are replaced by the snippet. The set is closed — the ids
upstream WorkRail 3.x defines, with wording of our own — so that the compiled text never depends
on the machine it was compiled on. A ref part may also name one of the workflow's own
``references`` (a pointer to a document; upstream's compiler knows only its closed set): it
becomes a pointer line, ``"Release policy" (docs/release-policy.md): what it is for`` — the
document itself is never inlined. Any other id is a problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..evaluation.problems import Problem
from ._budget import CompileBudget
from ._sites import StepVisitor

__all__ = ["SNIPPETS", "leftover_token", "resolver"]

SNIPPETS: dict[str, str] = {
    "wr.refs.memory_usage": (
        "When a memory tool is available:\n"
        "- look up what earlier sessions learned about this workspace before you begin\n"
        "- once something significant is done, store the discoveries and decisions\n"
        "- give stored items topics and titles a later session can search for\n"
        "- a failing memory tool never blocks the work: it only helps"
    ),
    "wr.refs.memory_store": (
        "When a memory tool is available:\n"
        "- store this phase's main findings under a descriptive topic and title\n"
        "- include the file paths, the decisions and why they were made\n"
        "- carry on if storing fails"
    ),
    "wr.refs.memory_query": (
        "When a memory tool is available:\n"
        "- look for earlier context that bears on this task\n"
        "- scope the search to this workspace to find related past work\n"
        "- carry on without it if it is unavailable"
    ),
    "wr.refs.notes_first_durability": (
        "Keep the durable record in your step notes:\n"
        "- every step's notes are the primary record of what happened\n"
        "- keep the facts of the execution in notes and explicit context variables, not in side files\n"
        "- documents written for people (plans, reviews) are for reading, not the workflow's memory\n"
        "- notes and context survive a rewound conversation; side files may not\n"
        "- write down decisions, findings and their reasons before moving on"
    ),
    "wr.refs.synthesis_under_disagreement": (
        "When parallel results disagree:\n"
        "- treat the disagreement as work to do, not noise to smooth over\n"
        "- an issue raised by two or more results at the same severity counts as confirmed\n"
        "- raised at different severities, keep the higher one unless the lower comes with evidence\n"
        "- raised by one result only, investigate it; block on it only if it is clearly critical\n"
        "- one result calling it a false positive and another a real issue needs your explicit ruling in the notes\n"
        "- while a material disagreement stands, the findings outrank any early recommendation\n"
        "- record how each contradiction was resolved and why"
    ),
    "wr.refs.parallelize_cognition_serialize_synthesis": (
        "Parallel work:\n"
        "- independent thinking can run at once: gathering context, generating hypotheses, audits, reviews\n"
        "- combining results, settling contradictions, deciding and writing the final artifacts is done "
        "one after the other, by you\n"
        "- a parallel helper never settles the final answer: you own the synthesis and the decisions\n"
        "- prefer one well-aimed batch of delegations to many small ones in sequence\n"
        "- give every parallel helper its own, non-overlapping focus"
    ),
    "wr.refs.adversarial_challenge_rules": (
        "Challenging a position:\n"
        "- try to break the leading position rather than collect evidence for it\n"
        "- build the strongest case for another answer: what would be true if this one were wrong?\n"
        "- for each conclusion ask what evidence would disprove it, and whether that evidence is there\n"
        "- a challenge that cannot weaken the position strengthens it\n"
        "- a real weakness found is recorded as a finding and the position changes\n"
        "- rate severity by actual risk, not by how comfortable it is to say\n"
        "- push back on inflated severities as much as on understated ones\n"
        "- a serious concern raised independently by two or more challengers blocks by default"
    ),
}

_TOKEN = re.compile(r"\{\{\s*(wr\.refs\.[^\s{}]+)\s*\}\}")
_LEFTOVER = re.compile(r"\{\{\s*wr\.[^{}]*\}\}")


def leftover_token(text: Any) -> str | None:
    """The first ``{{wr.…}}`` token still in ``text``, if any."""
    if not isinstance(text, str) or "{{" not in text:
        return None
    match = _LEFTOVER.search(text)
    return match.group(0) if match else None


def _pointer_line(reference: Mapping[str, Any]) -> str:
    line = (
        f"{json.dumps(reference.get('title') or reference.get('id'))} ({reference.get('source')})"
    )
    if reference.get("purpose"):
        line += f": {reference['purpose']}"
    if reference.get("authoritative"):
        line += " (authoritative: follow it)"
    return line


def _part_text(part: Any, declared: Mapping[str, str]) -> str | None:
    """The text a ``{"kind": "ref"}`` part becomes, or None."""
    if not isinstance(part, Mapping) or part.get("kind") != "ref":
        return None
    ref_id = part.get("refId")
    if not isinstance(ref_id, str):
        return None
    return SNIPPETS.get(ref_id) or declared.get(ref_id)


def resolver(problems: list[Problem], references: Any, budget: CompileBudget) -> StepVisitor:
    declared = {
        r["id"]: _pointer_line(r)
        for r in (references if isinstance(references, list) else [])
        if isinstance(r, Mapping) and isinstance(r.get("id"), str)
    }

    def resolve(step: dict[str, Any], pointer: str) -> None:
        def unknown(ref_id: Any, where: str) -> None:
            problems.append(
                Problem(
                    where,
                    "WR806",
                    f"Step {step.get('id')!r} refers to {ref_id!r}, which is not a known snippet "
                    f"(known: {', '.join(sorted(SNIPPETS))}).",
                )
            )

        def text(value: str, where: str) -> str:
            def swap(match: re.Match[str]) -> str:
                if match.group(1) in SNIPPETS:
                    return SNIPPETS[match.group(1)]
                unknown(match.group(1), where)
                return match.group(0)

            if "{{" not in value:
                return value
            growth = sum(
                len(SNIPPETS[match.group(1)]) - len(match.group(0))
                for match in _TOKEN.finditer(value)
                if match.group(1) in SNIPPETS
            )
            if growth > 0 and not budget.grows(step, growth, where):
                return value
            return _TOKEN.sub(swap, value)

        def value(item: Any, where: str) -> Any:
            if isinstance(item, str):
                return text(item, where)
            if not isinstance(item, list):
                return item
            growth = sum(len(_part_text(part, declared) or "") for part in item)
            if growth > 0 and not budget.grows(step, growth, where):
                return item
            parts = []
            for index, part in enumerate(item):
                if isinstance(part, Mapping) and part.get("kind") == "ref":
                    resolved = _part_text(part, declared)
                    if resolved is not None:
                        parts.append({"kind": "text", "text": resolved})
                        continue
                    unknown(part.get("refId"), f"{where}/{index}/refId")
                parts.append(part)
            return parts

        if isinstance(step.get("prompt"), str):
            step["prompt"] = text(step["prompt"], f"{pointer}/prompt")
        blocks = step.get("promptBlocks")
        if isinstance(blocks, dict):
            at = f"{pointer}/promptBlocks"
            if "goal" in blocks:
                blocks["goal"] = value(blocks["goal"], f"{at}/goal")
            for key in ("constraints", "procedure", "verify"):
                if isinstance(blocks.get(key), list):
                    blocks[key] = [
                        value(item, f"{at}/{key}/{i}") for i, item in enumerate(blocks[key])
                    ]

    return resolve
