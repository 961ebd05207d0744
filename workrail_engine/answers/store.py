"""The answers tables in the run store: one answer per (run or session, step attempt), a person's
refusals of a step's confirmation, and what each run asked of the client's model.

Runs and sessions share them: the answers table's primary key is what makes an answer to a run's
waiting step, or a session's pending step, exactly-once — the first answer recorded wins.
`AnswerStore` is the connection that reads and writes them; the session store extends it with
the session tables (the same database, the same connection).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runs.resolve import database_url, store_home
from ..runs.sql_store import SqlStore
from ..runs.sqlite_store import DATABASE, make_private

__all__ = [
    "Answer",
    "AnswerStore",
    "Claim",
    "ANSWER_FIELDS",
    "ANSWER_INSERT",
    "REPLAY_COLUMNS",
    "answer_of",
    "answer_values",
    "confirmations_of",
    "refusal_of",
    "store_url",
]

_ANSWER_COLUMNS = (
    "run_id TEXT NOT NULL, step_key TEXT NOT NULL, digest TEXT NOT NULL, step_id TEXT,"
    " title TEXT, notes TEXT, response TEXT, answered_at DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (run_id, step_key)"
)
_REFUSAL_COLUMNS = (
    "run_id TEXT NOT NULL, step_key TEXT NOT NULL, step_id TEXT, action TEXT NOT NULL,"
    " comment TEXT, by_whom TEXT, at DOUBLE PRECISION NOT NULL"
)
ANSWER_NAMES = {
    "answers": ("workrail_answers", "workrail.answers"),
    # A person's refusals of a step's confirmation (reject, declined, cancelled): the step stays
    # pending, so no answer row holds them. Approvals are kept with the answer they let through.
    "refusals": ("workrail_confirmation_refusals", "workrail.confirmation_refusals"),
    # What each run (or session) has asked of the client's model: every call counts, including
    # those whose answers were sent back, before the model is asked.
    "model_usage": ("workrail_model_usage", "workrail.model_usage"),
}
ANSWER_TABLES = (
    "CREATE TABLE IF NOT EXISTS {answers} (" + _ANSWER_COLUMNS + ")",
    "CREATE TABLE IF NOT EXISTS {refusals} (" + _REFUSAL_COLUMNS + ")",
    "CREATE INDEX IF NOT EXISTS {refusals_run} ON {refusals} (run_id)",
    "CREATE TABLE IF NOT EXISTS {model_usage} (run_id TEXT PRIMARY KEY,"
    " calls INTEGER NOT NULL, tokens INTEGER NOT NULL)",
)
ANSWER_INDEXES = {"refusals_run": "workrail_confirmation_refusals_run"}
# What a replay (and a fork) reads of each answer, added after the table's first release (a
# store made before gains them in place; its earlier answers hold NULL there: not recorded):
# the hash of the workflow as served, the context the step was served with, the answer's
# artifacts and context as given (masked; its output is the notes of a session's answer, in the
# message of a run's) and the context after it.
REPLAY_COLUMNS = {
    "answers": (
        "workflow_hash TEXT",
        "context_before TEXT",
        "given TEXT",
        "context_after TEXT",
    )
}
ANSWER_FIELDS = (
    "step_key, digest, step_id, title, notes, response, answered_at,"
    " workflow_hash, context_before, given, context_after"
)


def store_url(home: Path | None, database: str | None) -> str:
    """The run store's URL: ``database`` (or WORKRAIL_DATABASE_URL), else the SQLite file under
    ``home`` (or WORKRAIL_HOME's ``runs/``), its directory made private first."""
    url = database or database_url()
    if url is None:
        directory = home or store_home()
        make_private(directory, sqlite=True)
        url = f"sqlite:///{directory / DATABASE}"
    return url


@dataclass
class Answer:
    step_key: str
    digest: str
    step_id: str | None
    title: str | None
    notes: str | None
    response: dict[str, Any] | None
    answered_at: float
    # What replay reads (`REPLAY_COLUMNS`); None in an answer recorded before they were kept.
    workflow_hash: str | None = None
    context_before: dict[str, Any] | None = None
    given: dict[str, Any] | None = None  # {artifacts, context}, masked (the output: notes, message)
    context_after: dict[str, Any] | None = None


@dataclass
class Claim:
    """The outcome of offering an answer: ``applied`` (this one), or the one recorded before."""

    applied: bool
    recorded: Answer | None = None


class AnswerStore(SqlStore):
    """The answers, refusals and model usage of runs and sessions; ``names`` and the DDL of a
    subclass's own tables are added to the answers'."""

    application_name = "workrail-answers"

    def __init__(
        self,
        url: str,
        names: Mapping[str, tuple[str, str]] | None = None,
        sqlite_tables: tuple[str, ...] = (),
        postgres_tables: tuple[str, ...] = (),
    ) -> None:
        every = {**ANSWER_NAMES, **(names or {})}

        def tables(postgres: bool) -> tuple[str, ...]:
            named = {role: pair[1 if postgres else 0] for role, pair in every.items()}
            return tuple(s.format(**named, **ANSWER_INDEXES) for s in ANSWER_TABLES)

        super().__init__(
            url,
            every,
            (*tables(False), *sqlite_tables),
            ("CREATE SCHEMA IF NOT EXISTS workrail", *tables(True), *postgres_tables),
            added_columns=REPLAY_COLUMNS,
        )

    def claim(self, run_id: str, answer: Answer) -> Claim:
        """A run's answer to its waiting step: recorded if it is the first for that step."""
        with self._lock:
            inserted = self._fetch(ANSWER_INSERT, (run_id, *answer_values(answer)))
        if inserted:
            return Claim(True)
        return Claim(False, self.answer(run_id, answer.step_key))

    def answer(self, run_id: str, step_key: str) -> Answer | None:
        rows = self._read(
            f"SELECT {ANSWER_FIELDS} FROM {{answers}} WHERE run_id = ? AND step_key = ?",
            (run_id, step_key),
        )
        return answer_of(rows[0]) if rows else None

    def answers(self, run_id: str) -> list[Answer]:
        rows = self._read(
            f"SELECT {ANSWER_FIELDS} FROM {{answers}} WHERE run_id = ? ORDER BY answered_at",
            (run_id,),
        )
        return [answer_of(r) for r in rows]

    def answered_keys(self, run_ids: Sequence[str]) -> set[tuple[str, str]]:
        if not run_ids:
            return set()
        marks = ", ".join("?" * len(run_ids))
        rows = self._read(
            f"SELECT run_id, step_key FROM {{answers}} WHERE run_id IN ({marks})", tuple(run_ids)
        )
        return {(r, k) for r, k in rows}

    # --- what a person and a model were asked --------------------------------------------------

    def refuse(self, run_id: str, step_key: str, step_id: str, confirmation: Any) -> None:
        """Record a person's refusal (reject, declined, cancelled) of the step at ``step_key``."""
        with self._lock:
            self._execute(
                "INSERT INTO {refusals} (run_id, step_key, step_id, action, comment, by_whom, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        step_key,
                        step_id,
                        confirmation["action"],
                        confirmation.get("comment"),
                        confirmation.get("by"),
                        confirmation["at"],
                    )
                ],
            )

    def refusals(self, run_id: str) -> list[dict[str, Any]]:
        """The run's refused confirmations, oldest first: {step_key, stepId, action, comment,
        by, at}."""
        rows = self._read(
            "SELECT step_key, step_id, action, comment, by_whom, at FROM {refusals}"
            " WHERE run_id = ? ORDER BY at",
            (run_id,),
        )
        return [refusal_of(r) for r in rows]

    def count_model_call(self, run_id: str, tokens: int) -> tuple[int, int]:
        """Count one call to the model (and the tokens it may use) for the run: the new totals."""
        with self._lock:
            rows = self._fetch(
                "INSERT INTO {model_usage} AS u (run_id, calls, tokens) VALUES (?, 1, ?)"
                " ON CONFLICT (run_id) DO UPDATE SET calls = u.calls + 1,"
                " tokens = u.tokens + excluded.tokens RETURNING calls, tokens",
                (run_id, tokens),
            )
        return int(rows[0][0]), int(rows[0][1])

    def model_usage(self, run_id: str) -> tuple[int, int] | None:
        """(calls, tokens) the run has asked of the model, or None if it never asked."""
        rows = self._read("SELECT calls, tokens FROM {model_usage} WHERE run_id = ?", (run_id,))
        return (int(rows[0][0]), int(rows[0][1])) if rows else None


ANSWER_INSERT = (
    f"INSERT INTO {{answers}} (run_id, {ANSWER_FIELDS})"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, step_key) DO NOTHING RETURNING step_key"
)


def answer_values(answer: Answer) -> tuple[Any, ...]:
    """An answer's columns after ``run_id``, in `ANSWER_INSERT`'s order."""
    return (
        answer.step_key,
        answer.digest,
        answer.step_id,
        answer.title,
        answer.notes,
        _json_or_null(answer.response),
        answer.answered_at,
        answer.workflow_hash,
        _json_or_null(answer.context_before),
        _json_or_null(answer.given),
        _json_or_null(answer.context_after),
    )


def _json_or_null(value: Any) -> str | None:
    return json.dumps(value, ensure_ascii=False) if value is not None else None


def _loaded(text: str | None) -> Any:
    return json.loads(text) if text else None


def refusal_of(values: Sequence[Any]) -> dict[str, Any]:
    """A refusal row (step_key, step_id, action, comment, by_whom, at) as results show it."""
    key, step_id, action, comment, by, at = values
    return {
        "step_key": key,
        "stepId": step_id,
        "action": action,
        "comment": comment,
        "by": by,
        "at": float(at),
    }


def confirmations_of(
    refusals: Sequence[Mapping[str, Any]], step_key: str, approval: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """Every reply a person gave to the confirmation of the step at ``step_key``, oldest first:
    the refusals that kept it pending, then the approval that let it move on."""
    shown = [
        {k: v for k, v in r.items() if k != "step_key"}
        for r in refusals
        if r["step_key"] == step_key
    ]
    return shown + ([dict(approval)] if approval else [])


def answer_of(values: Sequence[Any]) -> Answer:
    """An answer from its row (the columns of `ANSWER_INSERT` after ``run_id``)."""
    key, digest, step_id, title, notes, response, at, workflow, before, given, after = values
    return Answer(
        key,
        digest,
        step_id,
        title,
        notes,
        _loaded(response),
        at,
        workflow,
        _loaded(before),
        _loaded(given),
        _loaded(after),
    )
