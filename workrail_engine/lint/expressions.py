"""Conditions and validation criteria: operand types, regexes RE2 accepts, embedded schemas.

A regex RE2 cannot run for want of backtracking (lookaround, backreferences) is no error: it
runs on the time-limited fallback engine, and WR405 says so (a warning).

The checks themselves live with the evaluators (``conditions``, ``rules``) so that what lint
accepts is exactly what will run; this module only says where in a step they apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from ..diagnostics import Severity
from ..evaluation.conditions import MALFORMED, condition_problems
from ..evaluation.problems import Problem, pointer_join
from ..evaluation.regexes import RegexError, compile_regex
from ..evaluation.rules import OPERANDS, criteria_problems
from .contradictions import Atom, atoms, contradiction
from .quoted_json import QUOTED_JSON_IN_MESSAGE, quoted_json_snippet
from .step_finding import Finding

__all__ = ["expression_findings"]


def expression_findings(
    step: Mapping[str, Any], kind: str, reads: list[tuple[str, str]] | None = None
) -> list[Finding]:
    """The findings of the step's conditions and criteria; ``reads`` gets (pointer relative to
    the step, variable) of each `var` they read (WR308's input, collected in the same walk)."""
    reads = [] if reads is None else reads
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
    if "runCondition" in step:
        out += _warnings(step["runCondition"], "/runCondition", False, reads)
        if _is_object(step["runCondition"]) and "and" in step["runCondition"]:
            out += never_holds(step["runCondition"], "/runCondition", "This step can never run")
    if "validationCriteria" in step:
        out += _warnings(step["validationCriteria"], "/validationCriteria", True, reads)
    if kind == "loop" and _is_object(loop) and "condition" in loop:
        out += _warnings(loop["condition"], "/loop/condition", False, reads)
        out += never_holds(loop["condition"], "/loop/condition", "This loop condition never holds")
    if kind == "loop" or "requireConfirmation" in step:
        _other_reads(step, kind, reads)
    return out


def _other_reads(step: Mapping[str, Any], kind: str, reads: list[tuple[str, str]]) -> None:
    """The reads of the conditions the walks above do not visit: upstream's `conditionSource`
    and a conditional `requireConfirmation`."""
    loop = step.get("loop") if kind == "loop" else None
    source = loop.get("conditionSource") if _is_object(loop) else None
    if _is_object(source) and "condition" in source:
        condition_reads(source["condition"], "/loop/conditionSource/condition", reads)
    confirm = step.get("requireConfirmation")
    if _is_object(confirm):
        if "kind" not in confirm:
            condition_reads(confirm, "/requireConfirmation", reads)
        elif "condition" in confirm:
            condition_reads(confirm["condition"], "/requireConfirmation/condition", reads)


def condition_reads(condition: Any, at: str, out: list[tuple[str, str]]) -> None:
    """(pointer of the `var` value, the variable) of every comparison in ``condition``."""
    if type(condition) is list:
        for index, member in enumerate(condition):
            condition_reads(member, f"{at}/{index}", out)
    elif _is_object(condition):
        if type(condition.get("var")) is str:
            out.append((f"{at}/var", condition["var"]))
        for key in ("and", "or", "not"):
            if key in condition:
                condition_reads(condition[key], f"{at}/{key}", out)


CANNOT_HOLD = "WR410"


def never_holds(condition: Any, pointer: str, what: str) -> list[Finding]:
    """WR410 on the first comparison of ``condition`` that contradicts an earlier one of its
    `and` (`contradictions`); the conditions of enclosing groups are `flow`'s."""
    if not _is_object(condition) or "and" not in condition:
        return []
    seen: list[Atom] = []
    for atom in atoms(condition, pointer):
        found = contradiction(seen, atom)
        if found is not None:
            other, why = found
            message = f"{what}: {why} ({other.pointer.lstrip('/')} is the other)"
            return [Finding(atom.pointer, CANNOT_HOLD, Severity.WARNING, message)]
        seen.append(atom)
    return []


def _is_object(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # A dict first, None (an absent key) next: isinstance(value, Mapping) goes through ABCMeta at
    # ~7× the cost, and these checks run on every node of every step's conditions and criteria.
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


BACKTRACKING_REGEX = "WR405"
NO_RULES = "WR407"


RULE_WITHOUT_OPERAND = "WR408"

# The keys a walk of criteria or conditions descends into: compositions, and a rule's condition.
_NESTED = ("and", "or", "not", "condition")


def _warnings(node: Any, pointer: str, rules: bool, reads: list[tuple[str, str]]) -> list[Finding]:
    """In one walk of a tree of criteria (``rules``) or of a condition: WR408 for each rule
    without its operand — upstream's schema takes it, no output passes it —, WR409 for each rule
    whose message quotes a JSON snippet (`quoted_json`), and WR405 for each
    pattern (a regex rule's, a `matches` operand) on the fallback engine.

    And into ``reads``, each `var` read on the way (WR308's input).

    WR408 and WR409 look at the rules of the criteria, not into a rule's ``condition``."""
    walk = _WarningsWalk(pointer, reads)
    walk.visit(node, rules)
    return walk.out


class _WarningsWalk:
    """The state of one `_warnings` walk. A class rather than closures: nested functions that
    call themselves form reference cycles, left for the cyclic collector — ~16 objects per
    walk, 120,000 on 1,000 files: 2 % of `workrail validate`'s instructions to make and collect.

    ``path`` says where the walk is below the walked node, joined into a pointer only for a
    finding, which most objects have none of (a generator's ``yield from`` at each level, or a
    new path tuple per object, cost as much as the checks)."""

    __slots__ = ("out", "path", "pointer", "reads")

    def __init__(self, pointer: str, reads: list[tuple[str, str]]) -> None:
        self.pointer = pointer
        self.reads = reads
        self.out: list[Finding] = []
        self.path: list[str | int] = []

    def visit(self, item: Any, rules: bool) -> None:
        path = self.path
        if isinstance(item, list):
            for index, member in enumerate(item):
                path.append(index)
                self.visit(member, rules)
                path.pop()
            return
        if not _is_object(item):
            return
        kind = item.get("type")
        var = item.get("var")
        if type(var) is str:
            self.reads.append((pointer_join(self.pointer, *path, "var"), var))
        if rules:
            operand = OPERANDS.get(kind) if isinstance(kind, str) else None
            if operand is not None and operand not in item:
                message = f"This {kind} rule has no {operand!r}, so no output can pass it"
                where = pointer_join(self.pointer, *path)
                self.out.append(Finding(where, RULE_WITHOUT_OPERAND, Severity.WARNING, message))
            if isinstance(item.get("message"), str):
                self._quoted_json(item["message"])
        if kind == "regex" and isinstance(item.get("pattern"), str):
            flags = item.get("flags", "")
            self._backtracking(item["pattern"], flags if isinstance(flags, str) else "", "pattern")
        if "matches" in item and isinstance(item["matches"], str):
            self._backtracking(item["matches"], "", "matches")
        for key in _NESTED:
            if key in item:
                path.append(key)
                self.visit(item[key], rules and key != "condition")
                path.pop()

    def _quoted_json(self, message: str) -> None:
        snippet = quoted_json_snippet(message)
        if snippet is None:
            return
        text = (
            f"This message quotes the JSON {snippet}: agents copy quoted JSON as a string and "
            "answer with its quotes escaped instead of the object. Describe the object's keys "
            "and values, or show the JSON without quotes around it"
        )
        where = pointer_join(self.pointer, *self.path, "message")
        self.out.append(Finding(where, QUOTED_JSON_IN_MESSAGE, Severity.WARNING, text))

    def _backtracking(self, pattern: str, flags: str, key: str) -> None:
        try:
            compiled = compile_regex(pattern, flags)
        except RegexError:
            return  # WR401 reports it
        if compiled.notice:
            where = pointer_join(self.pointer, *self.path, key)
            self.out.append(Finding(where, BACKTRACKING_REGEX, Severity.WARNING, compiled.notice))


def _no_rules() -> Finding:
    """WR407: upstream accepts `validationCriteria: []`; it checks only that the output is not
    blank, which the author rarely means."""
    message = (
        "An empty validationCriteria only checks that the output is not blank; "
        "add the rules you mean, or leave validationCriteria out"
    )
    return Finding("/validationCriteria", NO_RULES, Severity.WARNING, message)


def _relative(base: str, problems: Iterable[Problem]) -> list[Finding]:
    # MALFORMED is skipped: the schema already reports the shape, on the exact key.
    return [
        Finding(base + p.pointer, p.code, Severity.ERROR, p.message)
        for p in problems
        if p.code != MALFORMED
    ]
