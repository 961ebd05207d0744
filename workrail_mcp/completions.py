"""`completion/complete`: values for our prompts' arguments and our resource templates' variables.

- ``workrail://workflows/{id}`` and ``workrail://workflows/{id}/steps/{step}``: ``id`` offers
  workflow ids, ``step`` the step ids of the workflow already chosen as ``id`` (the client sends
  it in ``context.arguments``);
- a workflow's prompt: ``task`` is free text (nothing offered); an argument named after one of the
  workflow's declared parameters offers the values its schema names (``enum``, ``const``,
  ``default``, ``examples``, ``true``/``false`` for a boolean).

Values start with what the person typed (case-insensitive), sorted, at most ``MAX_VALUES`` (the
protocol's cap), with ``total`` and ``hasMore`` when there were more. Anything we do not know (an
unknown prompt, template or argument) completes to nothing: completion is a hint, not a check.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from workrail_engine.definition.steps import step_ids
from workrail_engine.errors import EngineError
from workrail_mcp.catalog_content import STEP_TEMPLATE, WORKFLOW_TEMPLATE, declared_parameters

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["MAX_VALUES", "Completions"]

MAX_VALUES = 100  # the protocol's limit on values in one completion


def _schema_values(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    found: list[Any] = []
    if isinstance(schema.get("enum"), list):
        found += schema["enum"]
    for key in ("const", "default"):
        if key in schema:
            found.append(schema[key])
    if isinstance(schema.get("examples"), list):
        found += schema["examples"]
    if schema.get("type") == "boolean":
        found += [True, False]
    texts = [value if isinstance(value, str) else json.dumps(value) for value in found]
    return list(dict.fromkeys(texts))


class Completions:
    def __init__(self, catalog: CatalogProtocol) -> None:
        self.catalog = catalog

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        typed: str,
        chosen: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The ``completion`` object of a `CompleteResult` (``values``, ``total``, ``hasMore``)."""
        try:
            candidates = self._candidates(ref, argument, chosen or {})
        except EngineError:  # an unknown or invalid workflow: nothing to offer
            candidates = []
        prefix = typed.casefold()
        matching = sorted(value for value in candidates if value.casefold().startswith(prefix))
        completion: dict[str, Any] = {"values": matching[:MAX_VALUES]}
        if len(matching) > MAX_VALUES:
            completion.update(total=len(matching), hasMore=True)
        return completion

    def _candidates(
        self, ref: Mapping[str, Any], argument: str, chosen: Mapping[str, str]
    ) -> Iterable[str]:
        if ref.get("type") == "ref/resource" and ref.get("uri") in (
            WORKFLOW_TEMPLATE,
            STEP_TEMPLATE,
        ):
            if argument == "id":
                return self.catalog.ids()
            if argument == "step" and ref["uri"] == STEP_TEMPLATE and chosen.get("id"):
                return dict.fromkeys(step_ids(self.catalog.served(chosen["id"])))
            return []
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            parameters = declared_parameters(self.catalog.get(ref["name"]).definition)
            return _schema_values(parameters.get(argument))
        return []
