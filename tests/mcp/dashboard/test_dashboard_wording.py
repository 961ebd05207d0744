"""The workflow page says what the engine says: a step's validation rules in the words an agent is
given (`describe_criteria`), a loop's bound as the engine's loop rules read it — through a real
`workrail dashboard` over HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx2
import pytest

from tests.mcp.dashboard.conftest import PY, env_for, served
from workrail_engine.evaluation.rules import describe_criteria

# The engine's default loop bound in the server process, set apart from the figure the
# dashboard once wrote itself (100) and from any loop's own: the page must follow the engine.
ENGINE_DEFAULT_BOUND = 3

CRITERIA = [
    {"type": "contains", "value": "summary", "message": "Has a summary"},
    {
        "type": "length",
        "min": 10,
        "max": 500,
        "message": "",
        "condition": {"var": "scope", "equals": "large"},
    },
    {
        "or": [
            {"type": "regex", "pattern": "^#", "flags": "m", "message": "Has a heading"},
            {"type": "contains", "value": "Title", "message": "Has a title"},
        ]
    },
]

WORDING = {
    "id": "wording",
    "name": "Wording",
    "description": "Rules and loops, in the engine's words",
    "version": "1.0.0",
    "steps": [
        {"id": "write", "title": "Write", "prompt": "Write it.", "validationCriteria": CRITERIA},
        {
            "id": "unbounded",
            "title": "Unbounded",
            "type": "loop",
            "loop": {"type": "while", "condition": {"var": "more", "equals": True}},
            "body": [{"id": "again", "title": "Again", "prompt": "Once more."}],
        },
        {
            "id": "bounded",
            "title": "Bounded",
            "type": "loop",
            "loop": {"type": "for", "count": 2, "maxIterations": 7},
            "body": [{"id": "tick", "title": "Tick", "prompt": "Tick."}],
        },
    ],
}


@pytest.fixture(scope="module")
def wording_page(tmp_path_factory) -> Iterator[str]:
    """The workflow page of `WORDING`, from a dashboard whose engine's default bound is
    `ENGINE_DEFAULT_BOUND`."""
    project = tmp_path_factory.mktemp("wording-project")
    (project / "workflows").mkdir()
    (project / "workflows" / "wording.json").write_text(json.dumps(WORDING))
    home: Path = tmp_path_factory.mktemp("wording-home")
    command = [
        PY,
        "-c",
        "import workrail_engine.serving.loop_rules as rules\n"
        f"rules.DEFAULT_MAX_ITERATIONS = {ENGINE_DEFAULT_BOUND}\n"
        "from workrail_engine.cli import main; main()",
        "dashboard",
        "--port",
        "0",
    ]
    with served(command, project, env_for(home), r"listening on (http://\S+/)") as url:
        answer = httpx2.get(url + "workflows/wording", timeout=30)
        assert answer.status_code == 200, answer.text[:500]
        yield answer.text


def _panel(html: str, step_id: str) -> str:
    found = re.search(rf'<section[^>]*id="step-{step_id}".*?</section>', html, re.S)
    assert found, f"no panel entry for {step_id}"
    return found.group(0)


def test_a_steps_rules_read_as_the_engine_words_them(wording_page):
    rules = re.search(r'<ul class="rules">(.*?)</ul>', _panel(wording_page, "write"), re.S)
    assert rules, "no rules listed"
    shown = [unescape(item) for item in re.findall(r"<li>(.*?)</li>", rules.group(1), re.S)]
    assert shown == describe_criteria(CRITERIA)
    assert len(shown) == 3 and "only when scope is" in shown[1]


@pytest.mark.parametrize(
    ("step_id", "bound"),
    [
        pytest.param("unbounded", ENGINE_DEFAULT_BOUND, id="the-engines-default"),
        pytest.param("bounded", 7, id="the-loops-own"),
    ],
)
def test_a_loops_bound_is_the_engines(wording_page, step_id, bound):
    words = f"at most {bound} iterations"
    titles = [unescape(t) for t in re.findall(r"<title>(loop · [^<]*)</title>", wording_page)]
    (diagram,) = [t for t in titles if t.endswith(f" · {step_id}")]
    assert words in diagram, diagram
    assert words in unescape(_panel(wording_page, step_id))
