"""A form for a workflow's ``parameters`` JSON Schema, and the values a submitted form means.

One field per top-level property: a text box for strings, a list for enums, a checkbox for
booleans, a number box for numbers, a JSON text area for anything else (nested at most as deep as
any client's JSON may be, `MAX_NESTING`). An empty field is left
out, so the schema's default applies; the run's own check (`check_parameters`) judges the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workrail_engine.limits import NestingTooDeep, parse_json_within_nesting

__all__ = ["parameter_fields", "parameters_from_form"]


def _widget(prop: Mapping[str, Any]) -> str:
    if isinstance(prop.get("enum"), list):
        return "select"
    kind = prop.get("type")
    if kind == "boolean":
        return "checkbox"
    if kind in ("integer", "number"):
        return "number"
    if kind == "string" or kind is None and "default" in prop and isinstance(prop["default"], str):
        return "text"
    return "json"


def _shown(value: Any, widget: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str) and widget != "json":
        return value
    return json.dumps(value)


def parameter_fields(schema: Any, submitted: Any = None) -> list[dict[str, Any]]:
    """The form's fields; ``submitted`` (a form already sent) fills them in again."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    required = set(schema.get("required") or [])
    fields = []
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, Mapping) else {}
        widget = _widget(prop)
        field: dict[str, Any] = {
            "name": str(name),
            "input": f"param-{name}",
            "widget": widget,
            "required": name in required,
            "description": str(prop.get("description") or prop.get("title") or ""),
            "type": str(prop.get("type") or ("enum" if widget == "select" else "any")),
            "options": [
                json.dumps(o) if not isinstance(o, str) else o for o in prop.get("enum") or []
            ],
        }
        default = prop.get("default")
        if submitted is not None:
            raw = submitted.get(field["input"])
            field["value"] = raw if isinstance(raw, str) else ""
            field["checked"] = raw is not None if widget == "checkbox" else False
        else:
            field["value"] = _shown(default, widget) if widget != "checkbox" else ""
            field["checked"] = default is True
        fields.append(field)
    return fields


def parameters_from_form(schema: Any, form: Any) -> dict[str, Any]:
    """The parameters a submitted form gives; raises ValueError for JSON that does not parse."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return {}
    values: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, Mapping) else {}
        widget = _widget(prop)
        raw = form.get(f"param-{name}")
        if widget == "checkbox":
            values[name] = raw is not None
            continue
        if not isinstance(raw, str) or raw == "":
            continue
        if widget == "select":
            options = prop.get("enum") or []
            match = [o for o in options if (o if isinstance(o, str) else json.dumps(o)) == raw]
            values[name] = match[0] if match else raw
        elif widget == "number":
            try:
                number = float(raw)
            except ValueError:
                raise ValueError(f"{name}: {raw!r} is not a number") from None
            values[name] = (
                int(number) if prop.get("type") == "integer" and number.is_integer() else number
            )
        elif widget == "text":
            values[name] = raw
        else:
            try:
                values[name] = parse_json_within_nesting(raw)
            except NestingTooDeep as error:  # as deep as no client may send, through any door
                raise ValueError(f"{name}: {error}") from None
            except ValueError:
                raise ValueError(f"{name}: not valid JSON") from None
    return values
