"""The step journal: a checkpoint per command-step attempt, with the step's result.

A run is a DBOS workflow — its input, status, events, agent messages, queue, cancellation and
recovery are DBOS's — but its command steps are not DBOS steps. A DBOS step costs two
transactions built through SQLAlchemy (≈ 3–5 ms of Python each on our CI machine) where spawning
``true`` costs ≈ 1 ms, so a run of short commands spent most of its time checkpointing. The
journal writes the same facts through the database driver itself, in the same database as
DBOS's tables: one INSERT per step (≈ 0.07 ms on SQLite in WAL mode), holding the outcome of the
step's last attempt and the step's result.

Recovery works as with DBOS steps: DBOS runs the workflow function again, the walk asks for each
attempt in the same order, and the journal hands back the recorded outcome instead of running
the command again. An attempt's outcome is written with the step's result, or before any pause
(a retry delay, a wait for the agent, a state change), so nothing that completed is lost: a crash
between the attempt and its row can only make the step run again, as a crash inside a DBOS step
would.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, NamedTuple

from .answer_delivery import crash_point
from .run_status import CANCELLED, PENDING
from .sql_store import DDL_LOCK, SqlStore, dbos_tables
from .sqlite_store import configure_connection

if TYPE_CHECKING:
    from .pg_prepared import PreparedStatement

log = logging.getLogger(__name__)

__all__ = [
    "CRASH_IN_FORK_COPY",
    "JOURNAL_TABLES",
    "Journal",
    "Recorded",
    "StatusRead",
    "attempt_outcome",
]

# An attempt's outcome and a step's result as stored: the same text as `json.dumps`, through the
# C encoder made once (`JSONEncoder.encode` makes one per call, and looks for reference cycles:
# the walk builds these from fresh dicts) — a third of the encode of a step's result.
if c_make_encoder is not None:

    def _not_json(value: Any) -> Any:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    _chunks = c_make_encoder(
        None, _not_json, encode_basestring_ascii, None, ": ", ", ", False, False, True
    )

    def _encode(value: Any) -> str:
        return "".join(_chunks(value, 0))

else:  # an interpreter without the C accelerator

    def _encode(value: Any) -> str:
        return json.dumps(value)


# What a step's result carries of its last attempt's outcome. The row that holds the result holds
# that outcome without them (`_beside_result`); `attempt_outcome` makes it whole again. Rows
# written before kept the whole outcome (with its "status"), and read as they are.
_CARRIED = frozenset(("output", "error", "deadline", "validation", "duration"))
_CARRIED_ERRORS = _CARRIED - {"output", "duration"}
_ONE_PLAIN_ATTEMPT = {"status", "output", "duration", "finished_at"}  # the keys of such an outcome


def _beside_result(outcome: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The outcome of a step's last attempt as stored beside the step's result: what the result
    does not say (its end; its duration when the step took several attempts, an error the
    result words otherwise: None for one the outcome has not). The whole outcome when its
    status is not the result's."""
    if outcome.get("status") != result.get("status"):
        return outcome
    if (
        outcome.keys() == _ONE_PLAIN_ATTEMPT
        and outcome["output"] is result.get("output")
        and outcome["duration"] == result.get("duration")
        and result.keys().isdisjoint(_CARRIED_ERRORS)
    ):
        # A step of one attempt that says nothing of an error (most steps): what the loop below
        # keeps of it, without the loop (≈ 150 Python opcodes between a result and the next spawn)
        return {"finished_at": outcome["finished_at"]}
    return _not_in_result(outcome, result)


def _not_in_result(outcome: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """`_beside_result` of an outcome whose status is the result's, key by key."""
    # (a loop over the keys, not comprehensions: this runs at every step)
    kept = {}
    for k, v in outcome.items():
        if k not in _CARRIED:
            if k != "status":
                kept[k] = v
        elif v is not result.get(k) and v != result.get(k):
            kept[k] = v
    for k in _CARRIED:
        if k not in outcome and result.get(k) is not None:
            kept[k] = None
    return kept


def attempt_outcome(outcome: Any, result: Any) -> Any:
    """An attempt's outcome as it was recorded, from its stored form (``outcome``) and the result
    stored on the same row (None when the row has none)."""
    if not isinstance(outcome, dict) or "status" in outcome or not isinstance(result, dict):
        return outcome
    whole = {"status": result.get("status")}
    whole.update((k, result[k]) for k in _CARRIED if k in result)
    whole.update(outcome)
    return {k: v for k, v in whole.items() if v is not None or k == "output"}


def _decoded(rows: Any) -> list[dict[str, Any]]:
    """The results of ``rows`` (one stored result a row), decoded at once: one `json.loads` of
    them joined as an array, where one call each cost half as much again for a long run."""
    results: list[dict[str, Any]] = json.loads("[" + ",".join(r for (r,) in rows) + "]")
    return results


def _recorded_outcome(outcome: str | None, result: str | None) -> dict[str, Any] | None:
    """An attempt's outcome from its row (None: marked in flight, not finished)."""
    if outcome is None:
        return None
    decoded: dict[str, Any] = json.loads(outcome)
    if "status" in decoded or result is None:
        return decoded
    whole: dict[str, Any] = attempt_outcome(decoded, json.loads(result))
    return whole


# The run's status read with a step's result: called when the run needs it (see `add_result`).
StatusRead = Callable[[], str | None]


# role → (SQLite name, Postgres name); the members' queue is Postgres's alone
JOURNAL_TABLES = {
    "journal": ("workrail_journal", "workrail.journal"),
    "members": ("", "workrail.members"),
    "run_forks": ("workrail_forks", "workrail.forks"),
}
# One row per attempt; the step's result rides on the row of its last attempt (attempt 0 for a
# step that has none: skipped, or answered by the agent), so a step costs one INSERT.
_COLUMNS = (
    "run_id TEXT NOT NULL, step_key TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " outcome TEXT, result TEXT, UNIQUE (run_id, step_key, attempt)"
)
# A fork (fork.py): its parent, the step it was forked from, how many of the parent's results it
# keeps and how many journal rows that copied. A table of its own, created where missing: a store
# of an earlier version gains it in place.
_FORK_COLUMNS = (
    "run_id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, from_step TEXT NOT NULL,"
    " kept INTEGER NOT NULL, rows_copied INTEGER NOT NULL, forked_at REAL NOT NULL"
)
_SQLITE_TABLES = (
    # INTEGER PRIMARY KEY, not AUTOINCREMENT: rows are never deleted, so rowids only grow, and
    # AUTOINCREMENT's extra bookkeeping row costs a third of each commit.
    f"CREATE TABLE IF NOT EXISTS workrail_journal (position INTEGER PRIMARY KEY, {_COLUMNS})",
    f"CREATE TABLE IF NOT EXISTS workrail_forks ({_FORK_COLUMNS})",
    "CREATE INDEX IF NOT EXISTS workrail_forks_parent ON workrail_forks (parent_id)",
)
_POSTGRES_TABLES = (
    "CREATE SCHEMA IF NOT EXISTS workrail",
    f"CREATE TABLE IF NOT EXISTS workrail.journal (position BIGSERIAL PRIMARY KEY, {_COLUMNS})",
    # The queue of parallel-group members (member_queue.py): one row per member, queued →
    # claimed (by an executor) → ended, cancelled or failed (with the error).
    "CREATE TABLE IF NOT EXISTS workrail.members (position BIGSERIAL PRIMARY KEY,"
    " run_id TEXT NOT NULL, step_key TEXT NOT NULL, member TEXT NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'queued', executor_id TEXT, error TEXT,"
    " UNIQUE (run_id, step_key))",
    "CREATE INDEX IF NOT EXISTS members_queued ON workrail.members (position)"
    " WHERE state = 'queued'",
    "CREATE INDEX IF NOT EXISTS members_claimed ON workrail.members (executor_id)"
    " WHERE state = 'claimed'",
    f"CREATE TABLE IF NOT EXISTS workrail.forks ({_FORK_COLUMNS})",
    "CREATE INDEX IF NOT EXISTS forks_parent ON workrail.forks (parent_id)",
)
# The channels of the member queue: a member queued (payload: how many), a member ended.
MEMBERS_QUEUED = "workrail_members"
MEMBER_ENDED = "workrail_member_ends"
# The oldest queued member, claimed for an executor; members claimed by others are skipped, not
# waited for (two processes woken together never claim the same one).
CLAIM_MEMBER = (
    "UPDATE workrail.members SET state = 'claimed', executor_id = %s WHERE position ="
    " (SELECT position FROM workrail.members WHERE state = 'queued' ORDER BY position LIMIT 1"
    " FOR UPDATE SKIP LOCKED) RETURNING run_id, step_key, member,"
    # with the run's status and whether the journal holds rows of the member (a replay): a first
    # execution needs no read of its own
    " (SELECT status FROM dbos.workflow_status WHERE workflow_uuid = members.run_id),"
    " EXISTS (SELECT 1 FROM workrail.journal AS j"
    " WHERE j.run_id = members.run_id AND j.step_key = members.step_key)"
)
# An executor's claims other than those it runs (``run_id || ' ' || step_key``), queued again.
RELEASE_CLAIMS = (
    "UPDATE workrail.members SET state = 'queued', executor_id = NULL"
    " WHERE executor_id = %s AND state = 'claimed' AND NOT (run_id || ' ' || step_key = ANY(%s::text[]))"
)
_UPSERT = (
    "INSERT INTO {journal} (run_id, step_key, attempt, outcome, result) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, step_key, attempt) DO UPDATE SET outcome = excluded.outcome, result = excluded.result"
)
# Every row of the steps whose results are the first ``kept`` of the parent's, copied to the fork
# in the order they were written (their positions then come before any row of the fork's own).
_COPY_KEPT = (
    "INSERT INTO {journal} (run_id, step_key, attempt, outcome, result)"
    " SELECT ?, step_key, attempt, outcome, result FROM {journal} WHERE run_id = ? AND step_key IN"
    " (SELECT step_key FROM {journal} WHERE run_id = ? AND result IS NOT NULL"
    " ORDER BY position LIMIT ?) ORDER BY position"
)
# Fault injection for the tests: the process ends at once (as a kill -9 would) in the middle of a
# fork's copy, its rows copied and the fork not yet recorded, in the transaction not committed.
CRASH_IN_FORK_COPY = "WORKRAIL_TEST_CRASH_IN_FORK_COPY"
# Postgres: a step's result (with its last attempt's outcome) and the run's status read right
# after, in one statement.
_ADD_RESULT = _UPSERT + " RETURNING (SELECT status FROM {status} WHERE workflow_uuid = ?)"
# Postgres: a run's cancel, announced by DBOS's status table itself — a trigger of the journal's
# sends the run's new status and id on this channel in the transaction that cancels it (or takes a
# cancel back: a workflow resumed), whoever does it (this engine, another process, DBOS's own
# tools), so it reaches every listener with that commit. A journal that listens reads a run's
# status from the table once (its first result, and again after a new connection: what was
# announced meanwhile went unheard), then writes results without the read: the status read in
# every result's statement cost the server a tenth to a fifth of the floor's whole insert again, a
# step (docs/benchmarks.md, Runs).
CANCELLED_CHANNEL = "workrail_cancelled"
_ANNOUNCE_CANCEL = (
    "CREATE OR REPLACE FUNCTION workrail.announce_cancel() RETURNS trigger LANGUAGE plpgsql AS $$"
    f" BEGIN PERFORM pg_notify('{CANCELLED_CHANNEL}', NEW.status || ' ' || NEW.workflow_uuid);"
    " RETURN NULL; END $$"
)
_CANCEL_TRIGGER = "workrail_announce_cancel_1"  # (a trigger changed gets a new name)
_HAS_CANCEL_TRIGGER = "SELECT 1 FROM pg_trigger WHERE tgname = %s AND tgrelid = %s::regclass"
_ADD_CANCEL_TRIGGER = (
    f"CREATE TRIGGER {_CANCEL_TRIGGER} AFTER UPDATE OF status ON {{status}} FOR EACH ROW"
    " WHEN (OLD.status IS DISTINCT FROM NEW.status"
    " AND 'CANCELLED' IN (NEW.status, OLD.status))"
    " EXECUTE FUNCTION workrail.announce_cancel()"
)
_MAX_HEARD = 10_000  # runs kept in `_cancelled` and `_status_known`: past it, both start again


class Recorded(NamedTuple):
    attempts: dict[tuple[str, int], dict[str, Any] | None]  # outcome; None: marked in flight
    keys: set[str]  # the steps with a result
    status: str | None  # DBOS's status of the run (None: not in DBOS's table yet)


class _Sent:
    """A step's result sent to the Postgres server, its answer not read yet."""

    def __init__(self, row: tuple[Any, ...], run_id: str) -> None:
        self.row = row
        self.run_id = run_id
        # what was sent (`Journal._send`): with the run's status read, or without (`hear_cancels`)
        self.statement: PreparedStatement | None = None
        self.args: tuple[Any, ...] = row
        self.status: str | None = None
        self.error: Exception | None = None


class Journal(SqlStore):
    """One connection per process, shared by its runs' threads under a lock (each use is short)."""

    application_name = "workrail-journal"

    def __init__(self, url: str, dbos_schema: str = "dbos") -> None:
        # Attempt outcomes not written yet, by (run id, step key): see `add_attempt`.
        self._pending: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self._sent: _Sent | None = None  # Postgres: see `add_result`
        self._closing = threading.Event()
        # SQLite: run statuses as read at ``PRAGMA data_version`` `_data_version` (`_status_since`)
        self._statuses: dict[str, str | None] = {}
        self._data_version: int | None = None
        # Postgres, once `hear_cancels`: the runs announced cancelled, and those whose status was
        # read on the listening connection (their later results need not read it)
        self._hearing = False
        self._listening_on: Any = None  # the connection that listens
        self._cancelled: set[str] = set()
        self._status_known: set[str] = set()
        super().__init__(
            url,
            {**JOURNAL_TABLES, **dbos_tables(dbos_schema)},
            _SQLITE_TABLES,
            _POSTGRES_TABLES,
        )
        # Postgres: every step's one statement, through libpq itself (pg_prepared.py; imported
        # here: psycopg is not needed on SQLite)
        self._add_result: PreparedStatement | None = None
        self._add_result_only: PreparedStatement | None = None
        if self.postgres:
            from .pg_prepared import PreparedStatement

            self._add_result = PreparedStatement(self._sql(_ADD_RESULT))
            self._add_result_only = PreparedStatement(self._sql(_UPSERT))
        if not self.postgres:
            self._conn.execute("PRAGMA wal_autocheckpoint=0")  # see `_checkpoints`
            threading.Thread(
                target=self._checkpoints,
                args=(url.removeprefix("sqlite:///"),),
                name="workrail-journal-checkpoints",
                daemon=True,
            ).start()

    def freeze(self, timeout: float = 5.0) -> None:
        """Write nothing more from this process: the write under way ends, any later one waits
        for ever. For an exit with steps in flight (`durable.runtime._exit_if_busy`), before their
        processes are killed: a step killed by the exit must not be recorded as failed (its run is
        taken over and the step runs again), and the run's thread, woken by the kill, would record
        it in the moment before the process is gone. ``timeout``: how long to wait for a write
        under way (a Postgres answer); the exit goes on after it either way."""
        self._lock.acquire(timeout=timeout)

    def close(self) -> None:
        self._closing.set()
        with self._lock:
            self._flush()
            self._settle()
            if self._conn is not None:
                self._conn.close()

    def _checkpoints(self, path: str) -> None:
        """SQLite: move the write-ahead log into the database now and then, from a connection of
        its own, instead of in the middle of a commit. SQLite's automatic checkpoint runs in the
        commit that finds the log past a thousand pages: 10–20 ms of a step's commit, or of DBOS's
        write of a run's end after a thousand steps (`sqlite_store.sqlite_engine` turns it off
        for DBOS's connections, which exist only beside this journal). Looked at every second;
        a checkpoint when any connection has committed since the last one (``PRAGMA
        data_version`` of this connection changes exactly then: the journal's writes, DBOS's,
        another process's)."""
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        try:
            configure_connection(conn)
            checkpointed = None
            while not self._closing.wait(1.0):
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                if version != checkpointed:
                    checkpointed = version
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:  # a store gone (tests delete theirs): nothing left to checkpoint
            pass
        finally:
            conn.close()

    def _flush(self) -> None:
        if self._pending:
            rows = [
                (run_id, key, attempt, _encode(outcome), None)
                for (run_id, key), (attempt, outcome) in self._pending.items()
            ]
            self._pending.clear()
            self._execute(_UPSERT, rows)

    # --- what the runs use ----------------------------------------------------------------

    def recorded(self, run_id: str, key: str | None = None) -> Recorded:
        """What a replay gets back instead of running it, and the run's DBOS status, in one
        query: of the whole run, or of the step ``key`` alone (a parallel member needs only its
        own rows: each member reading the whole run made a group's reads grow with the square of
        its size; and the status read with them spares its first step a round trip)."""
        rows = self._read(
            "SELECT step_key, attempt, outcome, result, NULL FROM {journal}"
            " WHERE run_id = ?"
            + ("" if key is None else " AND step_key = ?")
            + " UNION ALL SELECT NULL, NULL, NULL, NULL, status FROM {status}"
            " WHERE workflow_uuid = ?",
            (run_id, run_id) if key is None else (run_id, key, run_id),
        )
        steps = [row for row in rows if row[0] is not None]
        return Recorded(
            {
                (step_key, attempt): _recorded_outcome(outcome, result)
                for step_key, attempt, outcome, result, _ in steps
                if attempt > 0
            },
            {step_key for step_key, _, _, result, _ in steps if result is not None},
            next((status for step_key, *_, status in rows if step_key is None), None),
        )

    def mark(self, run_id: str, key: str, attempt: int) -> None:
        """Record, durably and before it starts, that an attempt is in flight (``idempotent: false``)."""
        with self._lock:
            self._flush()
            self._execute(
                "INSERT INTO {journal} (run_id, step_key, attempt) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id, step_key, attempt) DO NOTHING",
                [(run_id, key, attempt)],
            )

    def add_attempt(self, run_id: str, key: str, attempt: int, outcome: dict[str, Any]) -> None:
        """An attempt's outcome, held until the step's result (one row for both) or a `flush`.

        Between the two nothing leaves the process, so a crash in between can only make the
        step run again — as a crash during the attempt would. Encoded when written: the caller
        changes ``outcome`` no more."""
        with self._lock:
            self._pending[(run_id, key)] = (attempt, outcome)

    def add_result(self, run_id: str, key: str, result: dict[str, Any]) -> StatusRead:
        """A step's result, on the row of its last attempt; written now. Returns how to read the
        run's DBOS status as of the write (so the next step need not ask again whether it was
        cancelled; on SQLite `_status_since`; on Postgres read in the statement, or, once the
        journal hears cancels and has read the run's status, ``CANCELLED`` if one was announced
        before the answer, else ``PENDING``: `hear_cancels`).

        Postgres: the statement is sent and its answer read by the first use of the connection
        after it — the returned call, at the latest, which the run makes before it starts its
        next step, pauses or ends (`flush`): the walk prepares its next step meanwhile instead of
        waiting for the server. The result is durable before anything that comes after it."""
        with self._lock:
            attempt, outcome = self._pending.pop((run_id, key), (0, None))
            self._flush()
            beside = None if outcome is None else _encode(_beside_result(outcome, result))
            row = (run_id, key, attempt, beside, _encode(result))
            if not self.postgres:
                self._execute(_UPSERT, [row])  # one statement: it commits on its own
                status = self._status_since(run_id)
                return lambda: status
            # One statement for both (one round trip to the server; it commits on its own).
            self._settle()
            sent = _Sent(row, run_id)
            self._again(lambda: self._send(sent))
            self._sent = sent
        return lambda: self._answer(sent)

    def _send(self, sent: _Sent) -> PreparedStatement:
        """Postgres: a result's statement sent, reading the run's status unless it is known on
        this connection (chosen at each try: a new connection knows none); the statement."""
        if sent.run_id in self._status_known and self._add_result_only is not None:
            sent.statement, sent.args = self._add_result_only, sent.row
        else:
            assert self._add_result is not None
            sent.statement, sent.args = self._add_result, (*sent.row, sent.run_id)
        sent.statement.send(self._conn, sent.args)
        return sent.statement

    def _answer(self, sent: _Sent) -> str | None:
        with self._lock:
            if self._sent is sent:
                self._settle()
        if sent.error is not None:
            raise sent.error
        return sent.status

    def _settle(self) -> None:
        sent, self._sent = self._sent, None
        if sent is None:
            return
        import psycopg

        assert sent.statement is not None
        try:
            try:
                status = sent.statement.value(self._conn)
            except psycopg.OperationalError:
                # The connection went with the answer (and maybe the write): write it again on a
                # new one (an upsert: harmless if the first one was committed), the run's status
                # read with it, as on every new connection.
                status = self._again(lambda: self._send(sent).value(self._conn))
        except Exception as error:  # the run's thread raises it (`_answer`), not another caller
            sent.error = error
            return
        if not self._hearing:
            sent.status = status
            return
        self._heard(self._conn.pgconn)
        if sent.statement is self._add_result:
            # read on the listening connection: from now on a cancel of the run is heard
            if len(self._status_known) >= _MAX_HEARD:
                self._status_known.clear()
            self._status_known.add(sent.run_id)
            self._known_status(sent.run_id, status)
            sent.status = status
        else:
            # a run executing here is PENDING in DBOS's table until it is cancelled or ends
            sent.status = CANCELLED if sent.run_id in self._cancelled else PENDING

    def hear_cancels(self) -> None:
        """Postgres: listen for the runs' cancels (`CANCELLED_CHANNEL`), the trigger that announces
        them added to DBOS's status table where it is missing — once DBOS has made its tables.
        Where the trigger cannot be added (a role that does not own DBOS's table), every result
        reads its run's status, as before, and the reason is logged."""
        if not self.postgres:
            return

        def add_trigger() -> None:
            with self._transaction() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK,))
                cur.execute(_ANNOUNCE_CANCEL)
                cur.execute(_HAS_CANCEL_TRIGGER, (_CANCEL_TRIGGER, self._names["status"]))
                if cur.fetchone() is None:
                    cur.execute(self._sql(_ADD_CANCEL_TRIGGER))

        import psycopg

        with self._lock:
            try:
                self._again(add_trigger)
            except psycopg.Error as error:
                log.warning(
                    "the run store cannot announce cancels (%s); each step's result reads its"
                    " run's status instead",
                    error,
                )
                return
            self._hearing = True
            self._again(lambda: self._listen(self._conn))

    def _connect(self) -> Any:
        conn = super()._connect()
        if self._hearing:  # (a new connection: cancels announced meanwhile went unheard)
            self._listen(conn)
        return conn

    def _listen(self, conn: Any) -> None:
        """Listen on ``conn`` (once); every run's status read again on it before it is trusted."""
        if self._listening_on is conn:
            return
        conn.add_notify_handler(self._notified)
        conn.execute(f"LISTEN {CANCELLED_CHANNEL}")
        self._listening_on = conn
        self._status_known.clear()

    def _notified(self, notify: Any) -> None:
        """A cancel heard while psycopg read the connection (a query through a cursor)."""
        if notify.channel == CANCELLED_CHANNEL:
            self._announced(notify.payload)

    def _heard(self, pgconn: Any) -> None:
        """The cancels heard while the journal read the connection itself (libpq keeps them)."""
        while (notify := pgconn.notifies()) is not None:
            if notify.relname.decode() == CANCELLED_CHANNEL:
                self._announced(notify.extra.decode())

    def _announced(self, payload: str) -> None:
        """``STATUS RUN_ID``: the run cancelled, or its cancel taken back."""
        status, _, run_id = payload.partition(" ")
        self._known_status(run_id, status)

    def _known_status(self, run_id: str, status: str | None) -> None:
        """The run's status as read or announced: whether it is cancelled is all that is kept."""
        if status != CANCELLED:
            self._cancelled.discard(run_id)
            return
        if len(self._cancelled) >= _MAX_HEARD:
            # forgotten cancels: every run's status is read from the table again, once
            self._cancelled.clear()
            self._status_known.clear()
        self._cancelled.add(run_id)

    def _status_since(self, run_id: str) -> str | None:
        """SQLite: the run's DBOS status, read from its table only when another connection (DBOS's,
        another process's: whoever may cancel the run) has committed since it was last read —
        ``PRAGMA data_version`` changes exactly then. Reading it with every result (a subquery of
        the result's statement before) cost the commit 13–30 µs of a step's ≈ 150 µs budget.
        (The pragma as the result's ``RETURNING`` instead cost a step 25,000 instructions more
        than this second statement.) The caller holds ``_lock``."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version or len(self._statuses) > 1000:
            self._data_version = version
            self._statuses.clear()
        if run_id not in self._statuses:
            # read after the version: a commit in between makes the next version differ
            found = self._fetch("SELECT status FROM {status} WHERE workflow_uuid = ?", (run_id,))
            self._statuses[run_id] = found[0][0] if found else None
        return self._statuses[run_id]

    def flush(self) -> None:
        """Make the attempts held so far, and the last result sent, durable (before a pause, a
        wait, a state change, the run's end)."""
        with self._lock:
            self._flush()
            self._settle()

    def results(self, run_id: str) -> list[dict[str, Any]]:
        """A run's step results in the order they were recorded."""
        rows = self._read(
            "SELECT result FROM {journal} WHERE run_id = ? AND result IS NOT NULL ORDER BY position",
            (run_id,),
        )
        return _decoded(rows)

    # --- forks (fork.py) -----------------------------------------------------------------------

    def keep(self, run_id: str, parent_id: str, from_step: str, kept: int) -> list[dict[str, Any]]:
        """Give the fork ``run_id`` the journal rows of the parent's first ``kept`` results, and
        record where it was forked from, in one transaction (once: a replay of the fork finds its
        row and copies nothing). Returns the fork's kept results, in order."""

        def copy(run: Callable[[str, tuple[Any, ...]], Any]) -> None:
            if run("SELECT 1 FROM {run_forks} WHERE run_id = ?", (run_id,)).fetchall():
                return
            copied = run(_COPY_KEPT, (run_id, parent_id, parent_id, kept)).rowcount
            crash_point(CRASH_IN_FORK_COPY)
            run(
                "INSERT INTO {run_forks} (run_id, parent_id, from_step, kept, rows_copied, forked_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, parent_id, from_step, kept, copied, time.time()),
            )

        self._atomically(copy)
        rows = self._read(
            "SELECT result FROM {journal} WHERE run_id = ? AND result IS NOT NULL"
            " ORDER BY position LIMIT ?",
            (run_id, kept),
        )
        return _decoded(rows)

    def forks_of(self, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The forks of each of ``run_ids`` (oldest first): ``{run_id, step, kept, rows_copied}``."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        rows = self._read(
            "SELECT parent_id, run_id, from_step, kept, rows_copied FROM {run_forks}"
            f" WHERE parent_id IN ({marks}) ORDER BY forked_at",
            tuple(run_ids),
        )
        found: dict[str, list[dict[str, Any]]] = {}
        for parent_id, run_id, step, kept, copied in rows:
            found.setdefault(parent_id, []).append(
                {"run_id": run_id, "step": step, "kept": kept, "rows_copied": copied}
            )
        return found

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """DBOS's status of each run (read from its table: one indexed query, no ORM)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        rows = self._read(
            f"SELECT workflow_uuid, status FROM {{status}} WHERE workflow_uuid IN ({marks})",
            tuple(run_ids),
        )
        return dict(rows)

    def owns_pending(self, executor_id: str) -> bool:
        """Whether runs (or members) are pending on this executor: its lock file must then stay,
        so that the next process recovers them."""
        rows = self._read(
            "SELECT 1 FROM {status} WHERE executor_id = ? AND status = 'PENDING'"
            + (
                " UNION ALL SELECT 1 FROM {members} WHERE executor_id = ? AND state = 'claimed'"
                if self.postgres
                else ""
            )
            + " LIMIT 1",
            (executor_id, executor_id) if self.postgres else (executor_id,),
        )
        return bool(rows)

    # --- the member queue (Postgres; member_queue.py) ----------------------------------------

    def enqueue_members(self, run_id: str, members: list[tuple[str, str]]) -> None:
        """Queue a run's members ((step key, the member as JSON) each) and wake the processes
        listening, in one statement; a member already queued (a replay) is left as it is."""
        keys, bodies = [key for key, _ in members], [body for _, body in members]
        self._read(
            "WITH added AS (INSERT INTO {members} (run_id, step_key, member)"
            " SELECT ?, key, body FROM unnest(?::text[], ?::text[]) AS m(key, body)"
            " ON CONFLICT (run_id, step_key) DO NOTHING RETURNING 1)"
            f" SELECT pg_notify('{MEMBERS_QUEUED}', (SELECT count(*) FROM added)::text)",
            (run_id, keys, bodies),
        )

    def member_ended(self, run_id: str, key: str, state: str, error: str | None) -> None:
        """A member's end (``ended``, ``cancelled`` or ``failed``), told to the listeners."""
        self._read(
            "WITH ended AS (UPDATE {members} SET state = ?, error = ?"
            " WHERE run_id = ? AND step_key = ?)"
            f" SELECT pg_notify('{MEMBER_ENDED}', ?)",
            (state, error, run_id, key, run_id),
        )

    def requeue_members(self, executor_ids: list[str]) -> int:
        """Members claimed by dead executors, queued again (their journal rows make a replay
        of what they completed); the listeners are woken. Returns how many."""
        rows = self._read(
            "WITH again AS (UPDATE {members} SET state = 'queued', executor_id = NULL"
            " WHERE state = 'claimed' AND executor_id = ANY(?) RETURNING 1)"
            f" SELECT pg_notify('{MEMBERS_QUEUED}', n::text), n"
            " FROM (SELECT count(*) AS n FROM again) AS counted",
            (executor_ids,),
        )
        return int(rows[0][1]) if rows else 0

    def queued_member_ends(
        self, run_id: str, running: dict[str, int]
    ) -> dict[str | None, dict[str, Any] | str]:
        """Of a run's members on the member queue (step key → index), those that ended: the
        step's result once recorded, ``cancelled`` or the error of one that ended without a
        result. The key None is in the answer when the run was cancelled. One query."""
        marks = ", ".join("?" * len(running))
        rows = self._read(
            "SELECT step_key, result, NULL FROM {journal} WHERE run_id = ? AND result IS NOT NULL"
            f" AND step_key IN ({marks})"
            " UNION ALL SELECT step_key, NULL, CASE WHEN state = 'cancelled' THEN state"
            " ELSE coalesce(error, state) END FROM {members} WHERE run_id = ?"
            f" AND state IN ('cancelled', 'failed') AND step_key IN ({marks})"
            " UNION ALL SELECT NULL, NULL, status FROM {status}"
            " WHERE workflow_uuid = ? AND status = 'CANCELLED'",
            (run_id, *running, run_id, *running, run_id),
        )
        ended: dict[str | None, dict[str, Any] | str] = {}
        for key, result, other in rows:
            if result is not None:
                ended[key] = json.loads(result)
            else:
                ended.setdefault(key, other)
        return ended

    def run_placement(self, run_id: str) -> tuple[str, str | None, str | None] | None:
        """(DBOS status, executor id, queue name) of a run, or None for an unknown id."""
        rows = self._read(
            "SELECT status, executor_id, queue_name FROM {status} WHERE workflow_uuid = ?",
            (run_id,),
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def queued_on(self, queues: tuple[str, ...]) -> bool:
        """Whether a run waits on one of ``queues`` for a process to take it."""
        marks = ", ".join("?" * len(queues))
        rows = self._read(
            f"SELECT 1 FROM {{status}} WHERE status = 'ENQUEUED' AND queue_name IN ({marks})"
            " LIMIT 1",
            queues,
        )
        return bool(rows)

    def pending_executors(self) -> dict[str, list[str]]:
        """Executor id → the runs pending on it (every process's, this one's included)."""
        rows = self._read(
            "SELECT executor_id, workflow_uuid FROM {status} WHERE status = 'PENDING'"
            " AND executor_id IS NOT NULL",
            (),
        )
        found: dict[str, list[str]] = {}
        for executor_id, run_id in rows:
            found.setdefault(executor_id, []).append(run_id)
        return found

    def advisory_lock_held(self, key: int) -> bool:
        """Postgres: whether some session holds the advisory lock ``key`` (a living executor)."""
        rows = self._read(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
            " AND ((classid::bigint << 32) | objid::bigint) = ?",
            (key,),
        )
        return bool(rows)
