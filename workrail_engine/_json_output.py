"""JSON for `schema` rules: strict parsing of an agent's output and embedded JSON Schemas.

Embedded schemas are checked against their meta-schema and compiled by jsonschema-rs with two
safety settings: ``offline`` (a ``$ref`` to a URL never makes a request) and the linear-time
``regex`` engine for ``pattern`` keywords (the default engine backtracks).
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import jsonschema_rs

from .problems import Problem, pointer_join

__all__ = ["json_schema_problems", "parse_json_output", "schema_errors"]

INVALID_SCHEMA = "WR403"
TYPE_MISMATCH = "WR402"
_KNOWN_META_SCHEMAS = {
    f"{scheme}://json-schema.org/{path}{hash_}"
    for scheme in ("http", "https")
    for path in (
        "draft/2020-12/schema",
        "draft/2019-09/schema",
        "draft-07/schema",
        "draft-06/schema",
        "draft-04/schema",
    )
    for hash_ in ("", "#")
}


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"duplicate key {key!r}")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 would reach the validator as null
        raise ValueError(f"{text} is too large for a JSON number")
    return value


def _unfenced(text: str) -> str:
    """The body of one ```json fenced block, which agents often wrap JSON in; else ``text``."""
    stripped = text.strip()
    if not (stripped.startswith("```") and stripped.endswith("```") and "\n" in stripped):
        return text
    header, _, rest = stripped[3:-3].partition("\n")
    return rest if header.strip().lower() in ("", "json") else text


def parse_json_output(text: str) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, reason)`` when ``text`` is not one strict JSON document."""
    try:
        return json.loads(
            _unfenced(text),
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constants,
            parse_float=_finite,
        ), None
    except json.JSONDecodeError as error:
        return None, f"{error.msg} at line {error.lineno} column {error.colno}"
    except (ValueError, RecursionError) as error:
        return None, str(error) if not isinstance(error, RecursionError) else "nested too deeply"


def json_schema_problems(schema: Any) -> list[Problem]:
    """Problems of an embedded JSON Schema (pointers relative to it), compiled as it will run."""
    if not isinstance(schema, (dict, bool)):
        return [Problem("", TYPE_MISMATCH, "A JSON Schema must be an object or a boolean.")]
    if (
        isinstance(schema, dict)
        and "$schema" in schema
        and schema["$schema"] not in _KNOWN_META_SCHEMAS
    ):
        # jsonschema-rs would try to download an unknown meta-schema
        return [
            Problem(
                "/$schema",
                INVALID_SCHEMA,
                f"Unknown $schema {schema['$schema']!r}: use JSON Schema 2020-12 (or leave $schema out).",
            )
        ]
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as error:
        return [
            Problem(
                pointer_join("", *error.instance_path),
                INVALID_SCHEMA,
                f"Invalid JSON Schema: {error.message}",
            )
        ]
    try:
        _validator(_key(schema))
    except jsonschema_rs.ValidationError as error:
        message = error.message
        if error.instance_path and error.instance_path[-1] == "pattern":
            message += " (patterns run in linear time: no lookaround or backreferences)"
        return [
            Problem(
                pointer_join("", *error.instance_path),
                INVALID_SCHEMA,
                f"Invalid JSON Schema: {message}",
            )
        ]
    except (ValueError, jsonschema_rs.ReferencingError) as error:
        return [Problem("", INVALID_SCHEMA, f"Invalid JSON Schema: {error}")]
    return []


def _key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


@functools.lru_cache(maxsize=256)
def _validator(key: str) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(
        json.loads(key), pattern_options=jsonschema_rs.RegexOptions(), offline=True
    )


def schema_errors(schema: Any, value: Any) -> list[tuple[str, str]]:
    """``(where, message)`` for each way ``value`` violates ``schema``; ``where`` names the path."""
    out = []
    for error in _validator(_key(schema)).iter_errors(value):
        pointer = pointer_join("", *error.instance_path)
        out.append((pointer or "the top level", error.message))
    return out
