"""`RunHistory`: the runs of a store as people look at them — a page of runs, one run in detail.

A read model beside `RunService`: it reads the store's tables (DBOS's run status, input and state
event, and our step journal) with plain queries on a read-only `SqlStore` of its own (the
journal's and the sessions' table names, dialect and reconnection), and never launches DBOS. So a reader sees every run whichever process executes it (the CLI, a server, another
machine on Postgres), costs no executor, and a page of 50 runs out of 10,000 is a few indexed
queries: status, filters and ordering are computed in SQL, and only the runs on the page have
their definition and journal read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answers.store import ANSWER_NAMES, confirmations_of, refusal_of
from ..definition.steps import step_kind
from ..evaluation.conditions import describe
from ..sessions.store import SESSION_TABLES, read_lineage
from .fork import FORKED_FROM
from .journal import JOURNAL_TABLES, attempt_outcome
from .resolve import database_url, store_home
from .run_results import ACTIVE, executable_steps, with_definition
from .run_status import FAILED, status_sql
from .sql_store import SqlStore, dbos_tables

__all__ = ["OUTPUT_CAP", "RunHistory", "RunPage", "RunRow"]

OUTPUT_CAP = 16 << 10  # characters of a step's stdout (the tail) and stderr shown to a reader


@dataclass(frozen=True)
class RunRow:
    run_id: str
    workflow_id: str | None
    workflow_name: str | None
    status: str
    started_at: float
    duration: float
    steps_done: int
    steps_total: int


@dataclass(frozen=True)
class RunPage:
    rows: list[RunRow]
    total: int
    offset: int
    limit: int


class _Reader(SqlStore):
    """The store, read-only: a store or a table not created yet reads as empty."""

    application_name = "workrail-history"

    def rows(self, text: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self._read(text, args)
        except Exception as exc:
            if _missing_table(exc):
                return []  # a store whose tables are not created yet: no runs
            raise


class RunHistory:
    """Read-only views of the runs in a store (SQLite under ``home`` or the Postgres at ``url``)."""

    def __init__(
        self, url: str | None = None, home: Path | None = None, dbos_schema: str = "dbos"
    ) -> None:
        url = url or database_url()
        self._path: Path | None = None
        if url is None or url.startswith("sqlite"):
            self._path = (
                Path(url.removeprefix("sqlite:///"))
                if url
                else (home or store_home(create=False)) / "runs.sqlite"
            )
            url = f"sqlite:///{self._path}"
        self._store = _Reader(
            url,
            {**dbos_tables(dbos_schema), **JOURNAL_TABLES, **SESSION_TABLES, **ANSWER_NAMES},
            read_only=True,
        )
        self._postgres = self._store.postgres
        self._definitions: dict[str, dict[str, Any]] = {}  # a run's input never changes
        # The run's status as `RunService` reports it, in SQL so that filters and counts of
        # 10,000 runs stay in the database: DBOS's status, refined by the run's state event.
        self._status_sql = status_sql("ws.status", self._field("ev.value", "status"))

    # --- the store -----------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether there is a store to read (a SQLite file is created by the first run)."""
        return self._path is None or self._path.exists()

    def _query(self, text: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        if not self.exists():
            return []
        return self._store.rows(text, tuple(args))

    def _count(self, text: str, args: Iterable[Any] = ()) -> int:
        """A ``SELECT COUNT(*)``; 0 where there is no store or no table yet to count in."""
        found = self._query(text, args)
        return int(found[0][0]) if found else 0

    def close(self) -> None:
        self._store.close()

    def rows(self, text: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """A read of the store's tables named by role (``{journal}``, ``{answers}``, ``{status}``
        …, as `SqlStore` compiles them): for a reader beside this one (replay), empty where there
        is no store or no table yet."""
        return self._query(text, args)

    def json_field(self, column: str, *path: str | int) -> str:
        """SQL for a field of the JSON text in ``column`` (see `rows`)."""
        return self._field(column, *path)

    @staticmethod
    def run_input_of(stored: Any) -> dict[str, Any]:
        """A run's own input out of DBOS's stored arguments (see `rows`)."""
        return _run_input(stored)

    def _field(self, column: str, *path: str | int) -> str:
        """A field of the JSON text in ``column``, as SQL of the store's dialect."""
        if self._postgres:
            steps = "".join(f" -> {p}" if isinstance(p, int) else f" -> '{p}'" for p in path[:-1])
            return f"(({column})::json{steps} ->> '{path[-1]}')"
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        return f"json_extract({column}, '{where}')"

    @property
    def _newest_first(self) -> str:
        # DBOS's SQLite rows are created at whole seconds: the rowid (insertion order, and part
        # of every SQLite index entry, so the created_at index still serves the order) breaks ties.
        tie = "ws.workflow_uuid" if self._postgres else "ws.rowid"
        return f"ws.created_at DESC, {tie} DESC"

    # --- a page of runs ------------------------------------------------------------------

    def page(
        self,
        *,
        status: str | None = None,
        workflow: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> RunPage:
        """Runs and sessions newest first, ``limit`` of them from ``offset``, with the total that
        match."""
        sessions = self._session_page(status, workflow, offset + limit)
        if not sessions.total:
            return self._run_page(status=status, workflow=workflow, offset=offset, limit=limit)
        # Both kinds, merged by start: the first offset + limit of each cover the page.
        runs = self._run_page(status=status, workflow=workflow, offset=0, limit=offset + limit)
        merged = sorted(runs.rows + sessions.rows, key=lambda r: r.started_at, reverse=True)
        return RunPage(merged[offset : offset + limit], runs.total + sessions.total, offset, limit)

    def _session_page(self, status: str | None, workflow: str | None, limit: int) -> RunPage:
        where, args = ["1 = 1"], []
        if status:
            where.append("s.status = ?")
            args.append(status)
        if workflow:
            where.append("s.workflow_id = ?")
            args.append(workflow)
        condition = " WHERE " + " AND ".join(where)
        total = self._count("SELECT COUNT(*) FROM {sessions} s" + condition, args)
        if not total:
            return RunPage([], 0, 0, limit)
        found = self._query(
            "SELECT s.run_id, s.workflow_id, s.status, s.created_at, s.updated_at, s.attempt,"
            " s.workflow_hash FROM {sessions} s"
            + condition
            + " ORDER BY s.created_at DESC LIMIT ?",
            [*args, max(limit, 1)],
        )
        rows = []
        for run_id, workflow_id, kind, created, updated, attempt, digest in found:
            definition = self._pinned(digest)
            end = time.time() if kind in ACTIVE else updated
            rows.append(
                RunRow(
                    run_id,
                    workflow_id,
                    definition.get("name"),
                    kind,
                    created,
                    max(end - created, 0.0),
                    int(attempt) - 1,
                    len(executable_steps(definition)),
                )
            )
        return RunPage(rows, total, 0, limit)

    def _pinned(self, digest: str) -> dict[str, Any]:
        key = f"pinned:{digest}"
        if key not in self._definitions:
            found = self._query("SELECT definition FROM {pinned} WHERE workflow_hash = ?", [digest])
            self._definitions[key] = {"workflow": _json(found[0][0]) if found else {}}
        return self._definitions[key]["workflow"] or {}

    def _run_page(
        self, *, status: str | None, workflow: str | None, offset: int, limit: int
    ) -> RunPage:
        where, args = ["ws.name = 'workrail_run'"], []
        if workflow:
            stored = "COALESCE(wi.inputs, ws.inputs)"
            where.append(f"{self._field(stored, 'positionalArgs', 0, 'workflow', 'id')} = ?")
            args.append(workflow)
        if status:
            where.append(f"({self._status_sql}) = ?")
            args.append(status)
        joins = (
            " FROM {status} ws LEFT JOIN {events} ev"
            " ON ev.workflow_uuid = ws.workflow_uuid AND ev.key = 'state'"
        )
        if workflow:
            joins += " LEFT JOIN {input} wi ON wi.workflow_uuid = ws.workflow_uuid"
        condition = " WHERE " + " AND ".join(where)
        filtered = bool(status or workflow)
        found = self._query(
            f"SELECT ws.workflow_uuid, ({self._status_sql}), ws.created_at, ws.updated_at,"
            f" {self._field('ev.value', 'finished_at')}"
            + joins
            + condition
            + f" ORDER BY {self._newest_first} LIMIT ? OFFSET ?",
            [*args, max(limit, 1), max(offset, 0)],
        )
        if offset == 0 and len(found) < limit:
            total = len(found)
        elif filtered:
            total = self._count("SELECT COUNT(*)" + joins + condition, args)
        else:  # every run: no join needed to count them
            total = self._count("SELECT COUNT(*) FROM {status} WHERE name = 'workrail_run'")
        ids = [row[0] for row in found]
        runs = self._inputs(ids)
        done = self._done(ids)
        now = time.time()
        rows = []
        for run_id, kind, created, updated, finished in found:
            run = runs.get(run_id) or {}
            workflow_def = run.get("workflow") or {}
            started = run.get("started_at") or (created or 0) / 1000
            if kind in ACTIVE:
                end = now
            else:
                end = float(finished) if finished else (updated or created or 0) / 1000
            rows.append(
                RunRow(
                    run_id,
                    workflow_def.get("id"),
                    workflow_def.get("name"),
                    kind,
                    started,
                    max(end - started, 0.0),
                    done.get(run_id, 0),
                    len(executable_steps(workflow_def)),
                )
            )
        return RunPage(rows, total, offset, limit)

    def workflow_ids(self) -> list[str]:
        """The workflows of the runs read so far (for a filter's choices), by name. Not a scan of
        every run's input: that grows with the store, and the catalog names the rest."""
        return sorted(
            {
                str(run["workflow"]["id"])
                for run in list(self._definitions.values())
                if isinstance(run.get("workflow"), dict) and run["workflow"].get("id")
            }
        )

    def _inputs(self, run_ids: list[str]) -> dict[str, dict[str, Any]]:
        """What each run was started with (read once per run, then remembered)."""
        wanted = [r for r in run_ids if r not in self._definitions]
        if wanted:
            marks = ", ".join("?" * len(wanted))
            for run_id, inputs, inline in self._query(
                "SELECT ws.workflow_uuid, wi.inputs, ws.inputs FROM {status} ws"
                " LEFT JOIN {input} wi ON wi.workflow_uuid = ws.workflow_uuid"
                f" WHERE ws.workflow_uuid IN ({marks})",
                wanted,
            ):
                if len(self._definitions) > 5000:
                    self._definitions.clear()
                self._definitions[run_id] = _run_input(inputs or inline)
        return {r: self._definitions[r] for r in run_ids if r in self._definitions}

    def _done(self, run_ids: list[str]) -> dict[str, int]:
        """Steps done (success or skipped) per run, as `run_result` counts them."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        status = self._field("result", "status")
        step = self._field("result", "step_id")
        seen: dict[str, set[str]] = {}
        for run_id, step_id in self._query(
            f"SELECT run_id, {step} FROM {{journal}} WHERE run_id IN ({marks})"
            f" AND result IS NOT NULL AND {status} IN ('success', 'skipped')",
            run_ids,
        ):
            seen.setdefault(run_id, set()).add(step_id)
        return {run_id: len(steps) for run_id, steps in seen.items()}

    # --- one run -------------------------------------------------------------------------

    def version(self, run_id: str) -> tuple[Any, ...]:
        """Changes whenever the run does (status, state event, journal rows, forks of it): cheap
        to poll."""
        session = self._query(
            "SELECT status, updated_at, attempt FROM {sessions} WHERE run_id = ?", [run_id]
        )
        if session:  # a new fork of it changes its page too (its list of forks)
            return (
                "session",
                *session[0],
                self._count("SELECT COUNT(*) FROM {forks} WHERE parent_run_id = ?", [run_id]),
            )
        state = self._query(
            "SELECT ws.status, ws.updated_at, ev.value FROM {status} ws LEFT JOIN {events} ev"
            " ON ev.workflow_uuid = ws.workflow_uuid AND ev.key = 'state'"
            " WHERE ws.workflow_uuid = ?",
            [run_id],
        )
        rows = self._query(
            "SELECT COUNT(*), COALESCE(MAX(position), 0), COUNT(result) FROM {journal}"
            " WHERE run_id = ?",
            [run_id],
        )
        forks = self._count("SELECT COUNT(*) FROM {run_forks} WHERE parent_id = ?", [run_id])
        return (tuple(state[0]) if state else None, tuple(rows[0]) if rows else None, forks)

    def run(self, run_id: str) -> dict[str, Any] | None:
        """One run: its status and times, and each step with its attempts, output and reason."""
        found = self._query(
            f"SELECT ws.status, ({self._status_sql}), ws.created_at, ws.updated_at, ev.value,"
            " ws.error, wi.inputs, ws.inputs, ws.attributes FROM {status} ws"
            " LEFT JOIN {events} ev ON ev.workflow_uuid = ws.workflow_uuid AND ev.key = 'state'"
            " LEFT JOIN {input} wi ON wi.workflow_uuid = ws.workflow_uuid"
            " WHERE ws.workflow_uuid = ? AND ws.name = 'workrail_run'",
            [run_id],
        )
        if not found:
            return self._session(run_id)
        dbos_status, kind, created, updated, state_text, error, inputs, inline, attrs = found[0]
        run = _run_input(inputs or inline)
        self._definitions.setdefault(run_id, run)
        workflow = run.get("workflow") or {}
        state = _json(state_text) or {}
        started = run.get("started_at") or (created or 0) / 1000
        if kind in ACTIVE:
            ended = None
        else:
            ended = state.get("finished_at") or (updated or created or 0) / 1000
        rows = self._query(
            "SELECT step_key, attempt, outcome, result FROM {journal} WHERE run_id = ?"
            " ORDER BY position",
            [run_id],
        )
        forked_from = run.get(FORKED_FROM) or {}
        steps = _steps(
            workflow, rows, state if kind == "waiting" else {}, int(forked_from.get("kept") or 0)
        )
        self._people_and_model(run_id, steps, lambda key, _: key)
        message = state.get("error_message")
        if dbos_status in FAILED:
            message = str(_json(error) or error or "the run failed")
        elif kind == "cancelled":
            reason = (_json(attrs) or {}).get("cancel_reason") if attrs else None
            message = "cancelled: " + str(reason or "no reason given")
        return {
            "run_id": run_id,
            "workflow_id": workflow.get("id"),
            "workflow_name": workflow.get("name"),
            "status": kind,
            "started_at": started,
            "ended_at": ended,
            "duration": max((ended or time.time()) - started, 0.0),
            "error_message": message if kind != "success" else None,
            "parameters": run.get("parameters") or {},
            "steps": steps,
            # counted as `run_result` counts them: each step once, loop iterations together
            "steps_done": len(
                {s["step_id"] for s in steps if s["status"] in ("success", "skipped")}
            ),
            "steps_total": len(executable_steps(workflow)),
            "waiting": state.get("waiting") if kind == "waiting" else None,
            "sampling": self._model_usage(run_id),
            **self._lineage(run_id, run),
        }

    def _lineage(self, run_id: str, run: Mapping[str, Any]) -> dict[str, Any]:
        """Where a run was forked from (None) and its forks, oldest first (`RunService.fork`)."""
        parent = run.get(FORKED_FROM)
        forks = self._query(
            "SELECT run_id, from_step FROM {run_forks} WHERE parent_id = ? ORDER BY forked_at",
            [run_id],
        )
        return {
            "forked_from": {"run_id": parent["run_id"], "step": parent["step"]} if parent else None,
            "forks": [{"run_id": fork_id, "step": step} for fork_id, step in forks],
        }

    def _people_and_model(
        self, run_id: str, steps: list[dict[str, Any]], key_of: Callable[[str, str], str]
    ) -> None:
        """Each step entry with what its answer recorded (a person's approval, the model's
        usage) and every reply a person gave to its confirmation; ``key_of(entry key, status)``
        is the step key its answer and refusals were stored under."""
        answers = {
            key: _json(response) or {}
            for key, response in self._query(
                "SELECT step_key, response FROM {answers} WHERE run_id = ?", [run_id]
            )
        }
        refusals = [
            refusal_of(r)
            for r in self._query(
                "SELECT step_key, step_id, action, comment, by_whom, at FROM {refusals}"
                " WHERE run_id = ? ORDER BY at",
                [run_id],
            )
        ]
        for entry in steps:
            key = key_of(entry["key"], entry["status"])
            recorded = answers.get(key, {})
            entry["confirmation"] = recorded.get("confirmation")
            entry["model_usage"] = recorded.get("model_usage")  # answered by the client's model
            entry["confirmations"] = confirmations_of(refusals, key, None)

    def _model_usage(self, run_id: str) -> dict[str, int] | None:
        """What the run has asked of the client's model (every call counted), if anything."""
        found = self._query("SELECT calls, tokens FROM {model_usage} WHERE run_id = ?", [run_id])
        return {"calls": int(found[0][0]), "tokens": int(found[0][1])} if found else None

    def _session(self, run_id: str) -> dict[str, Any] | None:
        """A session, in the shape of `run`: each answered step with the agent's notes."""
        found = self._query(
            "SELECT s.workflow_id, s.workflow_hash, s.status, s.created_at, s.updated_at,"
            " s.goal, p.pending, s.attempt FROM {sessions} s"
            " JOIN {positions} p ON p.run_id = s.run_id WHERE s.run_id = ?",
            [run_id],
        )
        if not found:
            return None
        workflow_id, digest, kind, created, updated, goal, pending_text, attempt = found[0]
        workflow = self._pinned(digest)
        sites = _site_of(workflow)
        steps = []
        for step_key, step_id, title, notes in self._query(
            "SELECT step_key, step_id, title, notes FROM {answers}"
            " WHERE run_id = ? ORDER BY answered_at",
            [run_id],
        ):
            step, group = sites.get(step_id, ({}, None))
            entry = _blank(f"{step_id}#{step_key}", step_id, step, group)
            entry.update(status="success", title=title or entry["title"], notes=notes)
            entry["stdout"], entry["stdout_capped"] = _tail(notes)
            steps.append(entry)
        pending = (_json(pending_text) or {}) if kind == "waiting" else {}
        if pending.get("step"):
            step_id = pending["step"]["id"]
            step, group = sites.get(step_id, ({}, None))
            entry = _blank(step_id, step_id, step, group)
            entry.update(status="waiting", guidance=pending.get("guidance") or {})
            entry["guidance_list"] = pending["step"].get("guidance") or []
            steps.append(entry)
        # A session's step keys are its attempts: "<step id>#<attempt>", and the waiting step's
        # attempt is the session's current one.
        self._people_and_model(
            run_id,
            steps,
            lambda key, status: str(attempt) if status == "waiting" else key.rpartition("#")[2],
        )
        ended = None if kind in ACTIVE else updated
        return {
            "run_id": run_id,
            "workflow_id": workflow_id,
            "workflow_name": workflow.get("name"),
            "status": kind,
            "started_at": created,
            "ended_at": ended,
            "duration": max((ended or time.time()) - created, 0.0),
            "error_message": None,
            "parameters": {"goal": goal} if goal else {},
            "steps": steps,
            "steps_done": len({s["step_id"] for s in steps if s["status"] == "success"}),
            "steps_total": len(executable_steps(workflow)),
            "waiting": {"step_key": pending["step"]["id"], **pending}
            if pending.get("step")
            else None,
            "session": {"workflow_hash": digest, "goal": goal},
            "sampling": self._model_usage(run_id),
            "lineage": read_lineage(lambda text, args: self._query(text, args), run_id),
        }


def _missing_table(exc: Exception) -> bool:
    text = str(exc).lower()
    return "no such table" in text or ("relation" in text and "does not exist" in text)


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None


def _run_input(text: Any) -> dict[str, Any]:
    """The run's own input out of DBOS's stored arguments (portable JSON: positionalArgs)."""
    value = _json(text)
    if not isinstance(value, dict):
        return {}
    args = value.get("positionalArgs") or value.get("args") or []
    return with_definition(args[0]) if args and isinstance(args[0], dict) else {}


def _tail(text: Any) -> tuple[str, bool]:
    if text is None:
        return "", False
    if not isinstance(text, str):
        text = json.dumps(text, indent=2, ensure_ascii=False)
    if len(text) <= OUTPUT_CAP:
        return text, False
    return text[-OUTPUT_CAP:], True


def _described(condition: Any) -> str | None:
    if not isinstance(condition, Mapping):
        return None
    try:
        return describe(condition)
    except (ValueError, KeyError, TypeError, StopIteration):
        return json.dumps(condition)


def _site_of(workflow: Mapping[str, Any]) -> dict[str, tuple[Mapping[str, Any], str | None]]:
    """Each executable step by id, with the id of the parallel group it belongs to."""
    found: dict[str, tuple[Mapping[str, Any], str | None]] = {}

    def visit(steps: Iterable[Any], group: str | None) -> None:
        for step in steps:
            if not isinstance(step, Mapping):
                continue
            kind = step_kind(step)
            if kind == "parallel":
                visit(step.get("steps") or [], step.get("id"))
            elif kind == "loop":
                if isinstance(step.get("body"), list):
                    visit(step["body"], group)
            elif isinstance(step.get("id"), str):
                found.setdefault(step["id"], (step, group))

    visit(workflow.get("steps") or [], None)
    return found


def _steps(
    workflow: Mapping[str, Any],
    rows: list[tuple[Any, ...]],
    waiting_state: Mapping[str, Any],
    kept: int = 0,
) -> list[dict[str, Any]]:
    """One entry per step key recorded (loop iterations apart), then the steps not reached. A
    fork's first ``kept`` results are its parent's, copied (`RunService.fork`): their entries
    say ``kept`` (their times are the parent's, when they ran there)."""
    sites = _site_of(workflow)
    by_key: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    kept_keys = [key for key, _, _, result in rows if result is not None][:kept]
    for key, attempt, outcome_text, result_text in rows:
        entry = by_key.get(key)
        if entry is None:
            step_id = key.split("[", 1)[0]
            step, group = sites.get(step_id, ({}, None))
            entry = by_key[key] = _blank(key, step_id, step, group)
            order.append(key)
        result = _json(result_text)
        if attempt > 0:
            entry["attempts"].append(
                _attempt(attempt, attempt_outcome(_json(outcome_text), result))
            )
        if isinstance(result, dict):
            _fill(entry, result)
    for key in kept_keys:
        by_key[key]["kept"] = True
    waiting = (waiting_state.get("waiting") or {}) if waiting_state else {}
    entries = [by_key[k] for k in order]
    for step_id in executable_steps(workflow):
        if any(e["step_id"] == step_id for e in entries):
            continue
        step, group = sites.get(step_id, ({}, None))
        entry = _blank(step_id, step_id, step, group)
        if waiting.get("step_key") == step_id:
            entry["status"] = "waiting"
            entry["guidance"] = waiting.get("guidance") or {}
            entry["guidance_list"] = (waiting.get("step") or {}).get("guidance") or []
        entries.append(entry)
    return entries


def _blank(key: str, step_id: str, step: Mapping[str, Any], group: str | None) -> dict[str, Any]:
    return {
        "key": key,
        "step_id": step_id,
        "title": step.get("title") or step_id,
        "kind": "command" if step and step_kind(step) == "command" else "agent",
        "group": group,
        "status": "pending",
        "attempts": [],
        "duration": None,
        "stdout": "",
        "stdout_capped": False,
        "stderr": "",
        "stderr_capped": False,
        "error": None,
        "reason": None,
        "condition": _described(step.get("runCondition")) if step else None,
        "exit_code": None,
        "kept": False,
    }


def _attempt(number: int, outcome: Any) -> dict[str, Any]:
    if not isinstance(outcome, dict):  # marked in flight, not finished
        return {"attempt": number, "status": "running", "start": None, "end": None}
    end = outcome.get("finished_at")
    duration = float(outcome.get("duration") or 0.0)
    return {
        "attempt": number,
        "status": outcome.get("status"),
        "start": end - duration if end else None,
        "end": end,
        "duration": duration,
        "error": outcome.get("error"),
    }


def _fill(entry: dict[str, Any], result: Mapping[str, Any]) -> None:
    entry["status"] = result.get("status", entry["status"])
    entry["duration"] = result.get("duration")
    entry["error"] = result.get("error")
    entry["reason"] = result.get("reason")
    output = result.get("output")
    if isinstance(output, dict) and "exit_code" in output:
        entry["exit_code"] = output.get("exit_code")
        entry["stdout"], entry["stdout_capped"] = _tail(output.get("stdout"))
        entry["stderr"], entry["stderr_capped"] = _tail(output.get("stderr"))
        entry["stdout_capped"] |= bool(output.get("stdout_truncated"))
    else:
        entry["stdout"], entry["stdout_capped"] = _tail(output)
