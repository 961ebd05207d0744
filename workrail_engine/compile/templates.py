"""Stage 1: ``templateCall`` — a step that stands for the steps of a routine.

``{"templateCall": {"templateId": "wr.templates.routine.NAME", "args": {...}}}`` is replaced by the
steps of the routine NAME (a catalog workflow whose id is ``NAME``, ``routine-NAME`` or
``wr.routine-NAME``). Each injected step keeps its own fields, and:

- its id becomes ``<calling step id>.<routine step id>``;
- single-brace ``{arg}`` placeholders in its prompt and title are filled from ``args``
  (double-brace ``{{…}}`` templates are left for render time); an arg the routine names but the
  call does not give, or one given as an object or array, is a problem;
- the routine's ``metaGuidance`` is appended to its ``guidance``;
- the calling step's ``runCondition`` applies when it has none of its own.

A routine whose steps call templates themselves is refused (no recursive injection).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..definition.routine_templates import ROUTINE_TEMPLATE_PREFIX, routine_ids_for
from ..evaluation.problems import Problem
from ._budget import CompileBudget, text_size

__all__ = ["expand"]

# {name} with no brace on either side: {{context}} templates are not arguments.
_ARGUMENT = re.compile(r"(?<!\{)\{([^{}]+)\}(?!\})")


@dataclass
class _Expansion:
    find: Callable[[str], Mapping[str, Any] | None]
    problems: list[Problem]
    budget: CompileBudget
    seen: set[str] = field(default_factory=set)
    # id(routine step) → its text size: a routine called 200 times is measured once
    sizes: dict[int, int] = field(default_factory=dict)

    def size_of(self, routine_step: Mapping[str, Any]) -> int:
        found = self.sizes.get(id(routine_step))
        if found is None:
            found = self.sizes[id(routine_step)] = text_size(routine_step)
        return found


def expand(
    steps: list[Any],
    find: Callable[[str], Mapping[str, Any] | None],
    problems: list[Problem],
    budget: CompileBudget,
) -> list[Any]:
    run = _Expansion(find, problems, budget)
    out: list[Any] = []
    for index, step in enumerate(steps):
        pointer = f"/steps/{index}"
        if isinstance(step, dict) and isinstance(step.get("body"), list):
            step["body"] = _expand_list(step["body"], f"{pointer}/body", run)
        if isinstance(step, dict) and isinstance(step.get("steps"), list):
            step["steps"] = _expand_list(step["steps"], f"{pointer}/steps", run)
        out.extend(_expand_one(step, pointer, run))
    return out


def _expand_list(steps: list[Any], pointer: str, run: _Expansion) -> list[Any]:
    out: list[Any] = []
    for index, step in enumerate(steps):
        out.extend(_expand_one(step, f"{pointer}/{index}", run))
    return out


def _expand_one(step: Any, pointer: str, run: _Expansion) -> list[Any]:
    find, problems, seen = run.find, run.problems, run.seen
    call = step.get("templateCall") if isinstance(step, dict) else None
    if not isinstance(call, Mapping):
        if isinstance(step, dict):
            # later stages report at the step as written, whatever injected steps come before
            step["_origin"] = pointer
        _note_id(step, pointer, problems, seen)
        return [step]
    where = f"{pointer}/templateCall"
    template_id = call.get("templateId")
    routine = _routine(template_id, find)
    if routine is None:
        problems.append(
            Problem(
                f"{where}/templateId",
                "WR801",
                f"Step {step.get('id')!r} calls template {template_id!r}, which does not exist: "
                f"a template is {ROUTINE_TEMPLATE_PREFIX}NAME for a routine NAME in the catalog.",
            )
        )
        return []
    given = call.get("args")
    args: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    injected = _inject(step, routine, args, where, run)
    for member in injected:
        member["_origin"] = pointer
        _note_id(member, pointer, problems, seen)
    return injected


def _routine(
    template_id: Any, find: Callable[[str], Mapping[str, Any] | None]
) -> Mapping[str, Any] | None:
    if not isinstance(template_id, str):
        return None
    for name in routine_ids_for(template_id):
        found = find(name)
        if found is not None:
            return found
    return None


def _inject(
    caller: Mapping[str, Any],
    routine: Mapping[str, Any],
    args: Mapping[str, Any],
    where: str,
    run: _Expansion,
) -> list[dict[str, Any]]:
    problems = run.problems
    if run.budget.full:
        return []  # WR811 is reported: measuring more calls would only cost time
    routine_id = routine.get("id")
    steps = [s for s in routine.get("steps") or [] if isinstance(s, Mapping)]
    nested = [s.get("id") for s in steps if "templateCall" in s]
    if nested:
        problems.append(
            Problem(
                where,
                "WR804",
                f"Routine {routine_id!r} step {nested[0]!r} calls a template itself; "
                "routines are injected one level deep only.",
            )
        )
        return []
    meta = [g for g in routine.get("metaGuidance") or [] if isinstance(g, str)]
    inherited = caller.get("runCondition")
    # what every injected step adds besides its own text: the id prefix, guidance, condition
    extra = len(str(caller.get("id"))) + 1 + text_size(meta)
    injected = []
    missing: dict[str, None] = {}  # every argument the call lacks, in order of first use
    for routine_step in steps:
        size = run.size_of(routine_step) + extra + _fill_growth(routine_step, args)
        if inherited is not None and "runCondition" not in routine_step:
            size += text_size(inherited)
        if not run.budget.admits(size, where, caller.get("id")):
            return []
        step = copy.deepcopy(dict(routine_step))
        step["id"] = f"{caller.get('id')}.{routine_step.get('id')}"
        for key in ("prompt", "title"):
            if isinstance(step.get(key), str):
                step[key] = _fill(step[key], args, routine_id, where, problems, missing)
        if meta:
            step["guidance"] = [*(step.get("guidance") or []), *meta]
        if caller.get("runCondition") is not None and "runCondition" not in step:
            step["runCondition"] = copy.deepcopy(caller["runCondition"])
        run.budget.adopt(step, size)
        injected.append(step)
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        problems.append(
            Problem(
                f"{where}/args",
                "WR802",
                f"Routine {routine_id!r} needs {names}, which templateCall.args does not give "
                f"({len(missing)} missing).",
            )
        )
    return injected


def _fill_growth(routine_step: Mapping[str, Any], args: Mapping[str, Any]) -> int:
    """How many characters filling the ``{arg}`` placeholders of a step's prompt and title adds,
    from the arguments' lengths: the filled text is built only once it is known to fit."""
    growth = 0
    for key in ("prompt", "title"):
        text = routine_step.get(key)
        if not isinstance(text, str):
            continue
        for match in _ARGUMENT.finditer(text):
            value = _argument_text(args.get(match.group(1)))
            if value is not None:
                growth += len(value) - len(match.group(0))
    return growth


def _argument_text(value: Any) -> str | None:
    """The text an argument fills a placeholder with; None for one that cannot fill it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _fill(
    text: str,
    args: Mapping[str, Any],
    routine_id: Any,
    where: str,
    problems: list[Problem],
    missing: dict[str, None],
) -> str:
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in args:
            missing[name] = None  # reported once per call, naming them all
            return match.group(0)
        value = _argument_text(args[name])
        if value is not None:
            return value
        problems.append(
            Problem(
                f"{where}/args/{name}",
                "WR803",
                f"templateCall.args.{name} must be a string, number or boolean to fill "
                f"{{{name}}} in routine {routine_id!r}; an object or array cannot be.",
            )
        )
        return match.group(0)

    return _ARGUMENT.sub(substitute, text)


def _note_id(step: Any, pointer: str, problems: list[Problem], seen: set[str]) -> None:
    step_id = step.get("id") if isinstance(step, Mapping) else None
    if not isinstance(step_id, str):
        return
    if step_id in seen:
        problems.append(
            Problem(
                f"{pointer}/id",
                "WR809",
                f"Step id {step_id!r} appears twice once templates are expanded.",
            )
        )
    seen.add(step_id)
