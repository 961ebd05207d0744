"""Template references (WR3xx): to steps, parameters, secrets and the context."""

from __future__ import annotations

import pytest

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate, set_at

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    (
        "WR301",
        set_at(["steps", 2, "prompt"], "See {{steps.plna.output}}"),
        set_at(["steps", 2, "prompt"], "See {{steps.plan.output}}"),
        "{{steps.plna.output}}",
    ),
    (
        "WR302",
        set_at(["steps", 0, "prompt"], "See {{steps.review.output}}"),
        set_at(["steps", 0, "prompt"], "See {{context.x}}"),
        "{{steps.review.output}}",
    ),
    (
        "WR303",
        set_at(["steps", 0, "prompt"], "For {{parameters.tagret}}"),
        set_at(["steps", 0, "prompt"], "For {{parameters.target}}"),
        "{{parameters.tagret}}",
    ),
    (
        "WR304",
        set_at(["steps", 1, "run", "env"], {"T": "{{secrets.OTHER}}"}),
        set_at(["steps", 1, "run", "env"], {"T": "{{secrets.API_TOKEN}}"}),
        "{{secrets.OTHER}}",
    ),
    (
        "WR305",
        set_at(["steps", 0, "prompt"], "Hi {{secret.API_TOKEN}}"),
        set_at(["steps", 0, "prompt"], "Hi {{context.who}}"),
        "{{secret.API_TOKEN}}",
    ),
    (
        "WR306",
        set_at(["steps", 0, "prompt"], "Progress {{(done / total * 100).toFixed(1)}}%"),
        set_at(["steps", 0, "prompt"], "Progress {{context.percent}}%"),
        "{{(done / total * 100).toFixed(1)}}",
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_bare_template_names_are_context_variables_not_errors():
    result = lint(
        mutate(set_at(["steps", 0, "prompt"], "Item {{currentItem}} of {{items.length}}"))
    )
    assert result.diagnostics == []
    near = lint(mutate(set_at(["steps", 0, "prompt"], "Token {{secret.API_TOKEN}}")))
    [warning] = near.diagnostics
    assert (warning.code, warning.severity.value) == ("WR305", "warning")
    assert "{{secrets.API_TOKEN}}" in warning.message


def test_braces_in_titles_and_guidance_get_no_hint():
    def change(w):
        w["steps"][0]["title"] = "Plan {{i + 1}}"
        w["steps"][0]["guidance"] = ['flowchart A{{"Pick"}}']

    assert lint(mutate(change)).diagnostics == []


def test_a_step_referring_to_its_own_output():
    result = lint(mutate(set_at(["steps", 0, "prompt"], "Improve {{steps.plan.output}}")))
    [self_ref] = [d for d in result.diagnostics if d.code == "WR302"]
    assert "refers to this step itself" in self_ref.message


@pytest.mark.parametrize("text", ["{{steps.}}", "{{parameters. target}}", "{{secrets..X}}"])
def test_a_malformed_namespaced_reference_is_still_an_error(text):
    [found] = lint(mutate(set_at(["steps", 2, "prompt"], f"See {text}"))).diagnostics
    assert (found.code, found.severity.value) == ("WR305", "error")
