"""Text edits behind the quick fixes that lint diagnostics carry.

They are computed here, once, so every front end offers the same fixes: the language server turns
them into code actions; a future ``workrail validate --fix`` could apply them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..diagnostics import Fix, Span, TextEdit
from ..text.document import WorkflowDocument

__all__ = ["insert_property", "kebab_case", "placeholder_for", "replace_key", "replace_value"]


def _literal(doc: WorkflowDocument, value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def replace_value(doc: WorkflowDocument, pointer: str, value: Any, title: str) -> Fix | None:
    span = doc.value_span(pointer)
    if span is None:
        return None
    return Fix(title, (TextEdit(span, _literal(doc, value)),))


def replace_key(doc: WorkflowDocument, pointer: str, new_name: str) -> Fix | None:
    span = doc.key_span(pointer)
    if span is None:
        return None
    old = doc.text[span.start : span.end]
    new_text = json.dumps(new_name) if old.startswith('"') or doc.format == "json" else new_name
    return Fix(f"Rename to {new_name!r}", (TextEdit(span, new_text),))


def placeholder_for(schema: Any) -> Any:
    """A value of the right type for a property being added, for the author to fill in."""
    if not isinstance(schema, dict):
        return ""
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    return {
        "array": [],
        "object": {},
        "boolean": False,
        "integer": 0,
        "number": 0,
        "null": None,
    }.get(kind if isinstance(kind, str) else "", "")


def insert_property(
    doc: WorkflowDocument, object_pointer: str, name: str, value: Any
) -> Fix | None:
    """Add ``"name": value`` as the first member of the object, in the object's own layout."""
    span = doc.value_span(object_pointer)
    if span is None:
        return None
    text = doc.text
    body = text[span.start + 1 : span.end - 1] if text[span.start] in "{" else None
    title = f"Add the missing property {name!r}"
    if doc.format == "json":
        if body is None:
            return None
        member = f"{json.dumps(name)}: {_literal(doc, value)}"
        if not body.strip():
            return Fix(title, (TextEdit(Span(span.start, span.end), "{" + member + "}"),))
        first = re.search(r"\S", body)
        assert first is not None
        at = span.start + 1 + first.start()
        gap = text[span.start + 1 : at]
        separator = "," + (gap if "\n" in gap else " ")
        return Fix(title, (TextEdit(Span(at, at), member + separator),))
    if body is not None:  # YAML flow mapping: {a: 1}
        return None
    line_start = text.rfind("\n", 0, span.start) + 1
    indent = text[line_start : span.start]
    if indent.strip():  # the mapping starts after "- " or a key on the same line
        indent = " " * len(indent)
    return Fix(
        title,
        (TextEdit(Span(span.start, span.start), f"{name}: {_literal(doc, value)}\n{indent}"),),
    )


def kebab_case(name: str) -> str:
    """``My_Step Id`` → ``my-step-id`` (padded to the 3 characters ids need)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)
    kebab = re.sub(r"[^a-z0-9]+", "-", spaced.lower()).strip("-")[:64]
    return kebab.ljust(3, "x") if kebab else "new-id"
