"""`SessionService`: sessions — durable runs whose steps an agent answers — on the run store.

A session walks its workflow with the stateless navigator (`navigator.next_step`, the function
behind the next-step tool), so it serves the same steps and prompts; what the agent would carry
(completed steps, context, loop positions) is kept in the store instead, and every answer passes
`step_checks.check_answer` before the session moves. Nothing here imports DBOS: an advance is one
transaction of ours (see `store.SessionStore.advance`).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..answers.confirmation import Confirm
from ..answers.record import (
    AnswerNotApplied,
    MaskedAnswer,
    answer_facts,
    earlier_answer,
    masked_answer,
    masks_of,
    with_history,
)
from ..answers.store import Answer, store_url
from ..answers.verdict import judge
from ..definition.content_hash import workflow_hash
from ..definition.steps import executable_steps, find_step
from ..errors import RunNotFound
from ..evaluation.step_checks import notes_required
from ..result_shapes import Cancelled, Pending, RunResult, RunSummary, StepResult, link_json
from ..serving.navigator import next_step
from .git_context import git_context
from .position import answer_context, moved_state
from .reference_paths import resolve_references
from .store import Fork, SessionRow, SessionStore
from .tokens import SessionTokenError, read_token, sign_token

__all__ = [
    "NOTES_REQUIRED",
    "SessionService",
    "SessionStep",
    "workflow_hash",
]

# The recovery section of a re-read (rehydrate): the latest answered steps and their notes, in
# the order answered, so that a new chat reads the session's story up to the pending step.
RECOVERY_STEPS = 8  # earlier steps shown
RECOVERY_NOTE_CHARS = 1200  # of each step's notes
RECOVERY_CHARS = 6000  # of the whole section: the oldest steps are left out first
RESUME_LIMIT = 5
# Appended to the prompt of exactly the steps whose answer is sent back without notes
# (`notes_required`), so that an agent learns it before it answers, not from a blocked answer.
NOTES_REQUIRED = (
    "**Notes required.** When you advance, send `output.notesMarkdown`: a short markdown record, "
    "for a person reading it later, of what you did, what you found or changed, and what you "
    "decided and why. An answer without notes is sent back."
)
# Appended to the prompt of a step re-read after the session moved past it: what advancing does.
FORK_NOTE = (
    "**An earlier step.** Session {run_id} has moved past this step (it is {now}). Advancing "
    "with this continueToken starts a new branch of the session from here, which becomes the "
    "session you continue; the session as it is stays as it is, and readable."
)
_WORD = re.compile(r"[\w.#/-]{2,}", re.UNICODE)


@dataclass
class SessionStep:
    """A session's position as an advance, a re-read or a start returns it.

    ``outcome``: started | advanced | blocked (the answer failed a check: ``problems`` say what
    to send; the same continue token retries) | replayed (this very answer was applied before:
    its recorded response) | current (a re-read, with ``recovery``: the earlier steps' notes).
    ``next`` is the navigator's next step (``step``, ``guidance``, ``isComplete``, ``context``…),
    exactly what the stateless next-step call returns for the same progress."""

    outcome: str
    run_id: str
    workflow_id: str
    workflow_hash: str
    status: str  # waiting | success | cancelled
    attempt: int
    continue_token: str
    checkpoint_token: str
    is_complete: bool
    next: dict[str, Any]
    problems: list[dict[str, str]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    # A blocked answer's blockers, validation and assessment follow-up (`answers.blockers`), and
    # the answer that would pass ({notes, artifacts}; None when none is known).
    blockers: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, list[str]] | None = None
    assessment_followup: dict[str, str] | None = None
    retry: dict[str, Any] | None = None
    recovery: list[dict[str, Any]] | None = None
    # On an advance: the person's confirmation of the step just answered ({action, comment, by,
    # at}); on a blocked answer: the refusal that keeps the step pending.
    confirmation: dict[str, Any] | None = None
    # On an advance whose answer a model gave: the run's model usage so far (calls, tokens).
    model_usage: dict[str, Any] | None = None
    # On a start and a re-read of a pending step: the workflow's references as looked up at the
    # start (`reference_paths`). On an advance: what the step just answered recorded — its
    # assessments' ratings ({assessments: [...]}, `ArtifactCheck.assessments`).
    references: list[dict[str, Any]] | None = None
    step_context: dict[str, Any] | None = None
    # On a re-read of a step the session has moved past: the session and step that advancing
    # with ``continue_token`` branches from ({runId, stepId, stepAttempt, sessionStatus,
    # sessionPendingStepId: where the session is now}). On the advance
    # that made a branch: where it branched ({runId, stepId, stepAttempt}).
    fork_of: dict[str, Any] | None = None
    forked_from: dict[str, Any] | None = None

    @property
    def pending(self) -> Pending | None:
        """The step to do now: {stepId, title, prompt, agentRole?} (None once complete)."""
        step = self.next.get("step")
        if self.is_complete or not step:
            return None
        prompt = (self.next.get("guidance") or {}).get("prompt") or step.get("prompt") or ""
        if notes_required(step):
            prompt = f"{prompt}\n\n{NOTES_REQUIRED}"
        if self.fork_of:
            now = self.fork_of["sessionPendingStepId"]
            note = FORK_NOTE.format(
                run_id=self.fork_of["runId"],
                now=f"at step {now!r}" if now else self.fork_of["sessionStatus"],
            )
            prompt = f"{prompt}\n\n{note}"
        if self.recovery:
            prompt = f"{prompt}\n\n{recovery_text(self.recovery)}"
        pending: Pending = {
            "stepId": step["id"],
            "title": step.get("title") or step["id"],
            "prompt": prompt,
        }
        if step.get("agentRole"):
            pending["agentRole"] = step["agentRole"]
        return pending

    @property
    def requires_confirmation(self) -> bool:
        return bool((self.next.get("guidance") or {}).get("requiresConfirmation"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionStep:
        return cls(**dict(data))


def recovery_text(recovery: Sequence[Mapping[str, Any]]) -> str:
    """The earlier steps' titles and notes, oldest first; when they would pass `RECOVERY_CHARS`,
    the oldest are left out whole — the newest are what the pending step builds on."""
    heading = "## Recovery: where this session stands"
    entries = [
        f"### {entry['title']} (`{entry['stepId']}`)\n{entry.get('notes') or '(no notes)'}\n"
        for entry in recovery
    ]
    room = RECOVERY_CHARS - len(heading) - 2
    kept: list[str] = []
    for entry in reversed(entries):
        if len(entry) + 1 > room:
            break
        kept.insert(0, entry)
        room -= len(entry) + 1
    left_out = len(entries) - len(kept)
    if left_out:
        kept.insert(0, f"({left_out} earlier step{'s' if left_out > 1 else ''} left out)\n")
    return "\n".join([heading, "", *kept])


class SessionService:
    """Sessions in the run store at ``home`` (default: WORKRAIL_HOME's ``runs/``) or in the
    Postgres database ``database`` (default: WORKRAIL_DATABASE_URL). Thread-safe; the store is
    opened on first use."""

    def __init__(self, *, home: Path | None = None, database: str | None = None) -> None:
        self.home = home
        self.database = database
        self._store: SessionStore | None = None
        self._opening = threading.Lock()
        self._key: bytes | None = None

    # --- the store ----------------------------------------------------------------------------

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            with self._opening:  # callers on several threads open one store, not one each
                if self._store is None:
                    self._store = SessionStore(store_url(self.home, self.database))
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _token_key(self) -> bytes:
        if self._key is None:
            self._key = self.store.key()
        return self._key

    def _tokens(self, run_id: str, attempt: int) -> tuple[str, str]:
        key = self._token_key()
        return sign_token(key, "continue", run_id, attempt), sign_token(
            key, "checkpoint", run_id, attempt
        )

    # --- starting -----------------------------------------------------------------------------

    def start(
        self,
        workflow: Mapping[str, Any],
        *,
        goal: str,
        workspace: str | None = None,
        context: Mapping[str, Any] | None = None,
        git_branch: str | None = None,
        git_head: str | None = None,
        package: Path | None = None,
    ) -> SessionStep:
        """Pin ``workflow`` (as served: compiled) and serve its first step. ``goal`` becomes the
        context variable ``goal``; the workspace's git branch and HEAD are read unless given.
        The workflow's references are looked up in ``workspace`` and ``package`` (the folder
        that ships the workflow) and kept with the session."""
        definition = json.loads(json.dumps(workflow))  # pinned: the caller's copy may change
        masks = masks_of(definition)
        digest = workflow_hash(definition)
        self.store.pin(digest, definition)
        ctx = masks.mask({**(context or {}), "goal": goal})
        found = next_step(definition, [], ctx).to_dict()
        references = resolve_references(definition, workspace, package)
        branch, head = git_context(workspace) if workspace else (None, None)
        now = time.time()
        row = SessionRow(
            run_id=_new_run_id(),
            workflow_id=str(definition.get("id")),
            workflow_hash=digest,
            status="success" if found["isComplete"] else "waiting",
            attempt=1,
            state={
                "completed": [],
                "context": found["context"],
                "references": references,
                # what the first step was served from: replay starts its walk here
                "start_context": ctx,
            },
            pending=found,
            goal=masks.mask(goal),
            workspace=workspace,
            git_branch=git_branch or branch,
            git_head=git_head or head,
            last_notes=None,
            created_at=now,
            updated_at=now,
        )
        self.store.create(row, _search_text(row.workflow_id, row.goal))
        return _with_references(self._step("started", row), row)

    # --- advancing ----------------------------------------------------------------------------

    def continue_session(
        self,
        token: str,
        *,
        notes: str | None = None,
        artifacts: Sequence[Any] | None = None,
        context: Mapping[str, Any] | None = None,
        intent: str | None = None,
        confirm: Confirm | None = None,
        workspace: str | None = None,
    ) -> SessionStep:
        """Advance with a continue token (``intent`` advance, the default when notes or artifacts
        are given), or re-read the session (``intent`` rehydrate; a resume token may only
        re-read): the pending step again, with the recovery section (a new chat's start).

        A re-read by a resume token hands back the session's continue token, so it is served
        only to a caller in the session's ``workspace`` (the one it was started in); anyone else
        holding the resume token gets `SessionTokenError` TOKEN_SCOPE_MISMATCH."""
        parsed = read_token(self._token_key(), token)
        advancing = intent == "advance" or (
            intent is None and (notes is not None or artifacts is not None)
        )
        if parsed.kind == "checkpoint":
            raise SessionTokenError(
                "a checkpoint token only makes a checkpoint: pass it to the checkpoint call, "
                "and the continue token to continue",
                reason="TOKEN_SCOPE_MISMATCH",
            )
        if parsed.kind == "resume" and advancing:
            raise SessionTokenError(
                "a resume token can re-read a session (intent rehydrate) but not advance it: "
                "re-read it first and advance with the continue token that returns",
                reason="TOKEN_SCOPE_MISMATCH",
            )
        run_id, branch = parsed.run_id, parsed.branch
        if branch is not None and self.store.get(branch) is not None:
            run_id, branch = branch, None  # the fork token's branch is made: it is its token
        if not advancing:
            if parsed.kind == "resume":
                self._require_workspace(self._row(run_id), workspace)
            return self._reread(run_id, parsed.attempt, token if branch else None)
        if branch is not None:
            return self._fork(
                self._row(run_id), parsed.attempt, branch, token, notes, artifacts, context, confirm
            )
        return self.answer(
            run_id,
            parsed.attempt,
            notes=notes,
            artifacts=artifacts,
            context=context,
            confirm=confirm,
        )

    def _reread(self, run_id: str, attempt: int, fork_token: str | None) -> SessionStep:
        """The step a token names, with the recovery section: the pending one, or — for a step
        the session has moved past, whose position is kept — that step, with a fork token to
        advance (``fork_token``, or one with a branch id of its own)."""
        row = self._row(run_id)
        kept = self.store.position_at(run_id, attempt) if attempt < row.attempt else None
        if kept is None:
            return self.rehydrate(run_id, recovery=True)
        state, pending = kept
        then = self._at(row, attempt, state, pending)
        step = _with_references(self._step("current", then), then)
        key = self._token_key()
        step.continue_token = fork_token or sign_token(
            key, "continue", run_id, attempt, branch=_new_run_id()
        )
        step.checkpoint_token = sign_token(key, "checkpoint", run_id, attempt)
        now = (row.pending or {}).get("step") if row.status == "waiting" else None
        step.fork_of = {
            "runId": run_id,
            "stepId": (pending or {}).get("step", {}).get("id"),
            "stepAttempt": attempt,
            "sessionStatus": row.status,
            "sessionPendingStepId": now["id"] if now else None,
        }
        step.recovery = self._recovery(run_id, before=attempt)
        return step

    @staticmethod
    def _at(row: SessionRow, attempt: int, state: dict[str, Any], pending: Any) -> SessionRow:
        """``row`` as it stood when ``attempt`` was pending."""
        return SessionRow(
            **{
                **asdict(row),
                "status": "waiting",
                "attempt": attempt,
                "state": state,
                "pending": pending,
            }
        )

    def _fork(
        self,
        parent: SessionRow,
        attempt: int,
        branch: str,
        token: str,
        notes: str | None,
        artifacts: Sequence[Any] | None,
        context: Mapping[str, Any] | None,
        confirm: Confirm | None,
    ) -> SessionStep:
        """Answer ``parent``'s step ``attempt`` in a new session ``branch``, made with this
        answer (a blocked answer makes none: the same fork token retries)."""
        kept = self.store.position_at(parent.run_id, attempt) if attempt < parent.attempt else None
        if kept is None:
            raise SessionTokenError(
                "this token's step is no longer one the session can branch from: re-read the "
                "session (intent rehydrate) and advance with the continue token that returns",
                reason="TOKEN_SCOPE_MISMATCH",
            )
        now = time.time()
        base = SessionRow(
            **{
                **asdict(self._at(parent, attempt, *kept)),
                "run_id": branch,
                "last_notes": None,
                "created_at": now,
                "updated_at": now,
            }
        )
        step_id = str((base.pending or {}).get("step", {}).get("id"))
        earlier = [
            a.notes for a in self.store.answers(parent.run_id) if _before(a.step_key, attempt)
        ]
        search = _search_text(base.workflow_id, base.goal) + " " + " ".join(map(_words_of, earlier))
        fork = Fork(parent.run_id, attempt, step_id, base, search[:4096])
        key = self._token_key()
        checkpoint = sign_token(key, "checkpoint", parent.run_id, attempt)
        given = masked_answer(
            masks_of(self.store.pinned(base.workflow_hash)), notes, artifacts, context
        )
        step = self._apply(base, attempt, given, confirm, None, fork=fork)
        if step.outcome == "blocked":
            step.continue_token, step.checkpoint_token = token, checkpoint
        return step

    def answer(
        self,
        run_id: str,
        attempt: int | None,
        *,
        notes: str | None,
        artifacts: Sequence[Any] | None = None,
        context: Mapping[str, Any] | None = None,
        confirm: Confirm | None = None,
        model_usage: Mapping[str, Any] | None = None,
    ) -> SessionStep:
        """Apply an answer to step attempt ``attempt`` of session ``run_id`` exactly once.

        ``confirm``: how to ask a person, for a step whose confirmation is a person's; asked
        only once the answer has passed its checks, never for a replay. A reply other than
        approve keeps the step pending (``blocked``, with the comment); an approval is recorded
        with the step's answer.

        The same answer again returns the recorded response (``replayed``); another answer to an
        attempt already answered raises `AnswerNotApplied` with the session's state. Without an
        ``attempt`` the answer is for the step pending now, and one identical to the last applied
        answer counts as its replay (an agent resending after a lost reply)."""
        row = self._row(run_id)
        definition = self.store.pinned(row.workflow_hash)
        masks = masks_of(definition)
        given = masked_answer(masks, notes, artifacts, context)
        digest = given.digest
        if attempt is None:
            last = str(row.attempt - 1) if row.attempt > 1 else None
            replay = earlier_answer(
                self.store, run_id, None, digest, last_key=last, resent_last=last is not None
            )
            if replay is not None and replay.response is not None:
                return SessionStep.from_dict({**replay.response, "outcome": "replayed"})
            attempt = row.attempt
        if attempt != row.attempt or row.status != "waiting":
            return self._answered_before(row, attempt, digest)
        return self._apply(row, attempt, given, confirm, model_usage)

    def _apply(
        self,
        row: SessionRow,
        attempt: int,
        given: MaskedAnswer,
        confirm: Confirm | None,
        model_usage: Mapping[str, Any] | None,
        *,
        fork: Fork | None = None,
    ) -> SessionStep:
        """Check ``given`` (an answer to ``row``'s pending step) and apply it (``fork``: in a
        branch that the answer makes)."""
        run_id = row.run_id
        definition = self.store.pinned(row.workflow_hash)
        masks = masks_of(definition)
        notes_m, artifacts_m, digest = given.output, given.artifacts, given.digest
        pending = row.pending or {}
        step = find_step(definition, pending["step"]["id"], row.workflow_id)
        ctx = answer_context(row.state, given.context)
        verdict = judge(
            self.store,
            run_id,
            str(attempt),
            given,
            definition=definition,
            step=step,
            shown=step,
            guidance=pending.get("guidance") or {},
            context=ctx,
            require_notes=True,
            confirm=confirm,
            masks=masks,
        )
        confirmation = verdict.confirmation
        if verdict.blocked is not None:
            blocked = self._step("blocked", row)
            for name, value in verdict.blocked.to_dict().items():
                setattr(blocked, name, value)
            blocked.confirmation = confirmation
            return blocked
        found, state = moved_state(
            definition, row.state, pending, step["id"], notes_m, artifacts_m, ctx
        )
        moved = SessionRow(
            **{
                **asdict(row),
                "status": "success" if found["isComplete"] else "waiting",
                "attempt": attempt + 1,
                "state": state,
                "pending": found,
                "last_notes": notes_m or None,
                "updated_at": time.time(),
            }
        )
        response = self._step("advanced", moved)
        response.confirmation = confirmation
        if verdict.assessments:
            response.step_context = {"assessments": verdict.assessments}
        response.model_usage = masks.mask(dict(model_usage)) if model_usage is not None else None
        if fork is not None:
            response.forked_from = {
                "runId": fork.parent_run_id,
                "stepId": fork.step_id,
                "stepAttempt": fork.parent_attempt,
            }
        record = Answer(
            str(attempt),
            digest,
            step["id"],
            pending["step"].get("title") or step["id"],
            notes_m,
            response.to_dict(),
            moved.updated_at,
            workflow_hash=row.workflow_hash,
            context_before=row.state["context"],
            given=given.recorded(),
            context_after=found["context"],
        )
        claim = self.store.advance(moved, attempt, record, " " + _words_of(notes_m), fork)
        if claim.applied:
            return response
        return self._answered_before(self._row(run_id), attempt, digest)

    def _answered_before(self, row: SessionRow, attempt: int, digest: str) -> SessionStep:
        recorded = earlier_answer(self.store, row.run_id, str(attempt), digest)
        if recorded is not None and recorded.digest == digest and recorded.response is not None:
            return SessionStep.from_dict({**recorded.response, "outcome": "replayed"})
        now = self._step("current", row)
        if recorded is not None:
            reason = (
                f"step attempt {attempt} ({recorded.step_id!r}) was already answered with another "
                "answer, which was applied; this answer was not (to answer that step anew, "
                "re-read it with this token, intent rehydrate: advancing with the token that "
                "returns branches the session there)"
            )
        elif row.status != "waiting":
            reason = f"the session is {row.status}; it waits on nothing"
        else:
            reason = f"step attempt {attempt} is not the session's current step"
        raise AnswerNotApplied(
            f"answer not applied: {reason}. The session now "
            + (
                f"waits on step {now.pending['stepId']!r} (attempt {row.attempt})"
                if now.pending and row.status == "waiting"
                else f"is {row.status}"
            ),
            runId=row.run_id,
            reason="ANSWER_NOT_APPLIED",
            state=_public_state(now),
        )

    # --- reading ------------------------------------------------------------------------------

    @staticmethod
    def _require_workspace(row: SessionRow, workspace: str | None) -> None:
        """A resume token turns into a continue token only in the session's own workspace (the
        session's workspace is not named: the caller must know it)."""
        if row.workspace is not None and row.workspace != workspace:
            raise SessionTokenError(
                "this resume token's session was started in another workspace, and a resume "
                "token is turned into a continue token only in the session's own: pass "
                "workspacePath, the absolute path of the workspace the session was started in",
                reason="TOKEN_SCOPE_MISMATCH",
            )

    def rehydrate(self, run_id: str, *, recovery: bool = False) -> SessionStep:
        row = self._row(run_id)
        step = _with_references(self._step("current", row), row)
        if recovery:
            step.recovery = self._recovery(run_id)
        return step

    def checkpoint(self, token: str) -> dict[str, Any]:
        """A resume token for the session a checkpoint (or continue) token names; idempotent."""
        parsed = read_token(self._token_key(), token)
        if parsed.kind == "resume":
            raise SessionTokenError(
                "pass the checkpoint token (ck_…) of the latest response, not a resume token",
                reason="TOKEN_SCOPE_MISMATCH",
            )
        row = self._row(parsed.run_id)
        key = self._token_key()
        return {
            "runId": row.run_id,
            "attempt": parsed.attempt,
            "resumeToken": sign_token(key, "resume", row.run_id, parsed.attempt),
            "continueToken": sign_token(key, "continue", row.run_id, row.attempt),
        }

    def resume(
        self,
        *,
        workspace: str | None = None,
        query: str | None = None,
        run_id: str | None = None,
        git_branch: str | None = None,
        git_head: str | None = None,
        same_workspace_only: bool = False,
        limit: int = RESUME_LIMIT,
    ) -> dict[str, Any]:
        """Sessions ranked for resuming: {candidates: [...], totalEligible}. Each candidate has
        the session's id, workflow, current step, last notes, age, why it matched and a resume
        token. An exact ``run_id`` is the only candidate. ``same_workspace_only``: only the
        sessions started in ``workspace`` (the exact id too)."""
        branch, head = git_context(workspace) if workspace else (None, None)
        signals = {
            "workspace": workspace,
            "git_branch": git_branch or branch,
            "git_head": git_head or head,
        }
        if run_id is not None:
            row = self.store.get(run_id)
            if row is not None and same_workspace_only and row.workspace != workspace:
                row = None
            return {
                "candidates": [self._candidate(row, 0, 0, ["matched_exact_id"])] if row else [],
                "totalEligible": 1 if row else 0,
            }
        words = _query_words(query)
        found, total = self.store.search(words, signals, limit, same_workspace_only)
        candidates = [
            self._candidate(row, matched, signal, _why(row, words, matched, signal))
            for row, matched, signal in found
        ]
        return {"candidates": candidates, "totalEligible": total}

    def _candidate(
        self, row: SessionRow, matched: int, signal: int, why: list[str]
    ) -> dict[str, Any]:
        pending = (row.pending or {}).get("step") if row.status == "waiting" else None
        return {
            "runId": row.run_id,
            "workflowId": row.workflow_id,
            "workflowHash": row.workflow_hash,
            "status": row.status,
            "isComplete": row.status == "success",
            "goal": row.goal,
            "workspace": row.workspace,
            "gitBranch": row.git_branch,
            "gitHead": row.git_head,
            "pendingStepId": pending["id"] if pending else None,
            "pendingStepTitle": (pending.get("title") or pending["id"]) if pending else None,
            "lastNotes": (row.last_notes or "")[:RECOVERY_NOTE_CHARS] or None,
            "updatedAt": row.updated_at,
            "ageSeconds": round(max(time.time() - row.updated_at, 0.0), 1),
            "whyMatched": why,
            "forkedFrom": link_json(self.store.lineage(row.run_id)["forked_from"]),
            "resumeToken": sign_token(self._token_key(), "resume", row.run_id, row.attempt),
        }

    def _recovery(self, run_id: str, *, before: int | None = None) -> list[dict[str, Any]]:
        """The latest answered steps' titles and notes (``before``: answered before that step
        attempt)."""
        answers = [
            a
            for a in self.store.answers(run_id)
            if a.step_id and (before is None or _before(a.step_key, before))
        ][-RECOVERY_STEPS:]
        return [
            {
                "stepId": a.step_id,
                "title": a.title or a.step_id,
                "notes": (a.notes or "")[:RECOVERY_NOTE_CHARS],
            }
            for a in answers
        ]

    def get(self, run_id: str) -> RunResult | None:
        """The session as a run (the shape `RunService.get` returns), or None if no session has
        that id: status, step results with each step's notes, the step it waits on."""
        row = self.store.get(run_id)
        if row is None:
            return None
        definition = self.store.pinned(row.workflow_hash)
        answers = self.store.answers(run_id)
        refusals = self.store.refusals(run_id)
        results = [_step_result(a, refusals) for a in answers if a.step_id]
        snap: RunResult = {
            "status": row.status,
            "workflow_id": row.run_id,
            "steps_completed": len({r["step_name"] for r in results}),
            "steps_total": len(executable_steps(definition)),
            "step_results": results,
            "execution_time": round(row.updated_at - row.created_at, 3),
            "error_message": None,
            "workflow_name": row.workflow_id,
            "session": self._session_facts(row),
        }
        if row.status == "waiting" and row.pending and row.pending.get("step"):
            snap["waiting"] = {
                "step_key": str(row.attempt),
                "step": row.pending["step"],
                "guidance": row.pending.get("guidance") or {},
            }
        return with_history(snap, self.store, refusals)

    def _session_facts(self, row: SessionRow) -> dict[str, Any]:
        return {
            "goal": row.goal,
            "workspace": row.workspace,
            "git_branch": row.git_branch,
            "git_head": row.git_head,
            "workflow_hash": row.workflow_hash,
            "step_attempt": row.attempt,
            # where the session branched from and its own branches (docs/sessions.md, Forking)
            **self.store.lineage(row.run_id),
        }

    def list(self, *, limit: int = 50, active_only: bool = False) -> list[RunSummary]:
        """Recent sessions as run summaries ({workflow_id, workflow_name, status, started_at,
        kind: session})."""
        return [
            {
                "workflow_id": row.run_id,
                "workflow_name": row.workflow_id,
                "status": row.status,
                "started_at": row.created_at,
                "kind": "session",
            }
            for row in self.store.recent(limit, active_only=active_only)
        ]

    def cancel(self, run_id: str, reason: str | None = None) -> Cancelled:
        row = self._row(run_id)
        cancelled = self.store.set_status(run_id, "cancelled", only_from="waiting")
        done = len({a.step_id for a in self.store.answers(run_id) if a.step_id})
        if not cancelled:
            return {
                "status": row.status,
                "steps_completed": done,
                "message": f"session {run_id} had already finished ({row.status}); nothing to cancel",
            }
        out: Cancelled = {"status": "cancelled", "steps_completed": done}
        if reason:
            out["reason"] = reason
        return out

    # --- shared -------------------------------------------------------------------------------

    def _row(self, run_id: str) -> SessionRow:
        row = self.store.get(run_id)
        if row is None:
            raise RunNotFound(run_id, [r.run_id for r in self.store.recent(10)])
        return row

    def _step(self, outcome: str, row: SessionRow) -> SessionStep:
        continue_token, checkpoint_token = self._tokens(row.run_id, row.attempt)
        found = row.pending or {"step": None, "guidance": {}, "isComplete": True, "context": {}}
        return SessionStep(
            outcome=outcome,
            run_id=row.run_id,
            workflow_id=row.workflow_id,
            workflow_hash=row.workflow_hash,
            status=row.status,
            attempt=row.attempt,
            continue_token=continue_token,
            checkpoint_token=checkpoint_token,
            is_complete=row.status == "success",
            next=found,
        )


def _new_run_id() -> str:
    return f"wf-{uuid.uuid4().hex[:12]}"


def _before(step_key: str, attempt: int) -> bool:
    """Whether a session's answer (keyed by its step attempt) came before ``attempt``."""
    return step_key.isdigit() and int(step_key) < attempt


def _with_references(step: SessionStep, row: SessionRow) -> SessionStep:
    """``step`` with the references kept at the session's start, while a step is pending."""
    if step.pending is not None:
        step.references = row.state.get("references") or None
    return step


def _step_result(answer: Answer, refusals: Sequence[Mapping[str, Any]]) -> StepResult:
    """An answered step of a session as a run's step result: its notes are its output."""
    facts = answer_facts(answer, refusals)
    result: StepResult = {
        "step_name": answer.step_id or "",
        "status": "success",
        "output": answer.notes,
        "duration": 0.0,
        "notes": answer.notes,
        "step_attempt": int(answer.step_key),
        "confirmation": facts["confirmation"],
        "model_usage": facts["model_usage"],
    }
    if "confirmations" in facts:
        result["confirmations"] = facts["confirmations"]
    return result


def _public_state(step: SessionStep) -> dict[str, Any]:
    return {
        "runId": step.run_id,
        "status": step.status,
        "attempt": step.attempt,
        "pending": step.pending,
        "continueToken": step.continue_token,
        "isComplete": step.is_complete,
    }


def _words_of(text: str | None) -> str:
    return " ".join(w.lower() for w in _WORD.findall(text or ""))


def _search_text(workflow_id: str, goal: str | None) -> str:
    return f"{workflow_id.lower()} {_words_of(goal)}"[:4096]


def _query_words(query: str | None) -> list[str]:
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query or "")))
    return words[:12]


def _why(row: SessionRow, words: list[str], matched: int, signal: int) -> list[str]:
    why = []
    if words and matched == len(words):
        why.append("matched_notes")
    elif matched:
        why.append("matched_notes_partial")
    if row.workflow_id.lower() in words:
        why.append("matched_workflow_id")
    for bit, name in ((4, "matched_head_sha"), (2, "matched_branch"), (1, "matched_repo_root")):
        if signal & bit:
            why.append(name)
    return why or ["recency_fallback"]
