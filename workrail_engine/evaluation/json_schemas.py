"""JSON for `schema` rules: strict parsing of an agent's output and embedded JSON Schemas.

Every JSON Schema a workflow embeds (its ``parameters``, each ``schema`` rule) is checked and
compiled here, and nowhere else:
- a ``$ref`` (or ``$dynamicRef``) resolves only inside the schema itself — a ``#`` fragment or an
  ``$id`` the schema defines. A reference to a URL or a file would let a workflow file make the
  engine fetch ``http://127.0.0.1:…`` (server-side request forgery) or read a local file and echo
  it in an error; such a reference is WR406 when the file is checked and refused at run time;
- compilation is ``offline`` (jsonschema-rs retrieves nothing, should a reference slip past the
  check above) and uses the linear-time ``regex`` engine for ``pattern`` keywords (the default
  engine backtracks).
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any
from urllib.parse import urldefrag, urljoin

import jsonschema_rs

from ..content_key import content_key
from .problems import Problem, pointer_join

__all__ = ["compiled_schema", "json_schema_problems", "parse_json_output", "schema_errors"]

INVALID_SCHEMA = "WR403"
TYPE_MISMATCH = "WR402"
EXTERNAL_REFERENCE = "WR406"
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
    # Workflows repeat their schemas (every step checking one kind of output): each distinct
    # schema is checked once per process, by `content_key`. Large schemas are not kept (a
    # long-lived language server would hold up to 256 of them).
    key = content_key(schema)
    if key is None or len(key) > _CACHED_SCHEMA_BYTES:
        return _check_schema(schema)
    return list(_problems_of(_Schema(key, schema)))


_CACHED_SCHEMA_BYTES = 16_384


class _Schema:
    """A schema as a cache key: equal when their content keys are; the value rides along."""

    __slots__ = ("key", "value")

    def __init__(self, key: bytes, value: Any) -> None:
        self.key, self.value = key, value

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Schema) and other.key == self.key


@functools.lru_cache(maxsize=256)
def _problems_of(wrapped: _Schema) -> tuple[Problem, ...]:
    return tuple(_check_schema(wrapped.value))


def _check_schema(schema: Any) -> list[Problem]:
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
    external = _external_references(schema)
    if external:
        return external
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


# Keywords whose values are data, not schemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose values map names to schemas: their keys are names, never keywords.
_NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef")


def _external_references(schema: Any) -> list[Problem]:
    """WR406 for each reference that leaves the schema (see the module's docstring)."""
    ids: set[str] = set()
    references: list[tuple[str, str]] = []  # (pointer of the keyword, absolute target)
    path: list[str | int] = []  # where the walk is; joined into a pointer only for a reference

    def walk(node: Any, base: str, names: bool) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                path.append(index)
                walk(item, base, False)
                path.pop()
            return
        if not isinstance(node, dict):
            return
        if names:
            for name, child in node.items():
                path.append(name)
                walk(child, base, False)
                path.pop()
            return
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
            ids.add(urldefrag(base).url)
        for keyword in _REFERENCE_KEYWORDS:
            if isinstance(node.get(keyword), str):
                target = urljoin(base, node[keyword])
                references.append((pointer_join("", *path, keyword), urldefrag(target).url))
        for key, child in node.items():
            if key not in _DATA_KEYWORDS:
                path.append(key)
                walk(child, base, key in _NAMED_SCHEMAS)
                path.pop()

    walk(schema, "", False)
    return [
        Problem(
            pointer,
            EXTERNAL_REFERENCE,
            f"This reference points outside the schema ({target!r}): only references inside it "
            'resolve ("#/$defs/name", or an "$id" it defines); nothing is fetched or read',
        )
        for pointer, target in references
        if target and target not in ids and target not in _KNOWN_META_SCHEMAS
    ]


def compiled_schema(schema: Any) -> jsonschema_rs.Validator:
    """The validator of an embedded schema that `json_schema_problems` found no problem in."""
    return _validator(_key(schema))


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
    for error in compiled_schema(schema).iter_errors(value):
        pointer = pointer_join("", *error.instance_path)
        out.append((pointer or "the top level", error.message))
    return out
