"""The session tables in the run store: sessions, their positions, pinned workflows, the token key.

Sessions live in the run store's database (SQLite ``runs.sqlite`` under ``WORKRAIL_HOME/runs``, or
Postgres in the schema ``workrail``), next to the runs. Every advance is one write transaction
here: the answer's row (unique per session and step attempt — the exactly-once guarantee) and the
session's new position, guarded by the attempt it answers.

A fork is a session of its own (`fork`): it starts from its parent's position at the step it
branches at, with the parent's earlier answers and positions copied, and a row in ``forks``
saying where it came from. Every position a session leaves is kept (``steps``), so that any step
it served since can be forked; the current one is in ``positions``. Stores made before these
tables gain them on open, and each session starts keeping its positions with its next advance.

The answers table (one row per session and step attempt) is the answers package's
(`workrail_engine.answers.store.AnswerStore`, which this store extends): runs record theirs there
too.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..answers.store import ANSWER_FIELDS, ANSWER_INSERT, Answer, AnswerStore, Claim, answer_values

__all__ = ["SESSION_TABLES", "Fork", "SessionRow", "SessionStore", "read_lineage"]

_SESSION_COLUMNS = (
    # Narrow: what a search scans. The big JSON (position, pending step, last notes) lives in
    # `positions`, so that a scan of 10,000 sessions reads a few hundred pages, not thousands.
    "run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, workflow_hash TEXT NOT NULL,"
    " status TEXT NOT NULL, attempt INTEGER NOT NULL, goal TEXT, workspace TEXT,"
    " git_branch TEXT, git_head TEXT, created_at DOUBLE PRECISION NOT NULL,"
    " updated_at DOUBLE PRECISION NOT NULL, search TEXT NOT NULL"
)
_POSITION_COLUMNS = "run_id TEXT PRIMARY KEY, state TEXT NOT NULL, pending TEXT, last_notes TEXT"
# role → (SQLite name, Postgres name); the run history reads them too
SESSION_TABLES = {
    "sessions": ("workrail_sessions", "workrail.sessions"),
    "positions": ("workrail_session_positions", "workrail.session_positions"),
    "pinned": ("workrail_pinned_workflows", "workrail.pinned_workflows"),
    "keys": ("workrail_store_keys", "workrail.store_keys"),
    # SQLite only: a full-text index of each session's words (goal, workflow id, notes), so that
    # a search reads the few sessions holding a word instead of scanning them all.
    "words": ("workrail_session_words", "workrail.session_words"),
    # The positions a session has left, by the attempt that was pending there: what a fork
    # starts from.
    "steps": ("workrail_session_steps", "workrail.session_steps"),
    # Each fork's parent and the step attempt it branched at.
    "forks": ("workrail_session_forks", "workrail.session_forks"),
}
_COMMON = (
    "CREATE TABLE IF NOT EXISTS {sessions} (" + _SESSION_COLUMNS + ")",
    "CREATE INDEX IF NOT EXISTS {sessions_updated} ON {sessions} (updated_at)",
    "CREATE TABLE IF NOT EXISTS {positions} (" + _POSITION_COLUMNS + ")",
    "CREATE TABLE IF NOT EXISTS {pinned} (workflow_hash TEXT PRIMARY KEY, definition TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {keys} (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {steps} (run_id TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " state TEXT NOT NULL, pending TEXT, PRIMARY KEY (run_id, attempt))",
    "CREATE TABLE IF NOT EXISTS {forks} (run_id TEXT PRIMARY KEY, parent_run_id TEXT NOT NULL,"
    " parent_attempt INTEGER NOT NULL, step_id TEXT, created_at DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS {forks_parent} ON {forks} (parent_run_id)",
)


def _ddl(postgres: bool) -> tuple[str, ...]:
    names = {role: pair[1 if postgres else 0] for role, pair in SESSION_TABLES.items()}
    names["sessions_updated"] = "workrail_sessions_updated"
    names["forks_parent"] = "workrail_session_forks_parent"
    statements = tuple(s.format(**names) for s in _COMMON)
    if postgres:
        return statements
    return (
        *statements,
        "CREATE VIRTUAL TABLE IF NOT EXISTS workrail_session_words USING fts5("
        "run_id UNINDEXED, words)",
    )


@dataclass
class SessionRow:
    run_id: str
    workflow_id: str
    workflow_hash: str
    status: str  # waiting | success | cancelled
    attempt: int
    state: dict[str, Any]  # {completed: [...], context: {...}}
    pending: dict[str, Any] | None  # the navigator's next step as served
    goal: str | None
    workspace: str | None
    git_branch: str | None
    git_head: str | None
    last_notes: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class Fork:
    """A branch to create with its first answer: ``base`` is the new session at the step it
    branches at (its parent's position there), ``search`` its search text."""

    parent_run_id: str
    parent_attempt: int
    step_id: str
    base: SessionRow
    search: str


_ROW = (
    "s.run_id, s.workflow_id, s.workflow_hash, s.status, s.attempt, p.state, p.pending, s.goal,"
    " s.workspace, s.git_branch, s.git_head, p.last_notes, s.created_at, s.updated_at"
)
_FROM = "{sessions} s JOIN {positions} p ON p.run_id = s.run_id"


def _row(values: Sequence[Any]) -> SessionRow:
    (run_id, workflow_id, digest, status, attempt, state, pending, *rest) = values
    return SessionRow(
        run_id,
        workflow_id,
        digest,
        status,
        int(attempt),
        json.loads(state),
        json.loads(pending) if pending else None,
        *rest,
    )


class SessionStore(AnswerStore):
    application_name = "workrail-sessions"

    def __init__(self, url: str) -> None:
        super().__init__(url, SESSION_TABLES, _ddl(False), _ddl(True))
        self._pinned: dict[str, dict[str, Any]] = {}

    # --- the token key ---------------------------------------------------------------------

    def key(self) -> bytes:
        """The store's signing key: made once (the first process to need it wins), kept in the
        store's database (a 0600 file on SQLite; the database's own access rules on Postgres)."""
        fresh = os.urandom(32).hex()
        with self._lock:
            self._execute(
                "INSERT INTO {keys} (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                [("session-tokens", fresh)],
            )
            rows = self._fetch("SELECT value FROM {keys} WHERE name = ?", ("session-tokens",))
        return bytes.fromhex(rows[0][0])

    # --- pinned workflows --------------------------------------------------------------------

    def pin(self, workflow_hash: str, definition: dict[str, Any]) -> None:
        if workflow_hash in self._pinned:
            return
        with self._lock:
            self._execute(
                "INSERT INTO {pinned} (workflow_hash, definition) VALUES (?, ?)"
                " ON CONFLICT (workflow_hash) DO NOTHING",
                [(workflow_hash, json.dumps(definition, ensure_ascii=False))],
            )
        self._pinned[workflow_hash] = definition

    def pinned(self, workflow_hash: str) -> dict[str, Any]:
        found = self._pinned.get(workflow_hash)
        if found is None:
            rows = self._read(
                "SELECT definition FROM {pinned} WHERE workflow_hash = ?", (workflow_hash,)
            )
            found = self._pinned[workflow_hash] = json.loads(rows[0][0])
        return found

    # --- sessions ----------------------------------------------------------------------------

    def create(self, row: SessionRow, search: str) -> None:
        self._atomically(lambda run: self._insert(run, row, search))

    def _insert(self, run: Any, row: SessionRow, search: str) -> bool:
        """Insert a new session's rows; False (and nothing written) when its id exists."""
        created = run(
            "INSERT INTO {sessions} (run_id, workflow_id, workflow_hash, status, attempt, goal,"
            " workspace, git_branch, git_head, created_at, updated_at, search)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
            (
                row.run_id,
                row.workflow_id,
                row.workflow_hash,
                row.status,
                row.attempt,
                row.goal,
                row.workspace,
                row.git_branch,
                row.git_head,
                row.created_at,
                row.updated_at,
                search,
            ),
        ).fetchall()
        if not created:
            return False
        run(
            "INSERT INTO {positions} (run_id, state, pending, last_notes) VALUES (?, ?, ?, ?)",
            (row.run_id, *_position(row)),
        )
        if not self.postgres:
            run("INSERT INTO {words} (run_id, words) VALUES (?, ?)", (row.run_id, search))
        return True

    def _branch(self, run: Any, fork: Fork) -> None:
        """Create the fork's session (once: a fork already made is left as it is) with its
        parent's answers and positions before the step it branches at."""
        if not self._insert(run, fork.base, fork.search):
            return
        run(
            "INSERT INTO {forks} (run_id, parent_run_id, parent_attempt, step_id, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                fork.base.run_id,
                fork.parent_run_id,
                fork.parent_attempt,
                fork.step_id,
                fork.base.created_at,
            ),
        )
        # A session's answers are keyed by their attempt: the parent's before the fork. Compared
        # here, not in SQL: the table is the runs' too, whose keys are not all numbers.
        # Every column, what replay reads too: a fork replays as its parent did up to the fork.
        earlier = run(
            f"SELECT {ANSWER_FIELDS} FROM {{answers}} WHERE run_id = ?", (fork.parent_run_id,)
        ).fetchall()
        for values in earlier:  # ANSWER_FIELDS starts with step_key
            if str(values[0]).isdigit() and int(values[0]) < fork.parent_attempt:
                run(ANSWER_INSERT, (fork.base.run_id, *values))
        run(
            "INSERT INTO {steps} (run_id, attempt, state, pending) SELECT ?, attempt, state,"
            " pending FROM {steps} WHERE run_id = ? AND attempt < ?",
            (fork.base.run_id, fork.parent_run_id, fork.parent_attempt),
        )

    def get(self, run_id: str) -> SessionRow | None:
        rows = self._read(f"SELECT {_ROW} FROM {_FROM} WHERE s.run_id = ?", (run_id,))
        return _row(rows[0]) if rows else None

    def recent(self, limit: int, *, active_only: bool = False) -> list[SessionRow]:
        where = "WHERE s.status = 'waiting' " if active_only else ""
        rows = self._read(
            f"SELECT {_ROW} FROM {_FROM} {where}ORDER BY s.updated_at DESC LIMIT ?", (limit,)
        )
        return [_row(r) for r in rows]

    def set_status(self, run_id: str, status: str, *, only_from: str) -> bool:
        with self._lock:
            found = self._fetch(
                "UPDATE {sessions} SET status = ?, updated_at = ? WHERE run_id = ? AND status = ?"
                " RETURNING run_id",
                (status, time.time(), run_id, only_from),
            )
        return bool(found)

    def advance(
        self,
        row: SessionRow,
        answered: int,
        answer: Answer,
        search_more: str,
        fork: Fork | None = None,
    ) -> Claim:
        """Record ``answer`` for attempt ``answered`` and move the session to ``row`` — both or
        neither, in one transaction. When another answer to that attempt is recorded already
        (a replay, or a concurrent answer), nothing changes and that answer is returned.
        ``fork``: the session is a branch that this first answer creates, in the same
        transaction."""

        def steps(run: Any) -> Claim:
            if fork is not None:
                self._branch(run, fork)
            inserted = run(ANSWER_INSERT, (row.run_id, *answer_values(answer))).fetchall()
            if not inserted:
                return Claim(False)
            moved = run(
                "UPDATE {sessions} SET status = ?, attempt = ?, updated_at = ?,"
                " search = substr(search || ?, 1, 4096)"
                " WHERE run_id = ? AND attempt = ? AND status = 'waiting' RETURNING run_id",
                (row.status, row.attempt, row.updated_at, search_more, row.run_id, answered),
            ).fetchall()
            if not moved:
                raise _Moved()
            run(  # the position left, kept for forks
                "INSERT INTO {steps} (run_id, attempt, state, pending) SELECT run_id, ?, state,"
                " pending FROM {positions} WHERE run_id = ? ON CONFLICT (run_id, attempt) DO NOTHING",
                (answered, row.run_id),
            )
            run(
                "UPDATE {positions} SET state = ?, pending = ?,"
                " last_notes = COALESCE(?, last_notes) WHERE run_id = ?",
                (*_position(row), row.run_id),
            )
            if not self.postgres and search_more.strip():
                run("INSERT INTO {words} (run_id, words) VALUES (?, ?)", (row.run_id, search_more))
            return Claim(True)

        try:
            claim = self._atomically(steps)
        except _Moved:
            claim = Claim(False)
        if not claim.applied:
            claim.recorded = self.answer(row.run_id, answer.step_key)
        return claim

    def position_at(self, run_id: str, attempt: int) -> tuple[dict[str, Any], Any] | None:
        """(state, pending) of a position the session has left, pending at ``attempt``; None
        when it was not kept (left before the store kept positions)."""
        rows = self._read(
            "SELECT state, pending FROM {steps} WHERE run_id = ? AND attempt = ?",
            (run_id, attempt),
        )
        if not rows:
            return None
        return json.loads(rows[0][0]), json.loads(rows[0][1]) if rows[0][1] else None

    def lineage(self, run_id: str) -> dict[str, Any]:
        return read_lineage(self._read, run_id)

    # --- search --------------------------------------------------------------------------------

    def _by_index(
        self,
        words: list[str],
        signals: dict[str, str | None],
        limit: int,
        scope: str,
        scope_args: list[Any],
    ) -> tuple[list[tuple[Any, ...]], int]:
        """SQLite: the candidates are the sessions holding one of the query's *distinctive*
        words (each found through the word index in at most ``_CANDIDATES`` sessions; a word
        most sessions hold selects nothing, as it tells them apart from nothing), or, when every
        word is that common, the ``_RECENT_POOL`` most recent sessions. Candidates are ranked
        here as the scan ranks them: every query word found as a substring counts, then the
        signals, waiting first, recency."""
        distinctive = []
        for word in words:
            query = _fts_query([word])
            if query is None:
                continue
            found = self._read(
                "SELECT COUNT(*) FROM (SELECT DISTINCT run_id FROM {words} WHERE {words} MATCH ?"
                " LIMIT ?) AS hits",
                (query, _CANDIDATES + 1),
            )[0][0]
            if 0 < found <= _CANDIDATES:
                distinctive.append(word)
        if distinctive:
            ids = [
                r[0]
                for r in self._read(
                    "SELECT DISTINCT run_id FROM {words} WHERE {words} MATCH ?",
                    (_fts_query(distinctive),),
                )
            ]
        else:
            ids = [
                r[0]
                for r in self._read(
                    f"SELECT run_id FROM {{sessions}} WHERE {scope}"
                    " ORDER BY updated_at DESC LIMIT ?",
                    (*scope_args, _RECENT_POOL),
                )
            ]
        if not ids:
            return [], 0
        marks = ", ".join("?" * len(ids))
        rows = self._read(
            "SELECT run_id, search, workspace, git_branch, git_head, status, updated_at"
            f" FROM {{sessions}} WHERE run_id IN ({marks}) AND {scope}",
            (*ids, *scope_args),
        )
        scored = []
        for run_id, text, workspace, branch, head, status, updated in rows:
            matched = sum(1 for word in words if word in text)
            if not matched:
                continue
            signal = (
                (1 if workspace and workspace == signals.get("workspace") else 0)
                + (2 if branch and branch == signals.get("git_branch") else 0)
                + (4 if head and head == signals.get("git_head") else 0)
            )
            scored.append((run_id, matched, signal, status != "waiting", -updated))
        scored.sort(key=lambda r: (-r[1], -r[2], r[3], r[4]))
        return [r[:3] for r in scored[:limit]], len(scored)

    def search(
        self, words: list[str], signals: dict[str, str | None], limit: int, same_workspace: bool
    ) -> tuple[list[tuple[SessionRow, int, int]], int]:
        """Sessions ranked by how many of ``words`` their goal, notes and workflow id hold, then
        by the workspace and git signals, then waiting before finished, then recency:
        [(row, words matched, signal bits)], and how many sessions are eligible (matching a word;
        without words, matching a signal — or all). Ranked on narrow columns only, in the
        database: the sessions matching a word (one filtered scan), then, to fill the list, the
        most recent ones (the ``updated_at`` index)."""
        likes, like_args = [], []
        for word in words:
            likes.append("CASE WHEN search LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END")
            like_args.append("%" + _like(word) + "%")
        bits, bit_args = [], []
        # weights: the same commit says most, then the branch, then the workspace
        for column, weight in (("workspace", 1), ("git_branch", 2), ("git_head", 4)):
            value = signals.get(column)
            if value:
                bits.append(f"CASE WHEN {column} = ? THEN {weight} ELSE 0 END")
                bit_args.append(value)
        signal = " + ".join(bits) if bits else "0"
        scope, scope_args = "1 = 1", []
        if same_workspace and signals.get("workspace"):
            scope, scope_args = "workspace = ?", [signals["workspace"]]
        order = (
            " ORDER BY matched DESC, signal DESC,"
            " CASE WHEN status = 'waiting' THEN 0 ELSE 1 END, updated_at DESC"
        )
        ranked: list[tuple[Any, ...]] = []
        if words and not self.postgres:
            ranked, total = self._by_index(words, signals, limit, scope, scope_args)
        elif words:
            any_word = " OR ".join(["search LIKE ? ESCAPE '\\'"] * len(words))
            ranked = self._read(
                f"SELECT run_id, ({' + '.join(likes)}) AS matched, ({signal}) AS signal"
                f" FROM {{sessions}} WHERE ({any_word}) AND {scope}{order} LIMIT ?",
                (*like_args, *bit_args, *like_args, *scope_args, limit),
            )
            total = self._read(
                f"SELECT COUNT(*) FROM {{sessions}} WHERE ({any_word}) AND {scope}",
                (*like_args, *scope_args),
            )[0][0]
        elif bits:
            total = self._read(
                f"SELECT COUNT(*) FROM {{sessions}} WHERE ({signal}) > 0 AND {scope}",
                (*bit_args, *scope_args),
            )[0][0]
        else:
            total = self._read(
                f"SELECT COUNT(*) FROM {{sessions}} WHERE {scope}", tuple(scope_args)
            )[0][0]
        if len(ranked) < limit:
            seen = {r[0] for r in ranked}
            recent = self._read(
                f"SELECT run_id, 0 AS matched, ({signal}) AS signal FROM ("
                f"SELECT * FROM {{sessions}} WHERE {scope} ORDER BY updated_at DESC LIMIT ?"
                f") AS recent{order}",
                (*bit_args, *scope_args, _RECENT_POOL),
            )
            ranked += [r for r in recent if r[0] not in seen][: limit - len(ranked)]
        found = []
        for run_id, hits, bits_found in ranked:
            row = self.get(run_id)
            if row is not None:
                found.append((row, int(hits), int(bits_found)))
        return found, int(total)


def read_lineage(
    read: Callable[[str, tuple[Any, ...]], Sequence[Sequence[Any]]], run_id: str
) -> dict[str, Any]:
    """Where session ``run_id`` was forked from and its forks, oldest first: {forked_from:
    {run_id, step_id, step_attempt} | None, forks: [{run_id, step_id, step_attempt,
    created_at}]}. ``read(sql, args)`` queries the store (the sessions' table names)."""
    parent = read(
        "SELECT parent_run_id, step_id, parent_attempt FROM {forks} WHERE run_id = ?", (run_id,)
    )
    children = read(
        "SELECT run_id, step_id, parent_attempt, created_at FROM {forks}"
        " WHERE parent_run_id = ? ORDER BY created_at",
        (run_id,),
    )
    fields = ("run_id", "step_id", "step_attempt", "created_at")
    return {
        "forked_from": dict(zip(fields[:3], parent[0], strict=True)) if parent else None,
        "forks": [dict(zip(fields, child, strict=True)) for child in children],
    }


_RECENT_POOL = 500  # the most recent sessions ranked by signal when too few match a word
_CANDIDATES = 300  # sessions a word may select through the index and still tell them apart


def _fts_query(words: list[str]) -> str | None:
    """An FTS5 query matching any of ``words`` as a token prefix (tokens as FTS5 splits them)."""
    terms = []
    for word in words:
        tokens = _TOKEN.findall(word)
        if tokens:
            terms.append('"' + " ".join(tokens) + '"*')
    return " OR ".join(terms) or None


_TOKEN = re.compile(r"\w+", re.UNICODE)


class _Moved(Exception):
    """The session left the attempt between the read and the write (a concurrent answer)."""


def _like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _position(row: SessionRow) -> tuple[Any, ...]:
    return (
        json.dumps(row.state, ensure_ascii=False),
        json.dumps(row.pending, ensure_ascii=False) if row.pending else None,
        row.last_notes,
    )
