"""Conditions and validation criteria: operand types, regexes RE2 accepts, embedded schemas.

A regex RE2 cannot run for want of backtracking (lookaround, backreferences) is no error: it
runs on the time-limited fallback engine, and WR405 says so (a warning).

The checks themselves live with the evaluators (``conditions``, ``rules``) so that what lint
accepts is exactly what will run; this module only says where in a step they apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..diagnostics import Severity
from ..evaluation.conditions import MALFORMED, condition_problems
from ..evaluation.problems import Problem, pointer_join
from ..evaluation.regexes import RegexError, compile_regex
from ..evaluation.rules import OPERANDS, criteria_problems
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
        if step["validationCriteria"] == []:
            out.append(_no_rules())
        out += _rules_without_operand(step["validationCriteria"], "/validationCriteria")
    for key in ("runCondition", "validationCriteria"):
        if key in step:
            out += _backtracking_regexes(step[key], f"/{key}")
    if kind == "loop" and isinstance(loop, Mapping) and "condition" in loop:
        out += _backtracking_regexes(loop["condition"], "/loop/condition")
    return out


BACKTRACKING_REGEX = "WR405"
NO_RULES = "WR407"


RULE_WITHOUT_OPERAND = "WR408"


def _rules_without_operand(node: Any, pointer: str) -> list[Finding]:
    """WR408 for each rule without its operand: upstream's schema takes it, no output passes it."""
    if isinstance(node, list):
        return [
            finding
            for index, item in enumerate(node)
            for finding in _rules_without_operand(item, pointer_join(pointer, index))
        ]
    if not isinstance(node, Mapping):
        return []
    out = []
    kind = node.get("type")
    operand = OPERANDS.get(kind) if isinstance(kind, str) else None
    if operand is not None and operand not in node:
        message = f"This {kind} rule has no {operand!r}, so no output can pass it"
        out.append(Finding(pointer, RULE_WITHOUT_OPERAND, Severity.WARNING, message))
    for key in ("and", "or", "not"):
        if key in node:
            out += _rules_without_operand(node[key], pointer_join(pointer, key))
    return out


def _no_rules() -> Finding:
    """WR407: upstream accepts `validationCriteria: []`; it checks only that the output is not
    blank, which the author rarely means."""
    message = (
        "An empty validationCriteria only checks that the output is not blank; "
        "add the rules you mean, or leave validationCriteria out"
    )
    return Finding("/validationCriteria", NO_RULES, Severity.WARNING, message)


def _backtracking_regexes(node: Any, pointer: str) -> list[Finding]:
    """WR405 for each pattern (a regex rule's or a `matches` operand) on the fallback engine."""
    out: list[Finding] = []
    if isinstance(node, list):
        for index, item in enumerate(node):
            out += _backtracking_regexes(item, pointer_join(pointer, index))
        return out
    if not isinstance(node, Mapping):
        return out
    patterns = []
    if node.get("type") == "regex" and isinstance(node.get("pattern"), str):
        flags = node.get("flags", "")
        patterns.append(("pattern", node["pattern"], flags if isinstance(flags, str) else ""))
    if isinstance(node.get("matches"), str):
        patterns.append(("matches", node["matches"], ""))
    for key, pattern, flags in patterns:
        try:
            compiled = compile_regex(pattern, flags)
        except RegexError:
            continue  # WR401 reports it
        if compiled.notice:
            out.append(
                Finding(
                    pointer_join(pointer, key),
                    BACKTRACKING_REGEX,
                    Severity.WARNING,
                    compiled.notice,
                )
            )
    for key in ("and", "or", "not", "condition"):
        if key in node:
            out += _backtracking_regexes(node[key], pointer_join(pointer, key))
    return out


def _relative(base: str, problems: Iterable[Problem]) -> list[Finding]:
    # MALFORMED is skipped: the schema already reports the shape, on the exact key.
    return [
        Finding(base + p.pointer, p.code, Severity.ERROR, p.message)
        for p in problems
        if p.code != MALFORMED
    ]
