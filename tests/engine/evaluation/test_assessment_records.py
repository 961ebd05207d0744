"""What an assessment step's answer records: each assessment read without a problem, its ratings
at the levels the workflow defines, and a note per rating read ignoring case and space."""

from __future__ import annotations

from typing import Any

from workrail_engine.evaluation.contracts import ASSESSMENT_KIND, check_step_artifacts

WORKFLOW = {
    "assessments": [
        {
            "id": "risk",
            "purpose": "How risky",
            "dimensions": [
                {"id": "blast", "purpose": "Reach", "levels": ["Small", "Large"]},
                {"id": "undo", "purpose": "Undo", "levels": ["easy", "hard"], "required": False},
            ],
        },
        {
            "id": "quality",
            "purpose": "How good",
            "dimensions": [{"id": "tests", "purpose": "Tests", "levels": ["low", "high"]}],
        },
    ]
}
STEP = {"id": "rate", "assessmentRefs": ["risk", "quality"]}


def rating(assessment_id: str, **dimensions: Any) -> dict[str, Any]:
    return {"kind": ASSESSMENT_KIND, "assessmentId": assessment_id, "dimensions": dimensions}


def test_each_assessment_records_its_own_ratings_and_notes() -> None:
    check = check_step_artifacts(
        WORKFLOW,
        STEP,
        [
            rating("quality", tests="high"),
            rating("risk", blast={"level": " small", "rationale": " one service "}),
        ],
    )
    assert check.valid
    assert check.assessments == [
        {
            "assessmentId": "risk",
            "dimensions": [{"dimensionId": "blast", "level": "Small", "rationale": "one service"}],
            "normalizationNotes": ["Level ' small' of 'blast' read as 'Small'."],
        },
        {
            "assessmentId": "quality",
            "dimensions": [{"dimensionId": "tests", "level": "high"}],
            "normalizationNotes": [],
        },
    ]


def test_an_assessment_with_a_problem_records_nothing() -> None:
    check = check_step_artifacts(
        WORKFLOW, STEP, [rating("quality", tests="medium"), rating("risk", blast="Large")]
    )
    assert not check.valid
    assert [a["assessmentId"] for a in check.assessments] == ["risk"]
