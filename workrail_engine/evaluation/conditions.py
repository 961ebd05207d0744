"""The condition evaluator: ``runCondition``, loop conditions and rule conditions.

A condition is ``{"var": PATH, OPERATOR: value}`` with exactly one operator, or ``{"and": [...]}``,
``{"or": [...]}``, ``{"not": {...}}``; as upstream's schema and evaluator allow, ``{"var": PATH}``
alone tests the variable's truthiness and ``{}`` always holds. The semantics are strict on purpose (the old WorkRail's
lenient coercion and "any exception is false" hid authoring mistakes):

- ``var`` is a dotted path into the context; a segment indexes an object by key or a list by a
  decimal index (``files.0.name``). A path that does not resolve is *missing*.
- A missing variable makes every comparison false except ``not_equals``, which is true, so that
  ``not_equals`` always equals ``not equals``. Missing is not ``null``: ``equals: null`` needs a
  variable that is present and null.
- ``equals``, ``not_equals`` and ``in`` compare leniently, as upstream WorkRail does since 0.6:
  two strings equal when they match after trimming, ignoring case; a number equals a string that
  reads as that number ("5" equals 5); a boolean equals "true"/"yes"/"1" or "false"/"no"/"0" in
  any case. Anything else compares as JSON values: numbers numerically (1 == 1.0), a boolean is
  never a number, arrays and objects element by element.
- ``gt``/``gte``/``lt``/``lte`` compare numbers; a string that reads as a number counts as that
  number. A value whose type makes a comparison false (``gt`` on "high", ``startsWith`` on a
  number) adds a note saying which variable, what type it had and what was expected, when the
  caller collects notes: a skipped step must never go unexplained.
- ``contains``: a substring test when the variable is a string (and the operand a string),
  membership when it is an array; false for anything else. ``in``: the variable equals an element.
- ``matches``: an RE2 search (unanchored) on a string variable.
- ``{"var": PATH}`` alone holds when the variable is truthy as upstream (JavaScript) judges it:
  present and not ``false``, ``null``, ``0`` or ``""`` (an empty list or object is truthy).
  ``{}`` holds always, like no condition.

Malformed conditions are caught statically by ``condition_problems`` (the lint reports them);
``evaluate`` and ``describe`` raise ``ValueError`` for them instead of guessing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..errors import closest
from .problems import Problem, json_type_name, pointer_join
from .regexes import RegexError, backtracking_budget, compile_regex
from .templates import StepOutput

__all__ = [
    "MISSING",
    "OPERATORS",
    "as_number",
    "condition_problems",
    "describe",
    "evaluate",
    "json_equal",
    "lenient_equal",
    "resolve",
]

OPERATORS: tuple[str, ...] = (
    "equals",
    "not_equals",
    "gt",
    "gte",
    "lt",
    "lte",
    "in",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
)
_COMPOSITIONS = ("and", "or", "not")
_NUMERIC = ("gt", "gte", "lt", "lte")

MALFORMED = "WR400"
INVALID_REGEX = "WR401"
TYPE_MISMATCH = "WR402"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# --- values -------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values without Python's ``True == 1`` (numbers compare numerically)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")


def as_number(value: Any) -> float | None:
    if _is_number(value):
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def lenient_equal(a: Any, b: Any) -> bool:
    """``equals`` as upstream WorkRail compares: trimmed case-insensitive strings, numbers with
    numeric strings, booleans with "true"/"false" (and yes/no, 1/0); otherwise ``json_equal``."""
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    if isinstance(a, bool) and isinstance(b, str):
        return b.strip().lower() in (_TRUE if a else _FALSE)
    if isinstance(b, bool) and isinstance(a, str):
        return lenient_equal(b, a)
    if (isinstance(a, str) and _is_number(b)) or (_is_number(a) and isinstance(b, str)):
        x, y = as_number(a), as_number(b)
        return x is not None and y is not None and x == y
    return json_equal(a, b)


def resolve(context: Mapping[str, Any], path: str) -> Any:
    """The value at dotted ``path`` in ``context``, or ``MISSING``."""
    current: Any = context
    for segment in path.split("."):
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
        elif (
            isinstance(current, (list, tuple))
            and segment.isascii()
            and segment.isdigit()
            and int(segment) < len(current)
        ):
            current = current[int(segment)]
        elif isinstance(current, StepOutput) and segment in current.fields:
            current = current.fields[segment]
        else:
            return MISSING
    return current


# --- static checks ------------------------------------------------------------------------


def condition_problems(condition: Any) -> list[Problem]:
    """Every problem in ``condition``; pointers are relative to it ("/and/1/gt")."""
    problems: list[Problem] = []
    _check(condition, "", problems)
    return problems


def _check(node: Any, at: str, problems: list[Problem]) -> None:
    # `type(...) is dict` first: an isinstance of Mapping costs ~7× as much (ABCMeta)
    if type(node) is not dict and not isinstance(node, Mapping):
        problems.append(
            Problem(at, MALFORMED, f"A condition must be an object, not {json_type_name(node)}.")
        )
        return
    composition = [key for key in _COMPOSITIONS if key in node]
    if composition:
        _check_composition(node, composition, at, problems)
    else:
        _check_comparison(node, at, problems)


def _check_composition(
    node: Mapping[str, Any], keys: list[str], at: str, problems: list[Problem]
) -> None:
    if len(node) != 1:
        others = ", ".join(repr(key) for key in node if key != keys[0])
        problems.append(
            Problem(at, MALFORMED, f"A {keys[0]!r} condition has no other keys (found {others}).")
        )
        return
    key = keys[0]
    value = node[key]
    if key == "not":
        _check(value, pointer_join(at, "not"), problems)
        return
    if not isinstance(value, list) or not value:
        problems.append(
            Problem(
                pointer_join(at, key), MALFORMED, f"{key!r} needs a non-empty array of conditions."
            )
        )
        return
    for index, item in enumerate(value):
        _check(item, pointer_join(at, key, index), problems)


def _check_comparison(node: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    if not node:
        return  # {}: no condition, as upstream reads it
    path = node.get("var", MISSING)
    if path is MISSING:
        problems.append(
            Problem(
                at, MALFORMED, 'A comparison needs "var" (a dotted context path) and one operator.'
            )
        )
    elif not isinstance(path, str) or not path or "" in path.split("."):
        problems.append(
            Problem(
                pointer_join(at, "var"),
                MALFORMED,
                f'"var" must be a dotted path such as "review.files", not {_show(path)}.',
            )
        )
    operators = [key for key in node if key in OPERATORS]
    for key in node:
        if key != "var" and key not in OPERATORS:
            hint = closest(key, OPERATORS, n=1)
            suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
            problems.append(
                Problem(
                    pointer_join(at, key), MALFORMED, f"Unknown condition operator {key!r}{suffix}."
                )
            )
    if len(operators) > 1:
        problems.append(
            Problem(
                at,
                MALFORMED,
                f"A comparison has exactly one operator, found {', '.join(operators)}.",
            )
        )
    for operator in operators:
        problem = _operand_problem(operator, node[operator])
        if problem:
            problems.append(Problem(pointer_join(at, operator), problem[0], problem[1]))


def _operand_problem(operator: str, value: Any) -> tuple[str, str] | None:
    if operator in _NUMERIC:
        if not _is_number(value) or not math.isfinite(value):
            return (
                TYPE_MISMATCH,
                f"{operator!r} compares numbers; its value must be a number, not {json_type_name(value)}.",
            )
    elif operator == "in":
        if not isinstance(value, list):
            return TYPE_MISMATCH, f"'in' needs an array of values, not {json_type_name(value)}."
    elif operator in ("startsWith", "endsWith", "matches"):
        if not isinstance(value, str):
            return TYPE_MISMATCH, f"{operator!r} needs a string, not {json_type_name(value)}."
        if operator == "matches":
            try:
                compile_regex(value)
            except RegexError as error:
                return INVALID_REGEX, error.message
    return None


def _require_valid(condition: Any) -> None:
    problems = condition_problems(condition)
    if problems:
        details = "; ".join(f"{problem.pointer or '/'}: {problem.message}" for problem in problems)
        raise ValueError(f"Invalid condition: {details}")


# --- evaluation ---------------------------------------------------------------------------


def evaluate(
    condition: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    notes: list[str] | None = None,
) -> bool:
    """Whether ``condition`` holds in ``context`` (``None`` always holds); ValueError if malformed.

    ``notes``, when given, receives a sentence for each comparison a value's type made false."""
    if condition is None:
        return True
    _require_valid(condition)
    if context is None:
        context = {}
    if not isinstance(context, Mapping):
        raise ValueError(
            f"A condition is evaluated against an object, not {json_type_name(context)}."
        )
    with backtracking_budget():  # the caller's, when it opened one (a whole next step)
        return _evaluate(condition, context, notes)


def _evaluate(node: Mapping[str, Any], context: Mapping[str, Any], notes: list[str] | None) -> bool:
    if "and" in node:
        return all(_evaluate(item, context, notes) for item in node["and"])
    if "or" in node:
        return any(_evaluate(item, context, notes) for item in node["or"])
    if "not" in node:
        return not _evaluate(node["not"], context, notes)
    if not node:
        return True
    operator = next((key for key in node if key in OPERATORS), None)
    actual = resolve(context, node["var"])
    if operator is None:
        return _truthy(actual)
    wanted = _wanted_type(operator, actual, node[operator])
    if wanted is not None:
        if notes is not None:
            notes.append(
                f"Condition {node['var']} {_PHRASES.get(operator, operator)} "
                f"{_show(node[operator])} is false because {node['var']} is "
                f"{json_type_name(actual)} ({_show(actual)}), not {wanted}."
            )
        return False
    return _compare(operator, actual, node[operator])


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness, which upstream's ``{"var": x}`` tests (missing is falsy)."""
    if value is MISSING or value is None or value is False or value == "":
        return False
    return not (_is_number(value) and value == 0)


def _wanted_type(operator: str, actual: Any, expected: Any) -> str | None:
    """What ``actual`` should have been when its type alone makes the comparison false."""
    if actual is MISSING:
        return None
    if operator in _NUMERIC and as_number(actual) is None:
        return "a number (or a string that reads as one)"
    if operator in ("startsWith", "endsWith", "matches") and not isinstance(actual, str):
        return "a string"
    if operator == "contains" and not isinstance(actual, (str, list, tuple)):
        return "a string or an array"
    return None


def _compare(operator: str, actual: Any, expected: Any) -> bool:
    if actual is MISSING:
        return operator == "not_equals"
    if operator == "equals":
        return lenient_equal(actual, expected)
    if operator == "not_equals":
        return not lenient_equal(actual, expected)
    if operator in _NUMERIC:
        number = as_number(actual)
        return number is not None and _order(operator, number, expected)
    if operator == "in":
        return any(lenient_equal(actual, item) for item in expected)
    if operator == "contains":
        return _contains(actual, expected)
    if not isinstance(actual, str):
        return False
    if operator == "startsWith":
        return actual.startswith(expected)
    if operator == "endsWith":
        return actual.endswith(expected)
    return compile_regex(expected).search(actual)


def _order(operator: str, actual: float, expected: float) -> bool:
    if operator == "gt":
        return actual > expected
    if operator == "gte":
        return actual >= expected
    if operator == "lt":
        return actual < expected
    return actual <= expected


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(expected, str) and expected in actual
    if isinstance(actual, (list, tuple)):
        return any(json_equal(item, expected) for item in actual)
    return False


# --- plain English ------------------------------------------------------------------------

_PHRASES = {
    "equals": "is",
    "not_equals": "is not",
    "gt": "is greater than",
    "gte": "is at least",
    "lt": "is less than",
    "lte": "is at most",
    "contains": "contains",
    "startsWith": "starts with",
    "endsWith": "ends with",
}


def describe(condition: Mapping[str, Any] | None) -> str:
    """Plain English, e.g. ``taskScope is "large" and complexity is greater than 0.7``."""
    if condition is None:
        return "always"
    _require_valid(condition)
    return _describe(condition, nested=False)


def _describe(node: Mapping[str, Any], nested: bool) -> str:
    for key, joiner in (("and", " and "), ("or", " or ")):
        if key in node:
            parts = [_describe(item, nested=True) for item in node[key]]
            text = joiner.join(parts)
            return f"({text})" if nested and len(parts) > 1 else text
    if "not" in node:
        return f"not ({_describe(node['not'], nested=False)})"
    if not node:
        return "always"
    operator = next((key for key in node if key in OPERATORS), None)
    if operator is None:
        return f"{node['var']} is set and not false, null, 0 or empty"
    value = node[operator]
    if operator == "in":
        return f"{node['var']} is one of {', '.join(_show(item) for item in value)}"
    if operator == "matches":
        return f"{node['var']} matches the pattern /{value}/"
    return f"{node['var']} {_PHRASES[operator]} {_show(value)}"


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
