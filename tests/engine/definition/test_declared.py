"""A workflow's declared parameters and secrets, read one way by lint, the LSP, the CLI and runs."""

from __future__ import annotations

import pytest

from workrail_engine.definition.declared import declared_parameters, declared_secrets


def test_declared_parameters_in_order_with_their_schemas():
    workflow = {"parameters": {"properties": {"b": {"type": "string"}, "a": True}}}
    assert list(declared_parameters(workflow)) == ["b", "a"]
    assert declared_parameters(workflow)["b"] == {"type": "string"}
    assert declared_parameters(workflow)["a"] == {}  # `true` as a schema: anything


@pytest.mark.parametrize(
    "workflow",
    [None, [], {}, {"parameters": []}, {"parameters": {"properties": "x"}}, {"secrets": "TOKEN"}],
)
def test_malformed_declarations_declare_nothing(workflow):
    assert declared_parameters(workflow) == {} and declared_secrets(workflow) == []


def test_declared_secrets_are_the_names():
    assert declared_secrets({"secrets": ["TOKEN", 3, "KEY"]}) == ["TOKEN", "KEY"]
