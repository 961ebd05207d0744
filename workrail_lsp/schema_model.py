"""The workflow schema seen from a place in a document: which subschemas apply there.

Completion and hover need "the schema of the value at this path" in documents that may not
parse. We walk the schema along the path, following ``$ref``, ``allOf``, ``anyOf``/``oneOf`` and
``if``/``then``/``else``. Where the instance is known (the members around the cursor), an ``if``
is decided with jsonschema-rs; where it is not, both branches apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jsonschema_rs

from workrail_engine.schema import load_schema
from workrail_engine.text.json_pointer import unescape_token

__all__ = ["UNKNOWN", "SchemaModel", "schema_model", "value_at"]

UNKNOWN: Any = object()


class SchemaModel:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self._validators: dict[int, Any] = {}

    def resolve(self, node: Any) -> Any:
        seen = 0
        while (
            isinstance(node, Mapping)
            and "$ref" in node
            and set(node) <= {"$ref", "title", "description", "markdownDescription"}
            and seen < 32
        ):
            node = self._target(node["$ref"])
            seen += 1
        return node

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for part in ref[1:].split("/")[1:]:
            part = unescape_token(part)
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return node

    def effective(self, node: Any, instance: Any = UNKNOWN) -> list[Mapping[str, Any]]:
        """Every schema object that applies to ``instance`` at ``node``, the most specific first."""
        out: list[Mapping[str, Any]] = []
        queue = [node]
        while queue and len(out) < 64:
            current = queue.pop(0)
            if not isinstance(current, Mapping):
                continue
            out.append(current)
            if "$ref" in current:
                queue.append(self._target(current["$ref"]))
            queue.extend(current.get("allOf", []))
            for key in ("anyOf", "oneOf"):
                queue.extend(s for s in current.get(key, []) if self._may_match(s, instance))
            if "if" in current:
                decided = self._test(current["if"], instance)
                if decided is not False and "then" in current:
                    queue.append(current["then"])
                if decided is not True and "else" in current:
                    queue.append(current["else"])
        return out

    def _may_match(self, schema: Any, instance: Any) -> bool:
        return self._test(schema, instance) is not False

    def _test(self, schema: Any, instance: Any) -> bool | None:
        if instance is UNKNOWN:
            return None
        try:
            validator = self._validators.get(id(schema))
            if validator is None:
                validator = self._validators[id(schema)] = jsonschema_rs.validator_for(
                    {**schema, "$defs": self.root.get("$defs", {})}
                )
            return bool(validator.is_valid(instance))
        except Exception:  # a schema this check cannot evaluate: keep both possibilities
            return None

    def at_path(
        self, path: Iterable[str | int], values: Any = UNKNOWN, last: Any = UNKNOWN
    ) -> list[Mapping[str, Any]]:
        """The schemas that apply at ``path`` (keys and array positions) from the root.

        ``values`` is the document's value (possibly stale); ``last``, when known, is the
        instance at ``path`` itself as read around the cursor, which wins over ``values``.
        """
        parts = list(path)
        nodes = self.effective(self.root, last if not parts and last is not UNKNOWN else values)
        for position, part in enumerate(parts):
            values = _child_value(values, part)
            instance = last if position == len(parts) - 1 and last is not UNKNOWN else values
            children = [c for n in nodes for c in _children(n, part)]
            nodes = [e for c in children for e in self.effective(c, instance)]
            if not nodes:
                return []
        return nodes

    def is_condition(self, nodes: list[Mapping[str, Any]]) -> bool:
        condition = self._target("#/$defs/condition")
        return any(n is condition for n in nodes)

    def properties(self, nodes: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        """Property name → its (resolved) schema, first definition winning."""
        found: dict[str, Mapping[str, Any]] = {}
        for node in nodes:
            for name, schema in (node.get("properties") or {}).items():
                if name not in found:
                    found[name] = _merged(schema, self)
        return found

    def required(self, nodes: list[Mapping[str, Any]]) -> list[str]:
        out: list[str] = []
        for node in nodes:
            for name in node.get("required", []):
                if name not in out:
                    out.append(name)
        return out


def _merged(schema: Mapping[str, Any], model: SchemaModel) -> Mapping[str, Any]:
    """A property's own keywords over those of its ``$ref`` target (titles may be local)."""
    if "$ref" not in schema:
        return schema
    target = model.resolve(model._target(schema["$ref"]))
    return (
        {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        if isinstance(target, Mapping)
        else schema
    )


def _children(node: Mapping[str, Any], part: str | int) -> list[Any]:
    if isinstance(part, str):
        props = node.get("properties") or {}
        if part in props:
            return [props[part]]
        extra = node.get("additionalProperties")
        return [extra] if isinstance(extra, Mapping) else []
    items = node.get("items")
    return [items] if isinstance(items, Mapping) else []


def _child_value(values: Any, part: str | int) -> Any:
    if isinstance(part, str) and isinstance(values, Mapping) and part in values:
        return values[part]
    if isinstance(part, int) and isinstance(values, list) and 0 <= part < len(values):
        return values[part]
    return UNKNOWN


@cache
def schema_model() -> SchemaModel:
    return SchemaModel(load_schema())


def value_at(values: Any, path: Iterable[str | int]) -> Any:
    for part in path:
        values = _child_value(values, part)
        if values is UNKNOWN:
            break
    return values
