"""Which parameter names a run accepts: the declared ones, unless the schema opens itself."""

from __future__ import annotations

import pytest

from workrail_engine.errors import InvalidParams
from workrail_engine.runs.params import check_parameters

DECLARED = {"type": "object", "properties": {"path": {"type": "string", "default": "."}}}


def flow(parameters: dict | None) -> dict:
    definition = {"id": "flow", "name": "Flow", "steps": []}
    if parameters is not None:
        definition["parameters"] = parameters
    return definition


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(None, id="no-schema-declares-nothing"),
        pytest.param({**DECLARED, "additionalProperties": True}, id="additional-allowed"),
        pytest.param(
            {**DECLARED, "additionalProperties": {"type": "string"}}, id="additional-typed"
        ),
        pytest.param({**DECLARED, "patternProperties": {"^x": {}}}, id="pattern-properties"),
        pytest.param({"type": "object"}, id="no-properties"),
    ],
)
def test_an_open_schema_takes_other_names(schema: dict | None) -> None:
    assert check_parameters(flow(schema), {"pth": "pkg"})["pth"] == "pkg"


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(DECLARED, id="properties-only"),
        pytest.param({**DECLARED, "additionalProperties": False}, id="additional-false"),
    ],
)
def test_an_undeclared_name_is_refused_with_the_closest_declared_one(schema: dict) -> None:
    with pytest.raises(InvalidParams) as refused:
        check_parameters(flow(schema), {"pth": "pkg", "zzzzzz": 1})
    error = refused.value
    assert error.message == (
        "workflow 'flow' has no parameter 'pth' (did you mean 'path'?), 'zzzzzz'; "
        "its parameters: path"
    )
    assert error.data["unknown"] == ["pth", "zzzzzz"] and error.data["closest"] == ["path"]


def test_declared_names_still_get_their_defaults() -> None:
    assert check_parameters(flow(DECLARED), {}) == {"path": "."}
