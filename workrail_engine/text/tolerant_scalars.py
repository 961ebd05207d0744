"""A scalar's value from its text as written, for a tree whose text may be broken: a JSON string
or number, a YAML plain, quoted or block scalar. Text that does not decode stays as written."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "block_yaml",
    "json_number",
    "json_string",
    "plain_yaml",
    "quoted_yaml",
    "scalar_value",
]


def json_string(body: str) -> str:
    """A JSON string's value from the text between its quotes."""
    try:
        value = json.loads(f'"{body}"')
        return value if isinstance(value, str) else body
    except ValueError:
        return body


def json_number(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


_YAML_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}
_YAML_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}


def plain_yaml(raw: str, inner: str) -> Any:
    """A plain scalar's value; ``inner`` is the kind tree-sitter-yaml gave it (``null_scalar``,
    ``boolean_scalar``, ``integer_scalar``, ``float_scalar``, ``string_scalar``)."""
    if inner == "null_scalar":
        return None
    if inner == "boolean_scalar":
        return raw in _YAML_TRUE if raw in _YAML_TRUE | _YAML_FALSE else raw
    if inner in ("integer_scalar", "float_scalar"):
        try:
            return int(raw, 0) if inner == "integer_scalar" else float(raw)
        except ValueError:
            return raw
    return " ".join(part.strip() for part in raw.split("\n"))


def quoted_yaml(raw: str) -> str:
    """A single- or double-quoted scalar's value, its closing quote added if it has none yet."""
    import yaml

    try:
        value = yaml.safe_load(raw if raw[-1:] == raw[:1] and len(raw) > 1 else raw + raw[:1])
        return value if isinstance(value, str) else raw.strip("\"'")
    except yaml.YAMLError:
        return raw.strip("\"'")


def block_yaml(raw: str) -> str:
    import yaml

    try:
        value = yaml.safe_load(raw)
        return value if isinstance(value, str) else raw
    except yaml.YAMLError:
        return raw


def scalar_value(raw: str, fmt: str) -> Any:
    """The value of any scalar's text in ``fmt`` ("json" or "yaml"), typed or still being typed."""
    if fmt == "json":
        if raw.startswith('"'):
            return json_string(raw[1:-1] if len(raw) > 1 and raw.endswith('"') else raw[1:])
        return json_number(raw)
    if raw[:1] == '"' or raw[:1] == "'":
        return quoted_yaml(raw)
    return plain_yaml(raw, "string_scalar")
