"""Conditions and validation criteria: operand types, regexes RE2 accepts, embedded schemas.

The checks themselves live with the evaluators (``conditions``, ``rules``) so that what lint
accepts is exactly what will run; this module only says where in a step they apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..conditions import MALFORMED, condition_problems
from ..diagnostics import Severity
from ..problems import Problem
from ..rules import criteria_problems
from .finding import Finding

__all__ = ["expression_findings"]


def expression_findings(step: Mapping[str, Any], kind: str) -> list[Finding]:
    out: list[Finding] = []
    if isinstance(step.get("runCondition"), Mapping):
        out += _relative("/runCondition", condition_problems(step["runCondition"]))
    loop = step.get("loop")
    if kind == "loop" and isinstance(loop, Mapping) and isinstance(loop.get("condition"), Mapping):
        out += _relative("/loop/condition", condition_problems(loop["condition"]))
    if "validationCriteria" in step:
        out += _relative("/validationCriteria", criteria_problems(step["validationCriteria"]))
    return out


def _relative(base: str, problems: Iterable[Problem]) -> list[Finding]:
    # MALFORMED is skipped: the schema already reports the shape, on the exact key.
    return [
        Finding(base + p.pointer, p.code, Severity.ERROR, p.message)
        for p in problems
        if p.code != MALFORMED
    ]
