"""Template references: found with their spans, rendered without a shell, missing names named."""

from __future__ import annotations

import copy
import json

import pytest

from workrail_engine.evaluation.conditions import resolve
from workrail_engine.evaluation.templates import (
    StepOutput,
    TemplateError,
    find_literals,
    find_references,
    render,
    render_for_agent,
)

VALUES = {
    "parameters": {"target": "prod", "n": 3},
    "context": {"user": {"name": "Ada"}},
    "steps": {"build": {"output": {"files": ["a.py", "b.py"]}}},
    "secrets": {"TOKEN": "s3cr3t"},
}


def test_find_references_with_spans():
    text = "Deploy {{ parameters.target }} using {{steps.build.output.files}}"
    refs = find_references(text)
    assert [(r.namespace, r.path) for r in refs] == [
        ("parameters", ("target",)),
        ("steps", ("build", "output", "files")),
    ]
    assert text[refs[0].span.start : refs[0].span.end] == "{{ parameters.target }}"
    assert refs[1].step_id == "build"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("{{parameters.target}}", "prod", id="string"),
        pytest.param("n={{parameters.n}}", "n=3", id="number-as-json"),
        pytest.param("{{context.user.name}}", "Ada", id="dotted"),
        pytest.param("{{steps.build.output.files.1}}", "b.py", id="list-index"),
        pytest.param("{{steps.build.output.files}}", '["a.py","b.py"]', id="list-as-json"),
        pytest.param(
            "a; rm -rf / {{parameters.target}}", "a; rm -rf / prod", id="no-shell-meaning"
        ),
        pytest.param("no templates", "no templates", id="plain"),
        # upstream's bare context variables
        pytest.param("Hello {{user.name}}", "Hello Ada", id="bare-dotted"),
        pytest.param("{{user}}", '{"name":"Ada"}', id="bare-object-as-json"),
        # upstream renders a bare name only when written tight: {{ user }} stays as written
        pytest.param("{{ user }}", "{{ user }}", id="bare-with-spaces-kept"),
        # text in braces that is no reference stays as written
        pytest.param(
            'flowchart A{{"Pick a path"}} --> B', 'flowchart A{{"Pick a path"}} --> B', id="mermaid"
        ),
        pytest.param(
            "{{(done / total * 100).toFixed(1)}}%",
            "{{(done / total * 100).toFixed(1)}}%",
            id="js-expression",
        ),
        pytest.param("step {{i + 1}} for {{user.name}}", "step {{i + 1}} for Ada", id="mixed"),
        pytest.param("{{wr.bindings.reviewer}}", "{{wr.bindings.reviewer}}", id="compile-time"),
    ],
)
def test_render(template, expected):
    assert render(template, VALUES) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param("{{parameters.missing}}", "parameters.missing is not defined"),
        pytest.param("{{steps.build.output.files.9}}", "steps.build.output.files.9 is not defined"),
        pytest.param("{{secret.TOKEN}}", r"context.secret is not defined \(in \{\{secret.TOKEN"),
        pytest.param("{{nobody}}", "context.nobody is not defined", id="bare-missing"),
    ],
)
def test_render_errors_name_the_missing_part(template, message):
    with pytest.raises(TemplateError, match=message):
        render(template, VALUES)


def test_bare_names_are_context_references():
    refs = find_references("Item {{currentItem}} of {{items.length}}; {{context.user}}")
    assert [(r.namespace, r.path, r.bare) for r in refs] == [
        ("context", ("currentItem",), True),
        ("context", ("items", "length"), True),
        ("context", ("user",), False),
    ]


def test_literals_are_found_apart_from_references():
    text = 'A{{"label"}} {{n + 1}} {{wr.refs.guide}} {{count}} {{}}'
    literals = find_literals(text)
    assert [(lit.text, lit.compile_time) for lit in literals] == [
        ('"label"', False),
        ("n + 1", False),
        ("wr.refs.guide", True),
        ("", False),
    ]
    assert text[literals[0].span.start : literals[0].span.end] == '{{"label"}}'
    assert [r.text for r in find_references(text)] == ["count"]


def test_a_step_output_is_its_notes_with_its_artifacts_fields_by_name():
    output = StepOutput("the notes", {"decision": "stop", "found": [1, 2]})
    values = {"steps": {"x": {"output": copy.deepcopy(output)}}}
    text = "{{steps.x.output}}: {{steps.x.output.decision}} {{steps.x.output.found.1}}"
    assert render_for_agent(text, values, {}) == "the notes: stop 2"
    assert render(text, values) == "the notes: stop 2"
    assert render_for_agent("{{steps.x.output.nope}}", values, {}).startswith("[unset:")
    assert resolve(values, "steps.x.output.decision") == "stop"
    assert json.dumps(output) == '"the notes"' and output == "the notes"
