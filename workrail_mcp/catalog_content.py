"""Workflows as MCP resources and prompts, read from the catalog on every request.

The SDK's resource and prompt managers are registries filled once; workflows come and go while
the server runs, so these lists are built from the catalog each time instead (the protocol
middleware routes ``resources/*`` and ``prompts/*`` requests for our URIs and names here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workrail_engine.errors import WorkflowNotFound
from workrail_mcp.error_mapping import invalid_params

__all__ = ["SCHEMA_URI", "WORKFLOW_URI_PREFIX", "CatalogContent"]

WORKFLOW_URI_PREFIX = "workrail://workflows/"
SCHEMA_URI = "workrail://schema/workflow"
_JSON = "application/json"

_TASK_ARGUMENT = {
    "name": "task",
    "description": "What you want done with this workflow (optional; the agent asks if it needs more).",
    "required": False,
}


def _start_text(entry: Any, task: str | None) -> str:
    summary = entry.summary()
    lines = [
        f'Follow the WorkRail workflow "{summary.get("name") or entry.id}" (id: {entry.id}).',
    ]
    if summary.get("description"):
        lines.append(str(summary["description"]))
    if task:
        lines.append(f"Task: {task}")
    lines.append(
        f'Call workflow_next with {{"workflowId": "{entry.id}", "completedSteps": []}} to get the first '
        "step. Do the step, check its output with workflow_validate when it lists validation criteria, "
        "add its id to completedSteps and call workflow_next again until isComplete is true."
    )
    return "\n\n".join(lines)


class CatalogContent:
    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog

    # resources
    def resources(self) -> list[dict[str, Any]]:
        listed = [
            {
                "uri": SCHEMA_URI,
                "name": "workflow-schema",
                "title": "Workflow JSON Schema",
                "description": "The JSON Schema (2020-12) every workflow file follows.",
                "mimeType": "application/schema+json",
            }
        ]
        for entry in self.catalog.entries():
            summary = entry.summary()
            listed.append(
                {
                    "uri": WORKFLOW_URI_PREFIX + entry.id,
                    "name": entry.id,
                    "title": summary.get("name") or entry.id,
                    "description": summary.get("description") or "",
                    "mimeType": _JSON,
                }
            )
        return listed

    def templates(self) -> list[dict[str, Any]]:
        return [
            {
                "uriTemplate": WORKFLOW_URI_PREFIX + "{id}",
                "name": "workflow",
                "title": "A workflow by id",
                "description": "The workflow definition as JSON (ids from workflow_list).",
                "mimeType": _JSON,
            }
        ]

    def owns_uri(self, uri: Any) -> bool:
        return isinstance(uri, str) and (uri == SCHEMA_URI or uri.startswith(WORKFLOW_URI_PREFIX))

    def read(self, uri: str) -> dict[str, Any]:
        if uri == SCHEMA_URI:
            from workrail_engine.schema import load_schema

            text, mime = (
                json.dumps(load_schema(), indent=2, ensure_ascii=False),
                "application/schema+json",
            )
        else:
            entry = self.catalog.get(uri[len(WORKFLOW_URI_PREFIX) :])
            text, mime = json.dumps(entry.definition, indent=2, ensure_ascii=False), _JSON
        return {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}

    # prompts
    def prompts(self) -> list[dict[str, Any]]:
        listed = []
        for entry in self.catalog.entries():
            summary = entry.summary()
            listed.append(
                {
                    "name": entry.id,
                    "title": summary.get("name") or entry.id,
                    "description": f"Start the workflow: {summary.get('description') or summary.get('name') or entry.id}",
                    "arguments": [dict(_TASK_ARGUMENT)],
                }
            )
        return listed

    def get_prompt(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        try:
            entry = self.catalog.get(name)
        except WorkflowNotFound as error:
            raise invalid_params(
                f"Unknown prompt {name!r}", closest=error.data.get("closest", [])
            ) from None
        task = (arguments or {}).get("task")
        text = _start_text(entry, task if isinstance(task, str) else None)
        return {
            "description": f"Start the workflow {entry.id}",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }
