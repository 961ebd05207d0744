"""Schema errors as diagnostics, placed on the right text and worded for an author.

A wrong value is shown on the value, an unknown key on the key, a missing property on the
object's key (or its opening brace). Typos get the closest valid name or enum value, and a quick
fix that applies it. Validation is jsonschema-rs: the schema is compiled once per process.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ..definition.ids import STEP_ID_PATTERN, WORKFLOW_ID_PATTERN, WORKFLOW_ID_RULE
from ..diagnostics import Diagnostic, Fix, Severity, TextEdit
from ..errors import closest
from ..evaluation.problems import json_type_name
from ..schema import load_schema
from ..text.document import WorkflowDocument
from ..text.json_pointer import escape_token
from . import edits

__all__ = ["schema_diagnostics"]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(load_schema())


def _pointer(parts: list[str | int]) -> str:
    return "".join("/" + escape_token(p) for p in parts)


def _subschema(path: list[str | int]) -> Any:
    node: Any = load_schema()
    for part in path:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None
    return node


def _where(parts: list[str | int]) -> str:
    for part in reversed(parts):
        if isinstance(part, str):
            return repr(part)
    return "this value" if parts else "the workflow"


def _title(schema: Any) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    return title if isinstance(title, str) else "this object"


def _kind_title(schema: Any) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    return f" ({title})" if isinstance(title, str) else ""


def _article(title: str) -> str:
    if title == "this object":
        return title
    lowered = title[0].lower() + title[1:]
    return ("an " if lowered[0] in "aeiou" else "a ") + lowered


# Typo suggestions for keys need a closer match than ids: short keys are all alike at 50 %.
_KEY_CUTOFF = 70.0


def schema_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    validator = _validator()
    # Most files are valid: `is_valid` stops at a first error and builds no error objects, at
    # half the cost of `iter_errors` (which then runs only on the files with errors).
    if validator.is_valid(doc.value):
        return []
    errors = list(validator.iter_errors(doc.value))
    discriminators = {
        tuple(e.instance_path[:-1])
        for e in errors
        if e.instance_path and e.instance_path[-1] == "type" and e.kind.name in ("enum", "const")
    }
    unknown_keys = {tuple(e.instance_path) for e in errors if e.kind.name == "additionalProperties"}
    out: list[Diagnostic] = []
    for error in errors:
        where = tuple(error.instance_path)
        # A step whose `type` is wrong fails its kind's other rules too; the type is the news.
        if where in discriminators and error.kind.name in ("required", "additionalProperties"):
            continue
        # {"var": "x", "in": [..], "equal": 3} has "too many properties" because of the unknown
        # key; the unknown key (with its "did you mean") is the news.
        if where in unknown_keys and error.kind.name == "maxProperties":
            continue
        out.extend(_convert(doc, error))
    return out


def _convert(doc: WorkflowDocument, error: Any) -> list[Diagnostic]:
    parts: list[str | int] = list(error.instance_path)
    pointer = _pointer(parts)
    kind = error.kind.name
    detail = error.kind.as_dict()
    if kind == "additionalProperties":
        return _unknown_keys(doc, parts, error.schema_path, detail.get("unexpected", []))
    if kind == "required":
        return [_missing(doc, parts, error.schema_path, detail["property"])]
    if kind == "type":
        return [_wrong_type(doc, parts, error, detail.get("types", []))]
    if kind in ("enum", "const"):
        return [_bad_choice(doc, parts, error)]
    if kind == "pattern":
        return [_bad_pattern(doc, parts, error, detail.get("pattern", ""))]
    limit = detail.get("limit")
    if kind in _LIMITS and limit is not None:
        message = (
            f"{_where(parts)} must {_LIMITS[kind].format(limit=limit, s='' if limit == 1 else 's')}"
        )
    else:
        message = f"{_where(parts)}: {error.message}"
    return [_on_value(doc, "WR106", message, pointer)]


_LIMITS = {
    "minimum": "be at least {limit}",
    "maximum": "be at most {limit}",
    "exclusiveMinimum": "be greater than {limit}",
    "exclusiveMaximum": "be less than {limit}",
    "minLength": "be at least {limit} character{s} long",
    "maxLength": "be at most {limit} character{s} long",
    "minItems": "have at least {limit} item{s}",
    "maxItems": "have at most {limit} item{s}",
    "minProperties": "have at least {limit} propert{s}",
    "maxProperties": "have at most {limit} propert{s}",
}


def _wrong_type(
    doc: WorkflowDocument, parts: list[str | int], error: Any, types: list[str]
) -> Diagnostic:
    pointer = _pointer(parts)
    expected = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
    message = f"{_where(parts)} must be {expected}, not {json_type_name(error.instance)}"
    fix = None
    value = error.instance
    if pointer.endswith("/run/command") and isinstance(value, str):
        # A shell-style string: offer the argv list it most likely means (never run through a shell).
        argv = _split_command(value)
        if argv:
            message += f"; write the command as an argv list, e.g. {json.dumps(argv)}"
            fix = edits.replace_value(doc, pointer, argv, "Split into an argv list")
    elif doc.format == "yaml" and "string" in types and isinstance(value, bool | int | float):
        span = doc.span(pointer)
        raw = doc.text[span.start : span.end]
        message += f' (YAML reads {raw} as {json_type_name(value)}; quote it: "{raw}")'
        fix = Fix(f"Quote {raw}", (TextEdit(span, json.dumps(raw)),), safe=True)
    return _on_value(doc, "WR101", message, pointer, fix)


def _split_command(value: str) -> list[str]:
    import shlex

    try:
        return shlex.split(value)
    except ValueError:
        return []


def _on_value(
    doc: WorkflowDocument, code: str, message: str, pointer: str, fix: Fix | None = None
) -> Diagnostic:
    return Diagnostic(
        code, Severity.ERROR, message, pointer, doc.span(pointer), fixes=(fix,) if fix else ()
    )


@lru_cache(maxsize=1)
def _kinds_by_property() -> dict[str, list[str]]:
    """Property name → titles of the closed object kinds (step kinds, rule kinds…) that take it."""
    kinds: dict[str, list[str]] = {}
    for definition in load_schema().get("$defs", {}).values():
        if (
            isinstance(definition, dict)
            and definition.get("additionalProperties") is False
            and "title" in definition
        ):
            for name in definition.get("properties", {}):
                kinds.setdefault(name, []).append(definition["title"])
    return kinds


def _unknown_keys(
    doc: WorkflowDocument, parts: list[str | int], schema_path: list[str | int], names: list[str]
) -> list[Diagnostic]:
    owner = _subschema(list(schema_path[:-1]))
    allowed = sorted((owner or {}).get("properties", {})) if isinstance(owner, dict) else []
    out = []
    for name in names:
        child = _pointer([*parts, name])
        # A key of another kind (onFailure on a prompt step) is no typo: renaming it would be wrong.
        elsewhere = _kinds_by_property().get(name, [])
        suggestions = [] if elsewhere else closest(name, allowed, n=1, cutoff=_KEY_CUTOFF)
        message = f"Unknown property {name!r}{_kind_title(owner)}"
        fix = None
        if elsewhere:
            message = f"{name!r} belongs to {' and '.join(_article(k) for k in elsewhere)}, not to {_article(_title(owner))}"
        elif suggestions:
            message += f"; did you mean {suggestions[0]!r}?"
            fix = edits.replace_key(doc, child, suggestions[0])
        elif allowed:
            message += f"; allowed: {', '.join(allowed)}"
        span = doc.key_span(child) or doc.span(child)
        out.append(
            Diagnostic(
                "WR102",
                Severity.ERROR,
                message,
                child,
                span,
                fixes=(fix,) if fix else (),
                data={"allowed": allowed},
            )
        )
    return out


def _missing(
    doc: WorkflowDocument, parts: list[str | int], schema_path: list[str | int], name: str
) -> Diagnostic:
    owner = _subschema(list(schema_path[:-1]))
    pointer = _pointer(parts)
    prop_schema = (owner or {}).get("properties", {}).get(name) if isinstance(owner, dict) else None
    fix = edits.insert_property(doc, pointer, name, edits.placeholder_for(prop_schema))
    message = f"Missing required property {name!r}{_kind_title(owner)}"
    if name == "prompt" and "promptStep" in schema_path:
        # Upstream 3.x: the prompt may come as structured promptBlocks or from a routine template.
        message = "Missing 'prompt': a prompt step needs 'prompt', 'promptBlocks' or 'templateCall'"
    elif name == "steps" and "parallelGroup" in schema_path:
        message = (
            "Missing 'steps': a parallel group needs 'steps' (prompt or command steps) "
            "or 'parallelDelegations' (work handed to sub-agents)"
        )
    return Diagnostic(
        "WR103",
        Severity.ERROR,
        message,
        pointer,
        doc.opening_span(pointer),
        fixes=(fix,) if fix else (),
        data={"property": name},
    )


def _bad_choice(doc: WorkflowDocument, parts: list[str | int], error: Any) -> Diagnostic:
    schema = _subschema(list(error.schema_path[:-1])) or {}
    options: list[Any] = schema.get("enum") or [] if "enum" in schema else [schema.get("const")]
    pointer = _pointer(parts)
    shown = ", ".join(repr(o) for o in options)
    message = f"{_where(parts)} must be one of {shown}, not {error.instance!r}"
    fix = None
    if isinstance(error.instance, str):
        suggestions = closest(error.instance, [o for o in options if isinstance(o, str)], n=1)
        if suggestions:
            message += f"; did you mean {suggestions[0]!r}?"
            fix = edits.replace_value(doc, pointer, suggestions[0], f"Change to {suggestions[0]!r}")
    return _on_value(doc, "WR104", message, pointer, fix)


_ID_RULES = {
    STEP_ID_PATTERN: "lowercase letters, digits and '-'",
    WORKFLOW_ID_PATTERN: WORKFLOW_ID_RULE,
}


def _bad_pattern(
    doc: WorkflowDocument, parts: list[str | int], error: Any, pattern: str
) -> Diagnostic:
    pointer = _pointer(parts)
    value = error.instance
    fix = None
    rule = _ID_RULES.get(pattern)
    if rule and isinstance(value, str):
        message = f"{_where(parts)} {value!r} is not a valid id: use {rule}"
        fix = edits.replace_value(
            doc, pointer, edits.kebab_case(value), f"Change to {edits.kebab_case(value)!r}"
        )
    else:
        message = f"{_where(parts)} {value!r} does not match the pattern {pattern}"
    return _on_value(doc, "WR105", message, pointer, fix)
