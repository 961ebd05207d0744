"""Snippet text for values the schema describes (LSP snippet syntax), or plain text without it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .schema_model import SchemaModel

__all__ = ["body_text", "value_snippet"]

_PLACEHOLDER = re.compile(r"\$\{\d+(?::([^}]*))?\}|\$\d+")


def body_text(body: Any, snippets: bool, indent: str = "  ") -> str:
    """A ``defaultSnippets`` body as JSON text; without snippet support, placeholders become text."""
    text = json.dumps(body, indent=len(indent), ensure_ascii=False)
    # A snippet reads "\\" as an escaped backslash; JSON escapes must survive the expansion.
    return text.replace("\\", "\\\\") if snippets else _plain(text)


def _plain(text: str) -> str:
    return _PLACEHOLDER.sub(lambda m: m.group(1) or "", text)


def _escape(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace("$", "\\$")
        .replace("}", "\\}")
        .replace(",", "\\,")
        .replace("|", "\\|")
    )


def value_snippet(
    schema: Mapping[str, Any], model: SchemaModel, snippets: bool, stop: int = 1
) -> str:
    """What to insert after ``"key": `` for a property with this schema."""
    text = _snippet(schema, model, stop, depth=0)
    return text if snippets else _plain(text)


def _snippet(schema: Mapping[str, Any], model: SchemaModel, stop: int, depth: int) -> str:
    nodes = model.effective(schema)
    enum = next((n["enum"] for n in nodes if "enum" in n), None)
    if enum:
        choices = ",".join(_escape(json.dumps(v, ensure_ascii=False)) for v in enum)
        return f"${{{stop}|{choices}|}}"
    if any("const" in n for n in nodes):
        return json.dumps(next(n["const"] for n in nodes if "const" in n))
    kinds = _types(nodes)
    default = next((n["default"] for n in nodes if "default" in n), None)
    if "string" in kinds:
        return f'"${{{stop}:{_escape(default)}}}"' if isinstance(default, str) else f'"${stop}"'
    if kinds & {"number", "integer"}:
        return f"${{{stop}:{default if default is not None else 0}}}"
    if "boolean" in kinds:
        return (
            f"${{{stop}|true,false|}}" if default is None else f"${{{stop}:{json.dumps(default)}}}"
        )
    if "array" in kinds:
        return f"[${stop}]"
    if "object" in kinds:
        return _object_snippet(nodes, model, stop, depth)
    return f"${stop}"


def _object_snippet(
    nodes: list[Mapping[str, Any]], model: SchemaModel, stop: int, depth: int
) -> str:
    # A new object gets its required properties (which the JSON language server does not do).
    required = model.required(nodes)
    properties = model.properties(nodes)
    if not required or depth > 1:
        return f"{{${stop}}}"
    parts = []
    for name in required:
        schema = properties.get(name, {})
        parts.append(f'"{name}": {_snippet(schema, model, stop, depth + 1)}')
        stop += 1
    return "{" + ", ".join(parts) + "}"


def _types(nodes: list[Mapping[str, Any]]) -> set[str]:
    kinds: set[str] = set()
    for node in nodes:
        kind = node.get("type")
        if isinstance(kind, str):
            kinds.add(kind)
        elif isinstance(kind, list):
            kinds.update(k for k in kind if isinstance(k, str))
    return kinds


# -- YAML --------------------------------------------------------------------------------------

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./@-][A-Za-z0-9 _./@()-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


def scalar_text(value: Any, yaml: bool) -> str:
    """A scalar as JSON, or as YAML: plain where YAML reads it back as the same string."""
    text = json.dumps(value, ensure_ascii=False)
    if not yaml or not isinstance(value, str):
        return text
    plain = (
        _PLAIN_SAFE.match(value)
        and value.lower() not in _YAML_WORDS
        and not _looks_numeric(value)
        and not value.endswith(" ")
    )
    return value if plain else text  # a JSON string is a valid YAML double-quoted string


def _looks_numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return value.startswith(("0x", "0o"))
    return True


def yaml_value_snippet(
    schema: Mapping[str, Any], model: SchemaModel, snippets: bool, indent: str, stop: int = 1
) -> str:
    """What to insert after ``key:`` in YAML: `` value`` or an indented block on the next lines."""
    text = _yaml_snippet(schema, model, stop, indent, depth=0)
    return text if snippets else _plain(text)


def _yaml_snippet(
    schema: Mapping[str, Any], model: SchemaModel, stop: int, indent: str, depth: int
) -> str:
    nodes = model.effective(schema)
    enum = next((n["enum"] for n in nodes if "enum" in n), None)
    if enum:
        choices = ",".join(_escape(scalar_text(v, True)) for v in enum)
        return f" ${{{stop}|{choices}|}}"
    if any("const" in n for n in nodes):
        return " " + scalar_text(next(n["const"] for n in nodes if "const" in n), True)
    kinds = _types(nodes)
    default = next((n["default"] for n in nodes if "default" in n), None)
    inner = indent + "  "
    if "string" in kinds:
        return f" ${{{stop}:{_escape(default)}}}" if isinstance(default, str) else f" ${stop}"
    if kinds & {"number", "integer"}:
        return f" ${{{stop}:{default if default is not None else 0}}}"
    if "boolean" in kinds:
        return (
            f" ${{{stop}|true,false|}}"
            if default is None
            else f" ${{{stop}:{json.dumps(default)}}}"
        )
    if "array" in kinds:
        return f"\n{inner}- ${stop}"
    if "object" in kinds:
        required = model.required(nodes)
        properties = model.properties(nodes)
        if not required or depth > 1:
            return f"\n{inner}${stop}"
        parts = []
        for name in required:
            value = _yaml_snippet(properties.get(name, {}), model, stop, inner, depth + 1)
            parts.append(f"\n{inner}{name}:{value}")
            stop += 1
        return "".join(parts)
    return f" ${stop}"


def yaml_body_text(body: Any, snippets: bool, indent: str) -> str:
    """A ``defaultSnippets`` body as YAML block text (keys in their order)."""
    import yaml

    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1000).rstrip("\n")
    text = text.replace("\n", "\n" + indent)
    return text if snippets else _plain(text)
