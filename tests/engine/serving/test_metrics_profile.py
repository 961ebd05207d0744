"""metricsProfile: which steps of a workflow get which metrics paragraph."""

from __future__ import annotations

import pytest

from workrail_engine.serving.metrics_profile import metrics_footer

STEPS = [{"id": "a", "prompt": "A"}, {"id": "b", "prompt": "B"}]


@pytest.mark.parametrize("profile", [None, "none", "unknown", 3])
def test_no_profile_none_or_an_unknown_one_adds_nothing(profile):
    workflow = {"steps": STEPS} if profile is None else {"metricsProfile": profile, "steps": STEPS}
    assert metrics_footer(workflow, "a") == metrics_footer(workflow, "b") == ""


@pytest.mark.parametrize("profile", ["review", "research", "design", "ticket"])
def test_outcome_profiles_ask_on_the_last_step_only(profile):
    workflow = {"metricsProfile": profile, "steps": STEPS}
    assert metrics_footer(workflow, "a") == ""
    assert "`metrics_outcome`" in metrics_footer(workflow, "b")
    assert ("`metrics_pr_numbers`" in metrics_footer(workflow, "b")) == (profile == "review")


def test_coding_asks_for_shas_on_every_step_and_totals_on_the_last():
    workflow = {"metricsProfile": "coding", "steps": STEPS}
    first, last = metrics_footer(workflow, "a"), metrics_footer(workflow, "b")
    assert "`metrics_commit_shas`" in first and "`metrics_outcome`" not in first
    assert last.startswith(first) and "`metrics_lines_removed`" in last


def test_a_final_loop_asks_on_its_last_work_step_not_its_control_step():
    control = {"id": "decide", "outputContract": {"contractRef": "wr.contracts.loop_control"}}
    loop = {"id": "passes", "type": "loop", "body": [{"id": "work"}, control]}
    workflow = {"metricsProfile": "ticket", "steps": [*STEPS, loop]}
    assert metrics_footer(workflow, "work") != ""
    assert metrics_footer(workflow, "decide") == metrics_footer(workflow, "b") == ""
