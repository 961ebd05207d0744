"""Stage 2: ``{{wr.bindings.slot}}`` — the routine or workflow a project chose for a slot.

A workflow declares its slots in ``extensionPoints`` (``{slotId, purpose, default}``); a project
may override them in ``.workrail/bindings.json`` — either ``{"<workflow id>": {"slot": "id"}}`` or
a flat ``{"slot": "id"}``. A token is replaced by the project's choice, else the slot's default;
a slot that is neither declared nor bound is a problem. Tokens are resolved in ``prompt`` and in
the string values of ``promptBlocks``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..evaluation.problems import Problem
from ..text.regular_files import UnreadableFile, read_regular_file
from ._budget import CompileBudget
from ._sites import visit_steps

__all__ = ["project_bindings", "resolve"]

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"\{\{\s*wr\.bindings\.([^\s{}]+)\s*\}\}")


def project_bindings(project_dir: Path | None, workflow_id: str) -> dict[str, str]:
    """The overrides ``project_dir/.workrail/bindings.json`` declares for ``workflow_id``.

    A missing or malformed file means no overrides (the workflow's defaults apply). It is read
    the guarded way (a regular file of at most 5 MiB): a repository can hold a symlink to
    ``/dev/zero`` or a FIFO here, and this runs while the catalog's lock is held."""
    if project_dir is None:
        return {}
    path = Path(project_dir) / ".workrail" / "bindings.json"
    try:
        data = json.loads(read_regular_file(path))
    except UnreadableFile as error:
        if path.is_symlink() or path.exists():  # a missing file is the usual case: no word
            log.warning("%s is not used: %s", path, error)
        return {}
    except ValueError:
        return {}
    if not isinstance(data, Mapping):
        return {}
    section = data.get(workflow_id)
    if isinstance(section, Mapping):
        return {k: v for k, v in section.items() if isinstance(v, str)}
    if data and all(isinstance(v, str) for v in data.values()):
        return dict(data)
    return {}


def resolve(
    definition: dict[str, Any],
    overrides: Mapping[str, str],
    problems: list[Problem],
    budget: CompileBudget,
) -> dict[str, str]:
    """Replace every binding token in place; returns slot → chosen id for the slots used."""
    defaults = {
        point.get("slotId"): point.get("default")
        for point in definition.get("extensionPoints") or []
        if isinstance(point, Mapping) and isinstance(point.get("default"), str)
    }
    used: dict[str, str] = {}

    def text(value: str, where: str, step: dict[str, Any]) -> str:
        if "{{" not in value:
            return value
        step_id = step.get("id")

        def swap(match: re.Match[str]) -> str:
            slot = match.group(1)
            chosen = overrides.get(slot) or defaults.get(slot)
            if chosen is None:
                declared = ", ".join(sorted(str(s) for s in defaults)) or "none"
                problems.append(
                    Problem(
                        where,
                        "WR807",
                        f"Step {step_id!r} uses binding slot {slot!r}, which the workflow's "
                        f"extensionPoints do not declare (declared: {declared}).",
                    )
                )
                return match.group(0)
            used[slot] = chosen
            return chosen

        growth = 0
        for match in _TOKEN.finditer(value):
            chosen = overrides.get(match.group(1)) or defaults.get(match.group(1))
            growth += len(chosen) - len(match.group(0)) if chosen is not None else 0
        if growth > 0 and not budget.grows(step, growth, where):
            return value
        return _TOKEN.sub(swap, value)

    def value(item: Any, where: str, step: dict[str, Any]) -> Any:
        return text(item, where, step) if isinstance(item, str) else item

    def visit(step: dict[str, Any], pointer: str) -> None:
        if isinstance(step.get("prompt"), str):
            step["prompt"] = text(step["prompt"], f"{pointer}/prompt", step)
        blocks = step.get("promptBlocks")
        if not isinstance(blocks, dict):
            return
        at = f"{pointer}/promptBlocks"
        if "goal" in blocks:
            blocks["goal"] = value(blocks["goal"], f"{at}/goal", step)
        for key in ("constraints", "procedure", "verify"):
            if isinstance(blocks.get(key), list):
                blocks[key] = [value(v, f"{at}/{key}/{i}", step) for i, v in enumerate(blocks[key])]
        if isinstance(blocks.get("outputRequired"), dict):
            blocks["outputRequired"] = {
                k: value(v, f"{at}/outputRequired/{k}", step)
                for k, v in blocks["outputRequired"].items()
            }

    visit_steps(definition["steps"], visit)
    return used
