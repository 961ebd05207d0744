"""``python -m workrail_mcp.tools.recorded``: write ``tool_schemas.json``, the JSON schemas the
SDK derives for every tool function of every edition (see `workrail_mcp.tools.binding`)."""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import is_typeddict

from workrail_mcp.tools import EDITIONS
from workrail_mcp.tools.binding import (
    RECORDED_SCHEMAS,
    client_function,
    derived_tool,
    record_key,
    signature_digest,
)

__all__ = ["record_schemas", "schemas_text"]


def record_schemas() -> dict[str, Any]:
    """Per tool function: its signature's digest and the two schemas the SDK derives from it.

    Only functions whose result is a TypedDict: the SDK makes its own output model for others,
    which are derived at each start as before."""
    records: dict[str, Any] = {}
    for specs in EDITIONS.values():
        for spec in specs:
            run = client_function(spec, spec.fn)
            if not is_typeddict(run.__signature__.return_annotation):  # type: ignore[attr-defined]
                continue
            tool = derived_tool(spec, run)
            records[record_key(spec)] = {
                "signature": signature_digest(spec.fn),
                "inputSchema": tool.parameters,
                "outputSchema": tool.output_schema,
            }
    return records


def schemas_text(records: dict[str, Any]) -> str:
    return json.dumps(records, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    RECORDED_SCHEMAS.write_text(schemas_text(record_schemas()), encoding="utf-8")
    print(f"wrote {RECORDED_SCHEMAS}")
