"""Ref parts: snippets of the engine and the workflow's own references."""

from __future__ import annotations

from tests.engine.compile.compile_workflows import compile_with_routines


def test_a_ref_part_may_point_at_a_declared_reference() -> None:
    workflow = {
        "id": "w",
        "references": [
            {
                "id": "policy",
                "title": "Release policy",
                "source": "docs/policy.md",
                "purpose": "What a release needs",
                "authoritative": True,
            }
        ],
        "steps": [
            {
                "id": "a",
                "promptBlocks": {
                    "constraints": [
                        [{"kind": "text", "text": "Follow "}, {"kind": "ref", "refId": "policy"}]
                    ]
                },
            }
        ],
    }
    compiled = compile_with_routines(workflow)
    assert compiled.problems == ()
    assert compiled.definition["steps"][0]["prompt"] == (
        '## Constraints\n- Follow "Release policy" (docs/policy.md): What a release needs '
        "(authoritative: follow it)"
    )
