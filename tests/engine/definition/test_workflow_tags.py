"""The tags a workflow is found by: its own, upstream's functional ones, its namespace."""

from __future__ import annotations

from workrail_engine.definition.workflow_tags import FUNCTIONAL_TAGS, tag_summary, workflow_tags


def test_own_tags_then_upstreams_functional_ones_or_else_the_namespace():
    assert workflow_tags("coding-task", ["coding", "tests", 3]) == ["coding", "tests"]
    assert workflow_tags("wr.discovery", ["design"]) == ["design", "investigation"]
    assert workflow_tags("acme.deploy", None) == ["acme"]
    assert workflow_tags("wr.not-upstreams", []) == ["wr"]  # upstream's rule: untagged ids
    assert workflow_tags("plain", "not-a-list") == []


def test_the_summary_lists_functional_tags_first_then_the_others_by_name():
    summary = tag_summary(
        [("a.one", ["zeta", "a"]), ("a.two", ["a", "routines"]), ("c", ["coding"])]
    )
    assert [entry["id"] for entry in summary] == ["coding", "routines", "a", "zeta"]
    first = summary[0]
    assert first == {
        "id": "coding",
        "displayName": FUNCTIONAL_TAGS["coding"],
        "count": 1,
        "examples": ["c"],
    }
    assert summary[2] == {"id": "a", "displayName": "a", "count": 2, "examples": ["a.one", "a.two"]}
