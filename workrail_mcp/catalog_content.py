"""Workflows as MCP resources and prompts, read from the catalog on every request.

The SDK's resource and prompt managers are registries filled once; workflows come and go while
the server runs, so these lists are built from the catalog each time instead (the protocol
middleware routes ``resources/*`` and ``prompts/*`` requests for our URIs and names here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workrail_engine.definition.steps import find_step
from workrail_engine.errors import WorkflowNotFound
from workrail_mcp.error_mapping import invalid_params

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = [
    "SCHEMA_URI",
    "STEP_TEMPLATE",
    "WORKFLOW_TEMPLATE",
    "WORKFLOW_URI_PREFIX",
    "CatalogContent",
    "declared_parameters",
]

WORKFLOW_URI_PREFIX = "workrail://workflows/"
WORKFLOW_TEMPLATE = WORKFLOW_URI_PREFIX + "{id}"
_STEPS_PART = "/steps/"
STEP_TEMPLATE = WORKFLOW_TEMPLATE + _STEPS_PART + "{step}"
SCHEMA_URI = "workrail://schema/workflow"
_JSON = "application/json"

_TASK_ARGUMENT = {
    "name": "task",
    "description": "What you want done with this workflow (optional; the agent asks if it needs more).",
    "required": False,
}


def declared_parameters(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The workflow's declared parameters (name → schema), except one named like our ``task``."""
    parameters = definition.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {
        name: schema
        for name, schema in properties.items()
        if isinstance(name, str) and name != _TASK_ARGUMENT["name"]
    }


def _parameter_arguments(definition: Mapping[str, Any]) -> list[dict[str, Any]]:
    arguments = []
    for name, schema in declared_parameters(definition).items():
        described = schema.get("description") if isinstance(schema, Mapping) else None
        arguments.append(
            {
                "name": name,
                "description": described or f"The workflow's parameter {name!r}.",
                "required": False,
            }
        )
    return arguments


def _start_text(entry: Any, task: str | None, given: Mapping[str, str] | None = None) -> str:
    summary = entry.summary()
    lines = [
        f'Follow the WorkRail workflow "{summary.get("name") or entry.id}" (id: {entry.id}).',
    ]
    if summary.get("description"):
        lines.append(str(summary["description"]))
    if task:
        lines.append(f"Task: {task}")
    if given:
        lines.append(f"Parameters: {json.dumps(dict(given), ensure_ascii=False)}")
    lines.append(
        f'Call workflow_next with {{"workflowId": "{entry.id}", "completedSteps": []}} to get the first '
        "step. Do the step, check its output with workflow_validate when it lists validation criteria, "
        "add its id to completedSteps and call workflow_next again until isComplete is true."
    )
    return "\n\n".join(lines)


class CatalogContent:
    def __init__(self, catalog: CatalogProtocol) -> None:
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
                "uriTemplate": WORKFLOW_TEMPLATE,
                "name": "workflow",
                "title": "A workflow by id",
                "description": "The workflow definition as JSON (ids from workflow_list).",
                "mimeType": _JSON,
            },
            {
                "uriTemplate": STEP_TEMPLATE,
                "name": "workflow-step",
                "title": "One step of a workflow",
                "description": "A step of the served workflow as JSON (loop bodies and groups too).",
                "mimeType": _JSON,
            },
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
        elif _STEPS_PART in uri[len(WORKFLOW_URI_PREFIX) :]:
            workflow_id, _, step_id = uri[len(WORKFLOW_URI_PREFIX) :].partition(_STEPS_PART)
            step = find_step(self.catalog.served(workflow_id), step_id, workflow_id)
            text, mime = json.dumps(step, indent=2, ensure_ascii=False), _JSON
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
                    "arguments": [dict(_TASK_ARGUMENT), *_parameter_arguments(entry.definition)],
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
        arguments = arguments or {}
        task = arguments.get("task")
        declared = declared_parameters(entry.definition)
        given = {k: v for k, v in arguments.items() if k in declared and isinstance(v, str)}
        text = _start_text(entry, task if isinstance(task, str) else None, given)
        return {
            "description": f"Start the workflow {entry.id}",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }
