"""The recorded histories of a run store, read for replay: the sessions and runs of some workflows.

Read-only through `RunHistory` (no DBOS, nothing created: a store no run has made reads as
empty). What a history recorded before the record kept it is named in its ``lacks``: a session's
start context (replayed from its goal alone), the artifacts and context of its answers (replayed
with the notes alone), a run's answer messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..definition.content_hash import workflow_hash
from ..definition.steps import step_kind, walk_steps
from ..runs.answer_delivery import MESSAGE
from ..runs.fork import FORKED_FROM, lineage_links
from ..runs.history import RunHistory
from ..runs.journal import attempt_outcome
from ..runs.run_status import status_sql
from ..serving.navigator import LOOPS_KEY
from .history import History, RecordedStep

__all__ = ["LACKS", "histories_through_steps", "read_histories"]

# What a history recorded before the record kept it may lack, as replay says it.
LACKS = {
    "start_context": "the context it started with (replayed from its goal alone)",
    "answer_given": (
        "the artifacts of its answers, and their context (read back from the context after each)"
    ),
    "answer_message": "the answer to a step (the walk stops there)",
}
_IDS_PER_QUERY = 500  # workflow ids or run ids per query (far below SQL's bound on them)


def read_histories(history: RunHistory, workflow_ids: Iterable[str] | None) -> list[History]:
    """The sessions, then the runs, of ``workflow_ids`` (None: of every workflow), oldest first."""
    wanted = sorted(set(workflow_ids)) if workflow_ids is not None else None
    return [*_sessions(history, wanted), *_runs(history, wanted)]


def _chunks(ids: Sequence[str] | None) -> Iterable[tuple[str, list[str]]]:
    """(SQL condition, its arguments) per chunk of ``ids`` (one "1 = 1" without any)."""
    if ids is None:
        yield "1 = 1", []
        return
    for start in range(0, len(ids), _IDS_PER_QUERY):
        chunk = list(ids[start : start + _IDS_PER_QUERY])
        yield "IN (" + ", ".join("?" * len(chunk)) + ")", chunk


@dataclass(frozen=True)
class _Answered:
    """What replay reads of an answer's row: the answer as given (None in a row recorded before
    it was kept) and, from its recorded response, only the parts replay needs — read out in SQL,
    so that the response (a rendered step, kilobytes) is never parsed here."""

    step_key: str
    step_id: str | None
    notes: str | None
    given: dict[str, Any] | None
    loop: dict[str, Any] | None  # a session's: the loop position of the step served next
    # parsed only when needed (JSON text until then: parsing is most of a read)
    context_after_text: str | None  # a session's, without ``given``: the context after it
    message_text: str | None  # a run's: the message sent to it, its output

    @property
    def context_after(self) -> dict[str, Any]:
        return _loaded(self.context_after_text) or {}

    @property
    def message(self) -> Any:
        return _loaded(self.message_text)


def _answers(history: RunHistory, where: str, args: list[str]) -> dict[str, list[_Answered]]:
    """The answers of the runs (or sessions) that ``where`` selects (``s`` or ``ws`` aliased),
    by run id, oldest first."""
    loop = history.json_field("a.response", "next", "loop")
    after = history.json_field("a.response", "next", "context")
    message = history.json_field("a.response", MESSAGE)
    found: dict[str, list[_Answered]] = {}
    for given in ("a.given", "NULL"):
        # the context after only where the answer as given is not recorded
        parts = [given, loop, f"CASE WHEN {given} IS NULL THEN {after} END", message]
        try:
            rows = history.rows(
                f"SELECT a.run_id, a.step_key, a.step_id, a.notes, {', '.join(parts)}"
                f" FROM {{answers}} a {where} ORDER BY a.answered_at",
                args,
            )
        except Exception as exc:  # a store written before the column (read-only here)
            if "column" not in str(exc).lower():
                raise
            continue
        for run_id, key, step_id, notes, given_text, loop, after, message in rows:
            found.setdefault(run_id, []).append(
                _Answered(key, step_id, notes, _loaded(given_text), _loaded(loop), after, message)
            )
        return found
    return found


def _loaded(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) and text else None


# --- sessions ------------------------------------------------------------------------------


def _sessions(history: RunHistory, wanted: list[str] | None) -> list[History]:
    out = []
    for condition, args in _chunks(wanted):
        where = "" if wanted is None else f"WHERE s.workflow_id {condition}"
        rows = history.rows(
            "SELECT s.run_id, s.workflow_id, s.workflow_hash, s.status, s.goal, p.state,"
            " p.pending FROM {sessions} s JOIN {positions} p ON p.run_id = s.run_id "
            + where
            + " ORDER BY s.created_at",
            args,
        )
        answers = _answers(history, "JOIN {sessions} s ON s.run_id = a.run_id " + where, args)
        parents = {
            run_id: {"run_id": parent, "step_id": step_id, "step_attempt": attempt}
            for run_id, parent, step_id, attempt in history.rows(
                "SELECT f.run_id, f.parent_run_id, f.step_id, f.parent_attempt FROM {forks} f"
                " JOIN {sessions} s ON s.run_id = f.run_id " + where,
                args,
            )
        }
        out += [_session(row, answers.get(row[0], []), parents.get(row[0])) for row in rows]
    return out


def _session(
    row: Sequence[Any], answers: list[_Answered], forked_from: dict[str, Any] | None
) -> History:
    run_id, workflow_id, digest, status, goal, state_text, pending_text = row
    state = json.loads(state_text)
    pending = json.loads(pending_text) if pending_text else {}
    lacks = []
    start = state.get("start_context")
    if start is None:
        lacks.append(LACKS["start_context"])
        start = {"goal": goal}
    steps = []
    answers = sorted(answers, key=lambda a: int(a.step_key))
    before = start
    served_at = None  # the loop position the step was served at: the answer before recorded it
    for answer in answers:
        given = answer.given
        if given is None:
            if LACKS["answer_given"] not in lacks:
                lacks.append(LACKS["answer_given"])
            after = answer.context_after
            given = {"artifacts": [], "context": _set(before, after)}
            before = after or before
        given = {"output": answer.notes, **given}
        steps.append(
            RecordedStep(answer.step_key, answer.step_id or "", "answered", given, loop=served_at)
        )
        served_at = answer.loop
    end: dict[str, Any] = {"status": status}
    if status != "success" and pending.get("step"):
        end["pending"] = str(len(answers) + 1)
        end["pending_step"] = pending["step"]["id"]
    return History(
        "session", run_id, workflow_id, digest, {"context": start}, steps, end, lacks, forked_from
    )


def _set(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What an answer recorded without its context set, read back from the session's context
    after it: what changed, without the navigator's loop bookkeeping."""
    return {k: v for k, v in after.items() if k != LOOPS_KEY and before.get(k) != v}


# --- runs ----------------------------------------------------------------------------------


def _runs(history: RunHistory, wanted: list[str] | None) -> list[History]:
    stored = "COALESCE(wi.inputs, ws.inputs)"
    workflow_id = history.json_field(stored, "positionalArgs", 0, "workflow", "id")
    status = status_sql("ws.status", history.json_field("ev.value", "status"))
    out = []
    for condition, args in _chunks(wanted):
        where = "" if wanted is None else f" AND {workflow_id} {condition}"
        joins = (
            " FROM {status} ws LEFT JOIN {events} ev"
            " ON ev.workflow_uuid = ws.workflow_uuid AND ev.key = 'state'"
            " LEFT JOIN {input} wi ON wi.workflow_uuid = ws.workflow_uuid"
            " WHERE ws.name = 'workrail_run'" + where
        )
        rows = history.rows(
            f"SELECT ws.workflow_uuid, ({status}), ev.value, {stored}"
            + joins
            + " ORDER BY ws.created_at",
            args,
        )
        ids = "WHERE a.run_id IN (SELECT ws.workflow_uuid" + joins + ")"
        answers = _answers(history, ids, args)
        journal: dict[str, list[tuple[Any, ...]]] = {}
        for run_id, *values in history.rows(
            "SELECT j.run_id, j.step_key, j.attempt, j.outcome, j.result FROM {journal} j"
            " WHERE j.run_id IN (SELECT ws.workflow_uuid" + joins + ") ORDER BY j.position",
            args,
        ):
            journal.setdefault(run_id, []).append(tuple(values))
        for run_id, kind, state_text, inputs in rows:
            run = history.run_input_of(inputs)
            out.append(
                _run(run_id, kind, state_text, run, journal.get(run_id, []), answers.get(run_id))
            )
    return out


def _run(
    run_id: str,
    status: str,
    state_text: Any,
    run: dict[str, Any],
    journal: list[tuple[Any, ...]],
    answers: list[_Answered] | None,
) -> History:
    workflow = run.get("workflow") or {}
    by_key = {answer.step_key: answer for answer in answers or []}
    forked_from = run.get(FORKED_FROM) or {}
    kept_answers = forked_from.get("answers") or {}  # a fork's kept prompt steps': not its own
    prompts = _prompt_steps(workflow)
    attempts: dict[str, dict[str, Any]] = {}
    steps: list[RecordedStep] = []
    lacks: list[str] = []
    for key, attempt, outcome, result_text in journal:
        result = json.loads(result_text) if result_text is not None else None
        if attempt and outcome is not None:
            attempts.setdefault(key, {})[str(attempt)] = attempt_outcome(
                json.loads(outcome), result
            )
        if result is None:
            continue
        answer = by_key.get(key)
        given = _given(answer) if answer is not None else None
        answered = answer is not None
        if not answered and forked_from and len(steps) < int(forked_from["kept"]):
            # a kept step: its answer is the fork's to keep, when its parent had it recorded
            answered = result.get("status") != "skipped" and prompts(result.get("step_id"))
            if key in kept_answers:
                given = _kept_given(kept_answers[key], result)
        if answered and given is None and LACKS["answer_message"] not in lacks:
            lacks.append(LACKS["answer_message"])
        steps.append(
            RecordedStep(
                key,
                str(result.get("step_id") or key),
                "answered" if given is not None else str(result.get("status")),
                given,
                attempts.pop(key, {}),
                _kept(result),
            )
        )
    state = json.loads(state_text) if isinstance(state_text, str) else {}
    end: dict[str, Any] = {"status": status}
    waiting = (state or {}).get("waiting") if status == "waiting" else None
    if waiting:
        end["pending"] = waiting["step_key"]
        end["pending_step"] = waiting["step"]["id"]
        answer = by_key.get(waiting["step_key"])
        if answer is not None and _given(answer) is not None:
            end["answer"] = _given(answer)  # answered, not yet acted on
    start = {"parameters": run.get("parameters") or {}, "context": run.get("context") or {}}
    if forked_from:
        start["fork"] = {k: forked_from[k] for k in ("kept", "parameters", "switches")}
    return History(
        "run",
        run_id,
        str(workflow.get("id")),
        run.get("workflow_hash") or (workflow_hash(workflow) if workflow else None),
        start,
        steps,
        end,
        lacks,
        lineage_links({"forked_from": forked_from or None})["forked_from"],
    )


def _prompt_steps(workflow: Mapping[str, Any]) -> Callable[[Any], bool]:
    """Whether a step id of ``workflow`` is a prompt step (the workflow walked on first use)."""
    ids: set[str] | None = None

    def prompts(step_id: Any) -> bool:
        nonlocal ids
        if ids is None:
            ids = {s.id for s in walk_steps(workflow) if s.id and step_kind(s.step) == "prompt"}
        return step_id in ids

    return prompts


def _given(answer: _Answered) -> dict[str, Any] | None:
    """A run's answer as given: its output from the message sent to the run, its artifacts and
    context from the recorded column, or the message too where it is not recorded."""
    message = answer.message
    if not isinstance(message, dict):
        return None
    kept = answer.given or {
        "artifacts": message.get("artifacts") or [],
        "context": message.get("context") or {},
    }
    return {"output": message.get("output"), **kept}


def _kept_given(kept: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The answer to a prompt step a fork kept, as its walk takes it (`fork.KeptPrefix`): the
    context and artifacts the parent was sent, the output its result recorded."""
    return {
        "output": result.get("output"),
        "artifacts": list(kept.get("artifacts") or []),
        "context": dict(kept.get("context") or {}),
    }


def _kept(result: dict[str, Any]) -> dict[str, Any]:
    """What of a step result the walk reads again (status, output, error), nothing of timing."""
    return {k: result[k] for k in ("status", "output", "error", "deadline") if k in result}


# --- how many histories pass through each step ---------------------------------------------


def histories_through_steps(history: RunHistory, workflow_id: str) -> dict[str, int]:
    """For each step id of the workflow ``workflow_id``: how many recorded histories (sessions
    and runs) took it — answered it, or ran it (a skipped step is not taken)."""
    counts: dict[str, int] = {}
    for step_id, n in history.rows(
        "SELECT a.step_id, COUNT(DISTINCT a.run_id) FROM {answers} a"
        " JOIN {sessions} s ON s.run_id = a.run_id WHERE s.workflow_id = ? GROUP BY a.step_id",
        [workflow_id],
    ):
        counts[str(step_id)] = counts.get(str(step_id), 0) + int(n)
    stored = "COALESCE(wi.inputs, ws.inputs)"
    of_workflow = history.json_field(stored, "positionalArgs", 0, "workflow", "id")
    step_id = history.json_field("j.result", "step_id")
    for found, n in history.rows(
        f"SELECT {step_id}, COUNT(DISTINCT j.run_id) FROM {{journal}} j"
        f" WHERE j.result IS NOT NULL AND {history.json_field('j.result', 'status')} <> 'skipped'"
        " AND j.run_id IN (SELECT ws.workflow_uuid FROM {status} ws"
        " LEFT JOIN {input} wi ON wi.workflow_uuid = ws.workflow_uuid"
        f" WHERE ws.name = 'workrail_run' AND {of_workflow} = ?) GROUP BY {step_id}",
        [workflow_id],
    ):
        counts[str(found)] = counts.get(str(found), 0) + int(n)
    return counts
