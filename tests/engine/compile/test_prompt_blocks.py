"""Prompt blocks rendered as the prompt's Markdown."""

from __future__ import annotations

from tests.engine.compile.compile_workflows import compile_with_routines


def test_prompt_blocks_render_as_markdown_sections_in_order() -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "a",
                "title": "A",
                "promptBlocks": {
                    "verify": ["Tests pass"],
                    "outputRequired": {"plan": "the plan", "risks": "the risks"},
                    "procedure": [
                        "Read",
                        [{"kind": "text", "text": "Write "}, {"kind": "text", "text": "it"}],
                    ],
                    "constraints": ["No new deps"],
                    "goal": "Plan the change",
                },
            }
        ],
    }
    step = compile_with_routines(workflow).definition["steps"][0]
    assert "promptBlocks" not in step
    assert step["prompt"] == (
        "## Goal\nPlan the change\n\n"
        "## Constraints\n- No new deps\n\n"
        "## Procedure\n1. Read\n2. Write it\n\n"
        "## Output Required\n- **plan**: the plan\n- **risks**: the risks\n\n"
        "## Verify\n- Tests pass"
    )
