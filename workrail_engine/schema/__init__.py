"""The workflow JSON Schema (2020-12) shipped with the engine.

`workflow.schema.json` is the single definition of the workflow format's shape; editors read it
through `$schema`, the linter validates against it with jsonschema-rs. Importing this module is
cheap on purpose (no validator is imported here): the CLI's `workrail schema` and the language
server's start-up only need the file.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA_ID", "load_schema", "schema_path"]

SCHEMA_ID = "https://workrail.dev/schema/workflow.schema.json"

_SCHEMA_FILE = Path(__file__).with_name("workflow.schema.json")


def schema_path() -> Path:
    """Path of `workflow.schema.json` inside the installed package."""
    return _SCHEMA_FILE


@cache
def load_schema() -> dict[str, Any]:
    """The parsed schema. Cached: callers share one dict and must not modify it."""
    with _SCHEMA_FILE.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema
