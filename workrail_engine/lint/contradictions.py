"""Conditions that can never hold: an `and` of comparisons on one variable that no value meets.

Sound before complete: a pair is reported only when no value of any type can meet both under the
evaluator's lenient comparisons (`evaluation.conditions`): `"large"` and `"small"`; `5` and
`"high"`; `true` and `false`; `gt 5` with `lt 3`; `equals "a"` with `not_equals "A "`; `in` lists
that share nothing. Operands whose lenient meaning overlaps another type's (numeric strings,
`"yes"`/`"1"`, which equal `true`; `null`, arrays, objects) are never taken to contradict
anything, nor are `or`, `not`, `contains`, `matches` or a missing variable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..evaluation.conditions import as_number  # the evaluator's own reading of a number
from ..evaluation.problems import pointer_join

__all__ = ["Atom", "atoms", "contradiction"]

_BOOLEAN_WORDS = frozenset({"true", "yes", "1", "false", "no", "0"})
_BOUNDS = ("gt", "gte", "lt", "lte")
_OPERATORS = frozenset({"equals", "in", "not_equals", *_BOUNDS})

# A value as lenient `equals` sees it: ("s", folded text), ("n", number) or ("b", truth); None
# where its meaning overlaps another kind's.
Key = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class Atom:
    """One comparison of a condition: ``var`` ``operator`` ``operand``."""

    pointer: str  # relative to the condition the walk started at
    var: str
    operator: str
    operand: Any


def atoms(condition: Any, at: str = "") -> Iterator[Atom]:
    """The comparisons that must all hold for ``condition`` to hold: itself, or the members of an
    `and` (nested `and`s too)."""
    if not isinstance(condition, Mapping):
        return
    if len(condition) == 1 and isinstance(condition.get("and"), list):
        for index, member in enumerate(condition["and"]):
            yield from atoms(member, pointer_join(at, "and", index))
        return
    if len(condition) == 2 and isinstance(condition.get("var"), str):
        operator = next(key for key in condition if key != "var")
        if operator in _OPERATORS:
            yield Atom(at, condition["var"], operator, condition[operator])


def contradiction(earlier: list[Atom], atom: Atom) -> tuple[Atom, str] | None:
    """The atom of ``earlier`` that ``atom`` contradicts, with why (on the same variable)."""
    for other in earlier:
        if other.var == atom.var and _excludes(other, atom):
            return other, f"no value meets both {_show(other)} and {_show(atom)}"
    same = [other for other in earlier if other.var == atom.var]
    if atom.operator in _BOUNDS and same and _empty_range([*same, atom]):
        return same[0], f"no number meets {' and '.join(_show(a) for a in [*same, atom])}"
    return None


def _key(value: Any) -> Key | None:
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", float(value))
    if isinstance(value, str):
        folded = value.strip().casefold()
        if as_number(value) is not None or folded in _BOOLEAN_WORDS:
            return None
        return ("s", folded)
    return None


def _disjoint(a: Key | None, b: Key | None) -> bool:
    # A number and a boolean may both equal one string ("1" equals 1 and true).
    return a is not None and b is not None and a != b and {a[0], b[0]} != {"n", "b"}


def _allowed(atom: Atom) -> list[Key | None] | None:
    """The values an equals/in atom lets through, as keys; None for other operators."""
    if atom.operator == "equals":
        return [_key(atom.operand)]
    if atom.operator == "in" and isinstance(atom.operand, list) and atom.operand:
        return [_key(value) for value in atom.operand]
    return None


def _excludes(a: Atom, b: Atom) -> bool:
    allowed_a, allowed_b = _allowed(a), _allowed(b)
    if allowed_a is not None and allowed_b is not None:
        return all(_disjoint(x, y) for x in allowed_a for y in allowed_b)
    for one, other in ((a, b), (b, a)):
        allowed = _allowed(one)
        if allowed is None:
            continue
        if other.operator == "not_equals":
            refused = _key(other.operand)
            return refused is not None and all(key == refused for key in allowed)
        if other.operator in _BOUNDS and _is_number(other.operand):
            return all(not _within(key, other) for key in allowed)
    return False


def _within(key: Key | None, bound: Atom) -> bool:
    """Whether a value equal to ``key`` may meet the numeric ``bound``."""
    if key is None or key[0] == "b":
        return True  # "1" equals true and is 1
    if key[0] == "s":
        return False  # not a number, so no numeric comparison holds
    return _meets(key[1], bound)


def _meets(number: float, bound: Atom) -> bool:
    limit = float(bound.operand)
    return {
        "gt": number > limit,
        "gte": number >= limit,
        "lt": number < limit,
        "lte": number <= limit,
    }[bound.operator]


def _empty_range(bounds: list[Atom]) -> bool:
    numeric = [b for b in bounds if b.operator in _BOUNDS and _is_number(b.operand)]
    lows = [b for b in numeric if b.operator in ("gt", "gte")]
    highs = [b for b in numeric if b.operator in ("lt", "lte")]
    for low in lows:
        for high in highs:
            a, b = float(low.operand), float(high.operand)
            if a > b or (a == b and (low.operator == "gt" or high.operator == "lt")):
                return True
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(atom: Atom) -> str:
    return f"{atom.var!r} {atom.operator} {json.dumps(atom.operand, ensure_ascii=False)}"
