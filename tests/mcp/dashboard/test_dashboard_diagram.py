"""The workflow diagram's SVG, read as XML: every step once, in its frame, every text escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from workrail_mcp.dashboard.diagram import workflow_svg
from workrail_mcp.dashboard.forms import parameter_fields, parameters_from_form

SVG = "{http://www.w3.org/2000/svg}"


def _steps(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # well-formed: nothing unescaped got in
    return [a.get("data-step") for a in root.iter(f"{SVG}a")]


def test_a_loop_whose_body_names_a_step_draws_that_step_inside_it_once():
    workflow = {
        "id": "loop-by-name",
        "name": "Loop",
        "steps": [
            {"id": "start", "title": "Start", "prompt": "Go"},
            {
                "id": "again",
                "type": "loop",
                "loop": {
                    "type": "while",
                    "condition": {"var": "more", "equals": True},
                    "maxIterations": 7,
                },
                "body": "work",
            },
            {"id": "work", "title": "Work", "run": {"command": ["true"]}},
        ],
    }
    svg = workflow_svg(workflow)
    assert _steps(svg) == ["start", "again", "work"]
    assert "loop · while · more is true · at most 7 iterations" in svg


def test_titles_and_conditions_are_escaped():
    workflow = {
        "id": "hostile",
        "name": "<img src=x onerror=alert(1)>",
        "steps": [
            {"id": "one", "title": "<script>alert(1)</script>", "prompt": "x"},
            {
                "id": "two",
                "title": "Two & more",
                "prompt": "y",
                "runCondition": {"var": "who", "equals": "</text><script>"},
            },
        ],
    }
    svg = workflow_svg(workflow)
    assert "<script>" not in svg and "<img" not in svg
    root = ET.fromstring(svg)
    texts = "".join(root.itertext())
    assert "<script>alert(1)</script>" in texts and "Two & more" in texts
    assert 'only if who is "</text><script>"' in texts


def test_a_wide_parallel_group_wraps_four_to_a_row():
    members = [{"id": f"m-{n}", "title": f"M {n}", "run": {"command": ["true"]}} for n in range(6)]
    svg = workflow_svg(
        {
            "id": "wide",
            "name": "Wide",
            "steps": [{"id": "all", "type": "parallel", "steps": members}],
        }
    )
    root = ET.fromstring(svg)
    tops = {
        a.get("data-step"): float(a.find(f"{SVG}rect").get("y"))
        for a in root.iter(f"{SVG}a")
        if a.get("data-step", "").startswith("m-")
    }
    assert len({tops[f"m-{n}"] for n in range(4)}) == 1
    assert tops["m-4"] == tops["m-5"] > tops["m-0"]


def test_the_parameters_form_round_trips_each_kind():
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "default": "x"},
            "count": {"type": "integer", "default": 2},
            "ratio": {"type": "number"},
            "on": {"type": "boolean", "default": True},
            "mode": {"enum": ["a", 3]},
            "extra": {"type": "object"},
        },
    }
    fields = {f["name"]: f for f in parameter_fields(schema)}
    assert [fields[n]["widget"] for n in fields] == [
        "text",
        "number",
        "number",
        "checkbox",
        "select",
        "json",
    ]
    assert (
        fields["name"]["required"] and fields["on"]["checked"] and fields["count"]["value"] == "2"
    )
    form = {
        "param-name": "Ada",
        "param-count": "5",
        "param-ratio": "",
        "param-mode": "3",
        "param-extra": '{"k": [1]}',
    }
    assert parameters_from_form(schema, form) == {
        "name": "Ada",
        "count": 5,
        "on": False,
        "mode": 3,
        "extra": {"k": [1]},
    }
