"""Conditions and validation criteria: operand types, regexes RE2 accepts, embedded schemas.

A regex RE2 cannot run for want of backtracking (lookaround, backreferences) is no error: it
runs on the time-limited fallback engine, and WR405 says so (a warning).

The checks themselves live with the evaluators (``conditions``, ``rules``) so that what lint
accepts is exactly what will run; this module only says where in a step they apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeGuard

from ..diagnostics import Severity
from ..evaluation.conditions import MALFORMED, condition_problems
from ..evaluation.problems import Problem, pointer_join
from ..evaluation.regexes import RegexError, compile_regex
from ..evaluation.rules import OPERANDS, criteria_problems
from .finding import Finding

__all__ = ["expression_findings"]


def expression_findings(step: Mapping[str, Any], kind: str) -> list[Finding]:
    out: list[Finding] = []
    if "runCondition" in step and _is_object(step["runCondition"]):
        out += _relative("/runCondition", condition_problems(step["runCondition"]))
    loop = step.get("loop")
    if kind == "loop" and _is_object(loop) and _is_object(loop.get("condition")):
        out += _relative("/loop/condition", condition_problems(loop["condition"]))
    if "validationCriteria" in step:
        out += _relative("/validationCriteria", criteria_problems(step["validationCriteria"]))
        if step["validationCriteria"] == []:
            out.append(_no_rules())
        out += _rules_without_operand(step["validationCriteria"], "/validationCriteria")
    for key in ("runCondition", "validationCriteria"):
        if key in step:
            out += _backtracking_regexes(step[key], f"/{key}")
    if kind == "loop" and _is_object(loop) and "condition" in loop:
        out += _backtracking_regexes(loop["condition"], "/loop/condition")
    return out


def _is_object(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # A dict first: isinstance(value, Mapping) goes through ABCMeta at ~7× the cost, and these
    # checks run on every node of every step's conditions and criteria.
    return type(value) is dict or isinstance(value, Mapping)


BACKTRACKING_REGEX = "WR405"
NO_RULES = "WR407"


RULE_WITHOUT_OPERAND = "WR408"


def _rules_without_operand(node: Any, pointer: str) -> list[Finding]:
    """WR408 for each rule without its operand: upstream's schema takes it, no output passes it."""
    out: list[Finding] = []

    def check(rule: Mapping[str, Any], path: list[str | int]) -> None:
        kind = rule.get("type")
        operand = OPERANDS.get(kind) if isinstance(kind, str) else None
        if operand is not None and operand not in rule:
            message = f"This {kind} rule has no {operand!r}, so no output can pass it"
            where = pointer_join(pointer, *path)
            out.append(Finding(where, RULE_WITHOUT_OPERAND, Severity.WARNING, message))

    _visit_objects(node, ("and", "or", "not"), [], check)
    return out


def _visit_objects(
    node: Any,
    keys: tuple[str, ...],
    path: list[str | int],
    visit: Callable[[Mapping[str, Any], list[str | int]], None],
) -> None:
    """``visit(object, path)`` for each object of a tree of criteria or conditions (lists, and
    objects holding ``keys``), parents first; ``path`` says where it is below the tree's root
    during the call — joined into a pointer only for a finding, which most objects have none of.
    (Plain recursion over one shared path: a generator's ``yield from`` at each level, or a new
    path tuple per object, cost as much as the checks.)"""
    if isinstance(node, list):
        for index, item in enumerate(node):
            path.append(index)
            _visit_objects(item, keys, path, visit)
            path.pop()
    elif _is_object(node):
        visit(node, path)
        for key in keys:
            if key in node:
                path.append(key)
                _visit_objects(node[key], keys, path, visit)
                path.pop()


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

    def check(item: Mapping[str, Any], path: list[str | int]) -> None:
        patterns = []
        if item.get("type") == "regex" and isinstance(item.get("pattern"), str):
            flags = item.get("flags", "")
            patterns.append(("pattern", item["pattern"], flags if isinstance(flags, str) else ""))
        if "matches" in item and isinstance(item["matches"], str):
            patterns.append(("matches", item["matches"], ""))
        for key, pattern, flags in patterns:
            try:
                compiled = compile_regex(pattern, flags)
            except RegexError:
                continue  # WR401 reports it
            if compiled.notice:
                where = pointer_join(pointer, *path, key)
                out.append(Finding(where, BACKTRACKING_REGEX, Severity.WARNING, compiled.notice))

    _visit_objects(node, ("and", "or", "not", "condition"), [], check)
    return out


def _relative(base: str, problems: Iterable[Problem]) -> list[Finding]:
    # MALFORMED is skipped: the schema already reports the shape, on the exact key.
    return [
        Finding(base + p.pointer, p.code, Severity.ERROR, p.message)
        for p in problems
        if p.code != MALFORMED
    ]
