"""The output-validation engine (the specs' ValidationEngine) behind ``validationCriteria``.

Criteria are a rule (``contains``, ``regex``, ``length``, ``schema``), a composition (``and``,
``or``, ``not`` with an optional ``message``) or a non-empty array of them (all must hold). A rule
whose ``condition`` does not hold in the context is skipped: it counts neither way. A failing
composition reports the messages of the rules that failed, never a generic sentence (the old
WorkRail's "Validation composition failed" left agents guessing). Semantics in
docs/conditions-and-rules.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..errors import InvalidCriteria, InvalidParams
from .conditions import condition_problems, describe, evaluate
from .json_schemas import json_schema_problems, parse_json_output, schema_errors
from .problems import Problem, pointer_join
from .regexes import FLAGS, RegexError, backtracking_budget, compile_regex

__all__ = [
    "RULE_TYPES",
    "OutputValidation",
    "criteria_problems",
    "describe_criteria",
    "require_valid_criteria",
    "validate_output",
]

RULE_TYPES = ("contains", "regex", "length", "schema")
_RULE_KEYS = {
    "contains": {"value"},
    "regex": {"pattern", "flags"},
    "length": {"min", "max"},
    "schema": {"schema"},
}
_COMMON_KEYS = {"type", "message", "condition"}
_ALLOWED_KEYS = {kind: frozenset(_COMMON_KEYS | keys) for kind, keys in _RULE_KEYS.items()}
_COMPOSITIONS = ("and", "or", "not")

MALFORMED, INVALID_REGEX, TYPE_MISMATCH, EMPTY_RANGE = "WR400", "WR401", "WR402", "WR404"


@dataclass
class OutputValidation:
    """Whether an output passed a step's validation criteria, and what to fix if not."""

    valid: bool
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "issues": list(self.issues),
            "suggestions": list(self.suggestions),
        }


# --- static checks ------------------------------------------------------------------------


def criteria_problems(criteria: Any) -> list[Problem]:
    """Every problem inside ``criteria``; pointers are relative to it ("/1/condition/gt")."""
    problems: list[Problem] = []
    if criteria is None:
        return problems
    if isinstance(criteria, list):
        # An empty list is upstream's "no rules": the output must only not be blank.
        for index, item in enumerate(criteria):
            _check(item, pointer_join("", index), problems)
    else:
        _check(criteria, "", problems)
    return problems


def _check_list(items: Any, at: str, name: str, problems: list[Problem]) -> None:
    if not isinstance(items, list) or not items:
        problems.append(Problem(at, MALFORMED, f"{name} needs a non-empty array of rules."))
        return
    for index, item in enumerate(items):
        _check(item, pointer_join(at, index), problems)


def _check(node: Any, at: str, problems: list[Problem]) -> None:
    # `type(...) is dict` first: an isinstance of Mapping costs ~7× as much (ABCMeta), per rule
    if type(node) is not dict and not isinstance(node, Mapping):
        problems.append(
            Problem(
                at,
                MALFORMED,
                "A validation criterion must be an object (a rule or an and/or/not composition).",
            )
        )
        return
    # Most nodes are rules: the three membership tests first, the list only for a composition.
    if "and" in node or "or" in node or "not" in node:
        _check_composition(node, [key for key in _COMPOSITIONS if key in node], at, problems)
    elif "type" in node:
        _check_rule(node, at, problems)
    else:
        problems.append(
            Problem(
                at,
                MALFORMED,
                'A validation rule needs "type" (contains, regex, length or schema), or use and/or/not.',
            )
        )


def _check_composition(
    node: Mapping[str, Any], operators: list[str], at: str, problems: list[Problem]
) -> None:
    operator = operators[0]
    extra = [key for key in node if key not in (operator, "message")]
    if extra:
        problems.append(
            Problem(
                at,
                MALFORMED,
                f'An {operator!r} composition has only {operator!r} and "message" '
                f"(found {', '.join(map(repr, extra))}).",
            )
        )
    _check_message(node, at, problems, required=False)
    if operator == "not":
        _check(node["not"], pointer_join(at, "not"), problems)
    else:
        _check_list(node[operator], pointer_join(at, operator), repr(operator), problems)


def _check_message(
    node: Mapping[str, Any], at: str, problems: list[Problem], required: bool
) -> None:
    message = node.get("message")
    if message is None and not required:
        return
    # A rule's "" is allowed, as upstream's schema allows it: the rule then says what it wanted
    # itself. A composition's message is ours (upstream has none): it is left out, not empty.
    if not isinstance(message, str) or (not message and not required):
        problems.append(
            Problem(
                pointer_join(at, "message") if "message" in node else at,
                MALFORMED,
                '"message" must be a string telling the agent what is wrong'
                + ("." if required else " (leave it out rather than empty)."),
            )
        )


def _check_rule(rule: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    kind = rule["type"]
    if kind not in RULE_TYPES:
        problems.append(
            Problem(
                pointer_join(at, "type"),
                MALFORMED,
                f"Unknown rule type {kind!r}: use contains, regex, length or schema.",
            )
        )
        return
    allowed = _ALLOWED_KEYS[kind]
    if not allowed.issuperset(rule):  # one test in C for the usual rule, which has no other key
        problems.extend(
            Problem(
                pointer_join(at, key),
                MALFORMED,
                f"A {kind} rule has no {key!r} "
                f"(it takes {', '.join(sorted(_RULE_KEYS[kind]))}, message, condition).",
            )
            for key in rule
            if key not in allowed
        )
    _check_message(rule, at, problems, required=True)
    if "condition" in rule:
        problems.extend(
            problem.under(pointer_join(at, "condition"))
            for problem in condition_problems(rule["condition"])
        )
    _OPERAND_CHECKS[kind](rule, at, problems)


# A rule without its operand (a contains rule's "value", a regex rule's "pattern", a schema
# rule's "schema") is upstream's schema's to accept; it fails every output, and WR408 says so.
OPERANDS = {"contains": "value", "regex": "pattern", "schema": "schema"}


def _check_contains(rule: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    if "value" not in rule:
        return
    value = rule.get("value")
    if not isinstance(value, str) or not value:
        problems.append(
            Problem(
                pointer_join(at, "value"),  # present: a rule without it returned above
                TYPE_MISMATCH,
                'A contains rule needs "value": the non-empty text the output must contain.',
            )
        )


def _check_regex(rule: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    if "pattern" not in rule:
        return
    pattern, flags = rule.get("pattern"), rule.get("flags", "")
    if not isinstance(pattern, str) or not pattern:
        problems.append(
            Problem(
                pointer_join(at, "pattern"),
                TYPE_MISMATCH,
                'A regex rule needs "pattern": a non-empty RE2 regular expression.',
            )
        )
        return
    if not isinstance(flags, str) or set(flags) - set(FLAGS):
        problems.append(
            Problem(
                pointer_join(at, "flags"),
                TYPE_MISMATCH,
                f'"flags" is a string of i (ignore case), m (multi-line) and s (dot matches newline), not {flags!r}.',
            )
        )
        flags = ""
    try:
        compile_regex(pattern, flags)
    except RegexError as error:
        problems.append(Problem(pointer_join(at, "pattern"), INVALID_REGEX, error.message))


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_length(rule: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    for key in ("min", "max"):
        if key in rule and not _is_count(rule[key]):
            problems.append(
                Problem(
                    pointer_join(at, key),
                    TYPE_MISMATCH,
                    f"{key!r} of a length rule must be a non-negative integer (characters).",
                )
            )
    low, high = rule.get("min"), rule.get("max")
    if _is_count(low) and _is_count(high) and low > high:
        problems.append(
            Problem(
                pointer_join(at, "min"),
                EMPTY_RANGE,
                f"min ({low}) is greater than max ({high}): no output can pass.",
            )
        )


def _check_schema(rule: Mapping[str, Any], at: str, problems: list[Problem]) -> None:
    if "schema" not in rule:
        return
    problems.extend(
        problem.under(pointer_join(at, "schema"))
        for problem in json_schema_problems(rule["schema"])
    )


_OPERAND_CHECKS = {
    "contains": _check_contains,
    "regex": _check_regex,
    "length": _check_length,
    "schema": _check_schema,
}


# --- evaluation ---------------------------------------------------------------------------


@dataclass
class _Outcome:
    """What one rule or composition said of an output, and whether it applied at all."""

    applies: bool
    passed: bool = True
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)


_SKIPPED = _Outcome(applies=False)


def validate_output(
    criteria: Any, output: str, context: Mapping[str, Any] | None = None
) -> OutputValidation:
    """Check ``output`` against ``criteria``; raises InvalidCriteria when the criteria are broken."""
    require_valid_criteria(criteria)
    if not isinstance(output, str):
        raise InvalidParams("output must be a string", details=f"got {type(output).__name__}")
    if context is not None and not isinstance(context, Mapping):
        raise InvalidParams("context must be an object", details=f"got {type(context).__name__}")
    if criteria is None:
        return OutputValidation(True)
    if criteria == []:
        # Upstream's reading of "no rules": any output but a blank one.
        if output.strip():
            return OutputValidation(True)
        return OutputValidation(False, ["The output is empty."], ["Give the step's output."])
    with backtracking_budget():  # all the rules of one validation share it
        outcome = _outcome(criteria, output, context or {})
    if not outcome.applies or outcome.passed:
        return OutputValidation(True, [], _double_encoding_note(criteria, output))
    return OutputValidation(False, outcome.issues, list(dict.fromkeys(outcome.suggestions)))


def require_valid_criteria(criteria: Any) -> None:
    """Raises InvalidCriteria naming every problem of ``criteria`` (None: no criteria, valid)."""
    problems = criteria_problems(criteria)
    if problems:
        listed = "; ".join(f"{problem.pointer or '/'}: {problem.message}" for problem in problems)
        raise InvalidCriteria(
            f"Invalid validation criteria: {listed}",
            problems=[problem.to_dict() for problem in problems],
        )


def _outcome(node: Any, output: str, context: Mapping[str, Any]) -> _Outcome:
    if isinstance(node, list):
        return _all_of(node, None, output, context)
    if "and" in node:
        return _all_of(node["and"], node.get("message"), output, context)
    if "or" in node:
        return _any_of(node["or"], node.get("message"), output, context)
    if "not" in node:
        return _none_of(node, output, context)
    if "condition" in node and not evaluate(node["condition"], context):
        return _SKIPPED
    missing = OPERANDS.get(node["type"])
    if missing is not None and missing not in node:
        issue = (
            node["message"] or f"This {node['type']} rule has no {missing!r}: no output passes it."
        )
        return _Outcome(
            True, False, [issue], [f"The workflow's author must give the rule its {missing!r}."]
        )
    return _RULE_CHECKS[node["type"]](node, output)


def _all_of(
    items: list[Any], message: str | None, output: str, context: Mapping[str, Any]
) -> _Outcome:
    outcomes = [o for o in (_outcome(item, output, context) for item in items) if o.applies]
    if not outcomes:
        return _SKIPPED
    failed = [o for o in outcomes if not o.passed]
    if not failed:
        return _Outcome(True)
    issues = [issue for o in failed for issue in o.issues]
    return _Outcome(
        True,
        False,
        ([message] if message else []) + issues,
        [s for o in failed for s in o.suggestions],
    )


def _any_of(
    items: list[Any], message: str | None, output: str, context: Mapping[str, Any]
) -> _Outcome:
    outcomes = [o for o in (_outcome(item, output, context) for item in items) if o.applies]
    if not outcomes:
        return _SKIPPED
    if any(o.passed for o in outcomes):
        return _Outcome(True)
    alternatives = [_joined(o.issues) for o in outcomes]
    detail = "none of: " + "; ".join(alternatives)
    options = [" ".join(o.suggestions) for o in outcomes if o.suggestions]
    suggestions = (
        [
            "Satisfy at least one of: "
            + " ".join(f"({n}) {text}" for n, text in enumerate(options, 1))
        ]
        if options
        else []
    )
    return _Outcome(True, False, ([message] if message else []) + [detail], suggestions)


def _joined(issues: list[str]) -> str:
    return issues[0] if len(issues) == 1 else "(" + "; ".join(issues) + ")"


def _none_of(node: Mapping[str, Any], output: str, context: Mapping[str, Any]) -> _Outcome:
    inner = _outcome(node["not"], output, context)
    if not inner.applies:
        return _SKIPPED
    if not inner.passed:
        return _Outcome(True)
    issue = node.get("message") or f"must not: {_requirement(node['not'])}"
    return _Outcome(True, False, [issue], [_negated_suggestion(node["not"])])


def _requirement(node: Any) -> str:
    """What a criterion demands, in its author's words where there are some."""
    if isinstance(node, Mapping) and node.get("message"):
        return str(node["message"])
    if isinstance(node, list):
        return " and ".join(_requirement(item) for item in node)
    if "not" in node:
        return f"not ({_requirement(node['not'])})"
    joiner = " and " if "and" in node else " or "
    return "(" + joiner.join(_requirement(item) for item in node.get("and") or node.get("or")) + ")"


def _negated_suggestion(node: Any) -> str:
    kind = node.get("type") if isinstance(node, Mapping) else None
    if kind == "contains":
        return f"Remove {_quote(node['value'])} from the output."
    if kind == "regex":
        return f"Change the output so that it no longer matches {_slashed(node)}."
    if kind == "length":
        low, high = node.get("min"), node.get("max")
        bounds = [
            f"shorter than {low}" if low is not None else "",
            f"longer than {high}" if high is not None else "",
        ]
        return f"Make the output {' or '.join(b for b in bounds if b) or 'impossible to measure'} characters."
    return f"Change the output so that this no longer holds: {_requirement(node)}."


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _slashed(rule: Mapping[str, Any]) -> str:
    return f"/{rule['pattern']}/{rule.get('flags', '')}"


def _check_contains_rule(rule: Mapping[str, Any], output: str) -> _Outcome:
    if rule["value"] in output:
        return _Outcome(True)
    value = rule["value"]
    # Upstream's default message shows the text after a colon, never quoted: quoted, a JSON value
    # would come out escaped ("{\"a\": 1}"), and agents copy that escaped string (WR409).
    issue = rule["message"] or f"Output must include: {value}"
    if '"' in value or "\\" in value:
        return _Outcome(
            True, False, [issue], [f"Include this text in the output as written: {value}"]
        )
    return _Outcome(True, False, [issue], [f"Include {_quote(value)} in the output."])


def _check_regex_rule(rule: Mapping[str, Any], output: str) -> _Outcome:
    if compile_regex(rule["pattern"], rule.get("flags", "")).search(output):
        return _Outcome(True)
    issue = rule["message"] or f"The output must match {_slashed(rule)}."
    return _Outcome(True, False, [issue], [f"Make the output match {_slashed(rule)}."])


def _check_length_rule(rule: Mapping[str, Any], output: str) -> _Outcome:
    size, low, high = len(output), rule.get("min"), rule.get("max")
    if low is not None and size < low:
        return _Outcome(
            True,
            False,
            [rule["message"] or f"The output must be at least {low} characters long."],
            [f"Lengthen the output to at least {low} characters (it has {size})."],
        )
    if high is not None and size > high:
        return _Outcome(
            True,
            False,
            [rule["message"] or f"The output must be at most {high} characters long."],
            [f"Shorten the output to at most {high} characters (it has {size})."],
        )
    return _Outcome(True)


def _check_schema_rule(rule: Mapping[str, Any], output: str) -> _Outcome:
    value, error = parse_json_output(output)
    message = rule["message"] or "The output does not satisfy the step's JSON Schema"
    if error:
        issue = f"{message} (the output is not JSON: {error})"
        return _Outcome(
            True,
            False,
            [issue],
            ["Return the output as one JSON document, with nothing before or after it."],
        )
    errors = schema_errors(rule["schema"], value)
    decoded = _decoded_once(value)
    if errors and decoded is not None and not schema_errors(rule["schema"], decoded):
        errors = []  # a JSON string holding the JSON asked for: accepted, with a note
    if not errors:
        return _Outcome(True)
    shown = "; ".join(f"at {where}: {text}" for where, text in errors[:5])
    if len(errors) > 5:
        shown += f"; and {len(errors) - 5} more"
    suggestions = [f"Fix the value at {where} in the JSON output." for where, _ in errors[:5]]
    return _Outcome(True, False, [f"{message} ({shown})"], suggestions)


def _decoded_once(value: Any) -> Any:
    """The object or array a JSON string holds (an agent's double-encoded output), else None."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return None
    decoded, error = parse_json_output(value)
    return None if error else decoded


def _double_encoding_note(criteria: Any, output: str) -> list[str]:
    """The note on an output that passed a schema rule only once decoded a second time."""
    if '"schema"' not in json.dumps(criteria):
        return []
    value, error = parse_json_output(output)
    if error or _decoded_once(value) is None:
        return []
    return [
        "The output was double-encoded JSON (a JSON string holding the object); it was decoded "
        "once for the schema rule. Return the object itself, not a string of it."
    ]


_RULE_CHECKS = {
    "contains": _check_contains_rule,
    "regex": _check_regex_rule,
    "length": _check_length_rule,
    "schema": _check_schema_rule,
}


# --- plain words --------------------------------------------------------------------------


def describe_criteria(
    criteria: Any, context: Mapping[str, Any] | None = None, *, checked: bool = False
) -> list[str]:
    """One line per applicable rule (with a context, rules whose condition fails are left out).

    ``checked``: the caller has already passed these very criteria through
    `require_valid_criteria` (the navigator does once per served definition)."""
    if criteria is None:
        return []
    if not checked:
        require_valid_criteria(criteria)
    return _describe(criteria, context)


def _describe(node: Any, context: Mapping[str, Any] | None) -> list[str]:
    if isinstance(node, list) or "and" in node:
        return [
            line
            for item in (node if isinstance(node, list) else node["and"])
            for line in _describe(item, context)
        ]
    if "or" in node:
        options = [
            " and ".join(lines)
            for lines in (_describe(item, context) for item in node["or"])
            if lines
        ]
        if not options:
            return []
        head = (
            f"{node['message']}: at least one of: " if node.get("message") else "At least one of: "
        )
        return [options[0]] if len(options) == 1 else [head + "; ".join(options)]
    if "not" in node:
        inner = _describe(node["not"], context)
        if not inner:
            return []
        return [node.get("message") or "Must not hold: " + " and ".join(inner)]
    if "condition" in node:
        if context is not None and not evaluate(node["condition"], context):
            return []
        if context is None:
            when = f"only when {describe(node['condition'])}"
            return [
                f"{node['message']} ({_plain(node)}; {when})"
                if node["message"]
                else f"{_plain(node)} ({when})"
            ]
    # a rule with message "" says what it checks in plain words alone
    return [f"{node['message']} ({_plain(node)})" if node["message"] else _plain(node)]


def _plain(rule: Mapping[str, Any]) -> str:
    kind = rule["type"]
    if kind == "contains":
        return f"the output contains {_quote(rule['value'])}"
    if kind == "regex":
        return f"the output matches {_slashed(rule)}"
    if kind == "length":
        low, high = rule.get("min"), rule.get("max")
        if low is not None and high is not None:
            return f"the output is {low} to {high} characters long"
        if low is not None:
            return f"the output is at least {low} characters long"
        return f"the output is at most {high} characters long" if high is not None else "any length"
    required = rule["schema"].get("required") if isinstance(rule["schema"], Mapping) else None
    suffix = (
        f" with {', '.join(map(str, required))}" if isinstance(required, list) and required else ""
    )
    return f"the output is JSON matching the step's schema{suffix}"
