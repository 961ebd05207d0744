"""A statement on the hot path of a run, prepared once per connection and executed through libpq.

Each command step of a run on Postgres writes its result with one statement (`Journal.add_result`).
Through a psycopg cursor that statement cost ≈ 0.2 ms of the run thread's CPU a step after a
spawn (≈ 45 µs in a tight loop): the cursor, the query's conversion, the adapters, the prepare
bookkeeping and the wait generator are Python, run again for every execution of a statement
whose text, types and shape never change. Here it is prepared once, on the server, for the
connection it runs on, and each execution is libpq's own call with the arguments as text —
≈ 10 µs of CPU in the same tight loop (docs/benchmarks.md, Runs).

The wait for the answer polls the socket with the interpreter's lock released, as psycopg's own
wait does, so the other threads of the process go on meanwhile. A lost connection raises
`psycopg.OperationalError` as psycopg's calls do, so the store's reconnect-and-repeat applies.
"""

from __future__ import annotations

import itertools
import re
import select
from typing import Any

import psycopg
from psycopg import pq
from psycopg.errors import error_from_result

__all__ = ["PreparedStatement"]

_PLACEHOLDER = re.compile(r"%s")
_names = itertools.count(1)


class PreparedStatement:
    """One statement (``%s`` placeholders, arguments ``str``, ``int`` or None; text results).

    Prepared again on a new connection (after a reconnect the server has forgotten it)."""

    def __init__(self, text: str) -> None:
        numbers = itertools.count(1)
        self._text = _PLACEHOLDER.sub(lambda _: f"${next(numbers)}", text).encode()
        self._name = f"workrail_prepared_{next(_names)}".encode()
        self._prepared_on: Any = None  # the psycopg connection it was prepared on
        # a poll of that connection's socket, made once per connection: see `_wait`
        self._poll: select.poll | None = None

    def fetch(self, conn: psycopg.Connection[Any], args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Execute on ``conn`` (autocommit, idle, used by no other thread meanwhile); the rows."""
        self.send(conn, args)
        return self.answer(conn)

    def fetch_value(self, conn: psycopg.Connection[Any], args: tuple[Any, ...]) -> str | None:
        """`fetch`'s first value (see `value`)."""
        self.send(conn, args)
        return self.value(conn)

    def send(self, conn: psycopg.Connection[Any], args: tuple[Any, ...]) -> None:
        """Send the statement, not waiting for its answer: `answer` (or `value`) must be read
        before anything else is sent on ``conn``."""
        pgconn = conn.pgconn
        if self._prepared_on is not conn:
            _answer(pgconn, pgconn.prepare(self._name, self._text), conn)
            self._prepared_on = conn
            self._poll = select.poll()
            self._poll.register(pgconn.socket, select.POLLIN)
        pgconn.send_query_prepared(
            self._name, [None if arg is None else str(arg).encode() for arg in args]
        )
        _flush(pgconn)

    def answer(self, conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
        """The answer to what `send` sent (waited for): its rows, or its error raised."""
        rows: list[tuple[Any, ...]] = []
        for result in self._results(conn):
            rows.extend(
                tuple(
                    None if (value := result.get_value(row, column)) is None else value.decode()
                    for column in range(result.nfields)
                )
                for row in range(result.ntuples)
            )
        return rows

    def value(self, conn: psycopg.Connection[Any]) -> str | None:
        """The answer's first value (None when it has no row, or the value is NULL): what the
        step's result needs read back, at every step, without a row made of it."""
        for result in self._results(conn):
            if result.ntuples and result.nfields:
                found = result.get_value(0, 0)
                return None if found is None else found.decode()
        return None

    def _results(self, conn: psycopg.Connection[Any]) -> list[pq.abc.PGresult]:
        """Every result of the answer, once it is all in; the first error among them raised."""
        pgconn = conn.pgconn
        if self._poll is None or self._prepared_on is not conn:  # (`send` makes both)
            raise psycopg.InterfaceError("nothing was sent on this connection")
        _wait(pgconn, self._poll)
        results = []  # every one taken, an error's included: the connection is idle again
        while (result := pgconn.get_result()) is not None:
            results.append(result)
        for result in results:
            _answer(pgconn, result, conn)
        return results


def _flush(pgconn: pq.abc.PGconn) -> None:
    """Until the request is all sent (psycopg's connections are non-blocking: a full socket
    buffer makes libpq keep the rest)."""
    if pgconn.flush():
        poll = select.poll()
        poll.register(pgconn.socket, select.POLLOUT)
        while pgconn.flush():
            poll.poll()


def _wait(pgconn: pq.abc.PGconn, poll: select.poll) -> None:
    """Until the whole answer is in (the interpreter's lock released while the socket is empty).
    ``poll``: of the connection's socket, kept with the statement (with a poll made at every
    step and rows built for the one value read back, the journal's write and read-back took
    ≈ 15 µs more CPU a step: docs/benchmarks.md, Runs)."""
    pgconn.consume_input()
    while pgconn.is_busy():
        poll.poll()
        pgconn.consume_input()


def _answer(pgconn: pq.abc.PGconn, result: pq.abc.PGresult, conn: psycopg.Connection[Any]) -> None:
    """Raise what psycopg would for an error result; a dead connection as OperationalError."""
    if result.status in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
        return
    if pgconn.status != pq.ConnStatus.OK:
        raise psycopg.OperationalError(
            (result.error_message or pgconn.error_message).decode(errors="replace")
        )
    raise error_from_result(result, encoding=conn.info.encoding)
