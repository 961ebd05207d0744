"""The shapes of a run as the run service returns it: a run's state, its step results, a
cancellation, a run in a list — JSON objects the front ends pass on as they are, typed once here.

A session answers through the same service, in the same shapes (``session`` says what is a
session's own). The MCP tools declare these types as their results, so their output schemas are
derived from them: every key a result may carry is declared, and a value typed ``Any`` says which
JSON types it takes (`JsonTypes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, get_args

from typing_extensions import TypedDict

__all__ = [
    "BlockedFields",
    "Cancelled",
    "JsonTypes",
    "Pending",
    "RunLink",
    "RunResult",
    "RunSummary",
    "StepOutput",
    "StepResult",
    "link_json",
    "step_result_of",
]


@dataclass(frozen=True)
class JsonTypes:
    """The JSON types a value typed ``Any`` takes, for a schema derived from a result type. The
    schema generator of the MCP SDK (pydantic) reads `__get_pydantic_json_schema__` from
    ``Annotated`` metadata; nothing here imports it."""

    description: str
    types: tuple[str, ...]

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {"anyOf": [{"type": t} for t in self.types], "description": self.description}


StepOutput = Annotated[
    Any,
    JsonTypes(
        "A command step's {exit_code, stdout, stderr, duration, …}; the text an agent submitted "
        "for a prompt step; null when the step produced none (skipped, or failed before it ran).",
        ("object", "string", "null"),
    ),
]


class StepResult(TypedDict):
    step_name: str
    status: str
    output: StepOutput
    duration: float
    attempts: NotRequired[int]  # a command step retried
    error: NotRequired[str]
    deadline: NotRequired[bool]  # the run's timeout ended it
    validation: NotRequired[dict[str, Any]]  # a command's output checked by the step's criteria
    reason: NotRequired[str]  # why it was skipped
    confirmation: NotRequired[dict[str, Any] | None]  # a person's approval of the answer
    confirmations: NotRequired[list[dict[str, Any]]]  # every reply to that confirmation
    model_usage: NotRequired[dict[str, Any] | None]  # the client's model gave the answer
    notes: NotRequired[str | None]  # a session's step: the agent's notes
    step_attempt: NotRequired[int]  # a session's step: the attempt answered


# The keys a recorded step result may carry besides the four every result has.
_StepExtra = Literal[
    "attempts",
    "error",
    "deadline",
    "validation",
    "reason",
    "confirmation",
    "confirmations",
    "model_usage",
    "notes",
    "step_attempt",
]
_STEP_EXTRAS: tuple[_StepExtra, ...] = get_args(_StepExtra)


class RunLink(TypedDict):
    """A run forked from another (`RunService.fork`), at the step key it was forked from."""

    run_id: str
    step: str


class RunResult(TypedDict):
    status: str
    workflow_id: NotRequired[str]
    workflow_name: NotRequired[str | None]
    steps_completed: NotRequired[int]
    steps_total: NotRequired[int]
    step_results: NotRequired[list[StepResult]]
    execution_time: NotRequired[float]
    error_message: NotRequired[str | None]
    waiting: NotRequired[dict[str, Any]]
    outcome: NotRequired[str]
    issues: NotRequired[list[str]]
    suggestions: NotRequired[list[str]]
    follow_ups: NotRequired[list[str]]
    groups: NotRequired[list[dict[str, Any]]]
    sampling: NotRequired[dict[str, Any]]
    confirmation: NotRequired[dict[str, Any]]

    dry_run: NotRequired[bool]
    # The plan of a dry run besides its groups.
    parameters: NotRequired[dict[str, Any]]
    timeout: NotRequired[float | None]
    parallel_limit: NotRequired[int | None]
    executed: NotRequired[bool]
    # An answer: the step it was for (and, answered but not yet acted on, the step the run has).
    answered_step: NotRequired[str]
    message: NotRequired[str]
    # A blocked answer: what failed, upstream's blockers, and an answer that would pass.
    problems: NotRequired[list[dict[str, Any]]]
    blockers: NotRequired[list[dict[str, Any]]]
    retry: NotRequired[dict[str, Any] | None]
    validation: NotRequired[dict[str, list[str]]]
    assessment_followup: NotRequired[dict[str, str]]
    # A session: its own facts, and the tokens of an answer to it.
    session: NotRequired[dict[str, Any]]
    continue_token: NotRequired[str]
    checkpoint_token: NotRequired[str]
    # A forked run: the run and step it was forked from; a run forked: its forks.
    forked_from: NotRequired[RunLink]
    forks: NotRequired[list[RunLink]]


class BlockedFields(TypedDict, total=False):
    """What a blocked answer adds to the state of the run (or session) it was for: the first
    four always, the others when it has them (optional all, as in `RunResult`)."""

    problems: list[dict[str, Any]]
    issues: list[str]
    suggestions: list[str]
    blockers: list[dict[str, Any]]
    validation: dict[str, list[str]]
    assessment_followup: dict[str, str]
    retry: dict[str, Any] | None


# The step a session waits on, as upstream's session tools show it (no docstring: a schema
# derived from it would carry it as a description upstream's does not have).
class Pending(TypedDict):
    stepId: str
    title: str
    prompt: str
    agentRole: NotRequired[str]


class Cancelled(TypedDict):
    status: str
    steps_completed: int
    reason: NotRequired[str]
    message: NotRequired[str]


class RunSummary(TypedDict):
    """A run (or a session: ``kind``) as the list of runs shows it."""

    workflow_id: str
    workflow_name: str | None
    status: str
    started_at: float
    kind: NotRequired[str]
    forked_from: NotRequired[RunLink]
    forks: NotRequired[list[RunLink]]


def step_result_of(stored: Mapping[str, Any]) -> StepResult:
    """A step result as the run recorded it (the journal's JSON), without its ``step_id``."""
    result: StepResult = {
        "step_name": stored["step_name"],
        "status": stored["status"],
        "output": stored.get("output"),
        "duration": stored["duration"],
    }
    for key in _STEP_EXTRAS:
        if key in stored:
            result[key] = stored[key]
    return result


def link_json(link: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A lineage link (``{run_id, step_id, step_attempt}``, `runs.fork.lineage_links`) as tool
    results and JSON reports name it: ``{runId, stepId, stepAttempt}``. Here, not in runs: a
    session's answers carry it too, and sessions import nothing of runs."""
    if link is None:
        return None
    return {"runId": link["run_id"], "stepId": link["step_id"], "stepAttempt": link["step_attempt"]}
