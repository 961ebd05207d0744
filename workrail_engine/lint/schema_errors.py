"""Schema errors as diagnostics, placed on the right text and worded for an author.

A wrong value is shown on the value, an unknown key on the key, a missing property on the
object's key (or its opening brace). Typos get the closest valid name or enum value, and a quick
fix that applies it. Validation is jsonschema-rs: the schema is compiled once per process.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..diagnostics import Diagnostic, Fix, Severity
from ..document import WorkflowDocument
from ..errors import closest
from ..schema import load_schema
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
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _subschema(path: list[str | int]) -> Any:
    node: Any = load_schema()
    for part in path:
        if isinstance(node, dict):
            node = node.get(part)  # type: ignore[call-overload]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None
    return node


def _describe_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _where(parts: list[str | int]) -> str:
    for part in reversed(parts):
        if isinstance(part, str):
            return repr(part)
    return "this value" if parts else "the workflow"


def _kind_title(schema: Any) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    return f" ({title})" if isinstance(title, str) else ""


def schema_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    errors = list(_validator().iter_errors(doc.value))
    discriminators = {
        tuple(e.instance_path[:-1]) for e in errors if e.instance_path and e.instance_path[-1] == "type" and e.kind.name in ("enum", "const")
    }
    out: list[Diagnostic] = []
    for error in errors:
        # A step whose `type` is wrong fails its kind's other rules too; the type is the news.
        if tuple(error.instance_path) in discriminators and error.kind.name in ("required", "additionalProperties"):
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
        expected = " or ".join(_TYPE_NAMES.get(t, t) for t in detail.get("types", []))
        message = f"{_where(parts)} must be {expected}, not {_describe_type(error.instance)}"
        return [_on_value(doc, "WR101", message, pointer)]
    if kind in ("enum", "const"):
        return [_bad_choice(doc, parts, error)]
    if kind == "pattern":
        return [_bad_pattern(doc, parts, error, detail.get("pattern", ""))]
    message = f"{_where(parts)}: {error.message}"
    return [_on_value(doc, "WR106", message, pointer)]


def _on_value(doc: WorkflowDocument, code: str, message: str, pointer: str, fix: Fix | None = None) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, pointer, doc.span(pointer), fixes=(fix,) if fix else ())


def _unknown_keys(doc: WorkflowDocument, parts: list[str | int], schema_path: list[str | int], names: list[str]) -> list[Diagnostic]:
    owner = _subschema(list(schema_path[:-1]))
    allowed = sorted((owner or {}).get("properties", {})) if isinstance(owner, dict) else []
    out = []
    for name in names:
        child = _pointer([*parts, name])
        suggestions = closest(name, allowed, n=1)
        message = f"Unknown property {name!r}{_kind_title(owner)}"
        fix = None
        if suggestions:
            message += f"; did you mean {suggestions[0]!r}?"
            fix = edits.replace_key(doc, child, suggestions[0])
        elif allowed:
            message += f"; allowed: {', '.join(allowed)}"
        span = doc.key_span(child) or doc.span(child)
        out.append(Diagnostic("WR102", Severity.ERROR, message, child, span, fixes=(fix,) if fix else (), data={"allowed": allowed}))
    return out


def _missing(doc: WorkflowDocument, parts: list[str | int], schema_path: list[str | int], name: str) -> Diagnostic:
    owner = _subschema(list(schema_path[:-1]))
    pointer = _pointer(parts)
    prop_schema = (owner or {}).get("properties", {}).get(name) if isinstance(owner, dict) else None
    fix = edits.insert_property(doc, pointer, name, edits.placeholder_for(prop_schema))
    message = f"Missing required property {name!r}{_kind_title(owner)}"
    return Diagnostic(
        "WR103", Severity.ERROR, message, pointer, doc.opening_span(pointer), fixes=(fix,) if fix else (), data={"property": name}
    )


def _bad_choice(doc: WorkflowDocument, parts: list[str | int], error: Any) -> Diagnostic:
    schema = _subschema(list(error.schema_path[:-1])) or {}
    options = schema.get("enum") if "enum" in schema else [schema.get("const")]
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


def _bad_pattern(doc: WorkflowDocument, parts: list[str | int], error: Any, pattern: str) -> Diagnostic:
    pointer = _pointer(parts)
    value = error.instance
    fix = None
    if pattern == "^[a-z0-9-]+$" and isinstance(value, str):
        message = f"{_where(parts)} {value!r} is not a valid id: use lowercase letters, digits and '-'"
        fix = edits.replace_value(doc, pointer, edits.kebab_case(value), f"Change to {edits.kebab_case(value)!r}")
    else:
        message = f"{_where(parts)} {value!r} does not match the pattern {pattern}"
    return _on_value(doc, "WR105", message, pointer, fix)
