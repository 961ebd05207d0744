"""Template references: found with their spans, rendered without a shell, missing names named."""

from __future__ import annotations

import pytest

from workrail_engine.templates import TemplateError, find_references, render

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
    ],
)
def test_render(template, expected):
    assert render(template, VALUES) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param("{{parameters.missing}}", "parameters.missing is not defined"),
        pytest.param("{{steps.build.output.files.9}}", "steps.build.output.files.9 is not defined"),
        pytest.param("{{secret.TOKEN}}", "unknown template namespace 'secret'"),
    ],
)
def test_render_errors_name_the_missing_part(template, message):
    with pytest.raises(TemplateError, match=message):
        render(template, VALUES)
