"""The per-step findings shared by the files of a batch (`StepsByContent`): found again only for
a step of the same kind and content, whether or not the step has a prompt."""

from __future__ import annotations

from typing import Any

from workrail_engine.definition.steps import StepSite
from workrail_engine.lint.step_check_cache import StepsByContent, step_findings


def _site(step: dict[str, Any], kind: str = "prompt") -> StepSite:
    return StepSite(step, "/steps/0", 0, 0, None, None, step.get("id"), kind)


def _codes(site: StepSite, by_content: StepsByContent) -> list[str]:
    [found] = step_findings([site], {}, by_content)
    return [finding.code for finding in found.findings]


def _comparing(operand: object, prompt: str | None = "Go on.") -> dict[str, Any]:
    step: dict[str, Any] = {"id": "two", "title": "Two"}
    if prompt is not None:
        step["prompt"] = prompt
    step["runCondition"] = {"var": "count", "gt": operand}
    return step


def test_steps_with_one_prompt_and_other_content_get_their_own_findings() -> None:
    by_content = StepsByContent()
    assert _codes(_site(_comparing(1)), by_content) == []
    # Same prompt, an operand of another type: equal to 1 for `==`, another step for a check.
    assert _codes(_site(_comparing(True)), by_content) == ["WR402"]
    assert _codes(_site(_comparing("1")), by_content) == ["WR402"]
    assert _codes(_site(_comparing(1)), by_content) == []


def test_a_step_met_again_gets_the_findings_of_its_first_check() -> None:
    by_content = StepsByContent()
    for prompt in ("Go on.", None):  # found by its prompt first, or by its whole content
        [first] = step_findings([_site(_comparing(True, prompt))], {}, by_content)
        [again] = step_findings([_site(_comparing(True, prompt))], {}, by_content)
        assert again is first
        [other] = step_findings([_site(_comparing("1", prompt))], {}, by_content)
        assert other is not first


def test_a_step_of_another_kind_is_checked_for_its_kind() -> None:
    by_content = StepsByContent()
    condition = {"var": "x", "gt": True}
    for prompt in ("p", None):
        step: dict[str, Any] = {"id": "l", "title": "L", "prompt": prompt}
        if prompt is None:
            del step["prompt"]
        step["loop"] = {"type": "while", "condition": condition}
        assert _codes(_site(step, "prompt"), by_content) == []
        assert _codes(_site(step, "loop"), by_content) == ["WR402"]
