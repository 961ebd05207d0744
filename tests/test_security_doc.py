"""docs/security.md's table of limits says what the code enforces: each row's figure is read back
from the constant the row names, so changing a limit without its documentation fails here."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import anyio
import anyio.to_thread
import h11._connection
import uvicorn
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from workrail_engine import limits
from workrail_engine.answers import blockers
from workrail_engine.answers.model_loop import ModelLimits
from workrail_engine.cli import jobs, rewrites
from workrail_engine.evaluation import regexes, step_checks
from workrail_engine.lint import quoted_json, shell_scripts, worker_processes
from workrail_engine.replay import fixtures as replay_fixtures
from workrail_engine.runs import command_process, step_events
from workrail_engine.schema import schema_path
from workrail_engine.serving import loop_rules
from workrail_engine.sessions import reference_paths
from workrail_engine.sessions import service as sessions
from workrail_engine.sessions.git_context import (
    GIT_CONTEXT_SECONDS,
    MAX_GIT_FILE_BYTES,
    MAX_PACKED_REFS_BYTES,
)
from workrail_engine.sources.cache import MAX_SOURCE_BYTES, MAX_SOURCE_FILES
from workrail_engine.sources.git import GIT_TIMEOUT_SECONDS
from workrail_engine.sources.refresh import (
    DEFAULT_SYNC_INTERVAL_SECONDS,
    MIN_SYNC_INTERVAL_OVERRIDE_SECONDS,
    MIN_SYNC_INTERVAL_SECONDS,
)
from workrail_lsp import disk_files, idle_work, message_size
from workrail_lsp.fast_start import client_stream
from workrail_mcp import (
    client_logs,
    client_waits,
    completions,
    confirmation,
    input_rounds,
    protocol,
    stdio,
    tool_tasks,
)
from workrail_mcp.web import options as web_options

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024
MIB = 1024 * 1024


def _loop_bound_maximum() -> int:
    """The schema's ceiling on a loop's ``maxIterations``."""
    found: list[int] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            bound = node.get("maxIterations")
            if isinstance(bound, dict) and "maximum" in bound:
                found.append(bound["maximum"])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(json.loads(schema_path().read_text()))
    assert len(set(found)) == 1, found
    return found[0]


async def _tool_threads() -> float:
    """How many worker threads tool calls share (anyio's default limiter, one per event loop)."""
    return anyio.to_thread.current_default_thread_limiter().total_tokens


# The figure each row must state, keyed by a piece of its "constant" column.
EXPECTED = {
    "limits.MAX_NESTING": f"{limits.MAX_NESTING} levels",
    "_RESULT_NESTING": f"{protocol._RESULT_NESTING} levels",
    "limits.MAX_DOCUMENT_BYTES": f"{limits.MAX_DOCUMENT_BYTES // MIB} MiB",
    "limits.MAX_CONFIG_BYTES": f"{limits.MAX_CONFIG_BYTES // MIB} MiB",
    "limits.MAX_YAML_ALIAS_NODES": f"{limits.MAX_YAML_ALIAS_NODES:,} nodes",
    "limits.MAX_ANSWER_CHARS": f"{limits.MAX_ANSWER_CHARS:,} characters",
    "limits.MAX_FINDINGS_PER_FILE": f"{limits.MAX_FINDINGS_PER_FILE:,} diagnostics",
    "limits.MAX_COMPILED_STEP_CHARS": f"{limits.MAX_COMPILED_STEP_CHARS:,} characters",
    "limits.MAX_COMPILED_WORKFLOW_CHARS": f"{limits.MAX_COMPILED_WORKFLOW_CHARS:,} characters",
    "MAX_BACKTRACKING_PATTERN_SIZE": f"{regexes.MAX_BACKTRACKING_PATTERN_SIZE:,} elements",
    "MAX_BACKTRACKING_SECONDS_PER_CALL": (
        f"{regexes.MAX_BACKTRACKING_SECONDS_PER_CALL:g} s for all the fallback matches of one "
        f"call (each also at most {regexes.BACKTRACKING_TIMEOUT_SECONDS:g} s"
    ),
    "MAX_QUOTED_JSON_CHARS": f"{quoted_json.MAX_QUOTED_JSON_CHARS:,} characters",
    "MAX_QUOTED_OPENINGS": f"{quoted_json.MAX_QUOTED_OPENINGS} quoted",
    "SHELLCHECK_TIMEOUT_SECONDS": f"{shell_scripts.SHELLCHECK_TIMEOUT_SECONDS:g} s per file",
    "MAX_SCRIPT_CHARS": f"{shell_scripts.MAX_SCRIPT_CHARS:,} characters",
    "MAX_CACHED_SCRIPTS": f"{shell_scripts.MAX_CACHED_SCRIPTS:,} scripts",
    "MAX_LINE_BYTES": f"{stdio.MAX_LINE_BYTES // MIB} MiB",
    "DEFAULT_MAX_REQUEST_BODY_SIZE": f"{DEFAULT_MAX_REQUEST_BODY_SIZE // MIB} MiB",
    "DEFAULT_MAX_INCOMPLETE_EVENT_SIZE": (
        f"{h11._connection.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE // KIB} KiB"
    ),
    "HEADER_TIMEOUT_SECONDS": f"{web_options.HEADER_TIMEOUT_SECONDS:g} s",
    "BODY_TIMEOUT_SECONDS": f"{web_options.BODY_TIMEOUT_SECONDS:g} s",
    "timeout_keep_alive": (
        f"{inspect.signature(uvicorn.Config).parameters['timeout_keep_alive'].default:g} s"
    ),
    "READ_TIMEOUT_SECONDS": (
        f"{disk_files.READ_TIMEOUT_SECONDS:g} s per read; "
        f"after {disk_files._MAX_READ_THREADS} reads stalled"
    ),
    "MAX_MESSAGE_BYTES": f"{message_size.MAX_MESSAGE_BYTES // MIB} MiB (a frame's",
    "MAX_DISCARDED": f"{idle_work.MAX_DISCARDED} objects",
    "_CHUNKS_AHEAD": (
        f"{client_stream._CHUNKS_AHEAD} chunks of {client_stream._READ_SIZE // KIB} KiB "
        f"({client_stream._CHUNKS_AHEAD * client_stream._READ_SIZE // MIB} MiB) read ahead of the "
        f"server; {client_stream._MAX_HEADERS // KIB} KiB of frame headers"
    ),
    "STDOUT_CAP": f"{command_process.STDOUT_CAP // MIB} MiB",
    "STDERR_TAIL": f"{command_process.STDERR_TAIL // KIB} KiB",
    "ModelLimits.calls_per_run": f"{ModelLimits.calls_per_run} (`--sampling-calls`)",
    "ModelLimits.tokens_per_run": (
        f"{ModelLimits.tokens_per_run:,} (`--sampling-tokens`), each request counting its "
        f"`maxTokens` ({ModelLimits.max_tokens:,} or"
    ),
    "retries_per_step": f"{ModelLimits.retries_per_step} per step",
    "MAX_TASKS": f"{tool_tasks.MAX_TASKS:,} per server process",
    "MAX_TASKS_PER_CLIENT": f"{tool_tasks.MAX_TASKS_PER_CLIENT:,} per client connection",
    "DEFAULT_TTL_MS": (
        f"{tool_tasks.DEFAULT_TTL_MS:,} ms when the client asks none; at most "
        f"{tool_tasks.MAX_TTL_MS:,} ms"
    ),
    "MAX_EVENTS_PER_RUN": (
        f"{step_events.MAX_EVENTS_PER_RUN:,} events (each step's start and end), in this "
        f"process; the feeds of {step_events.MAX_CLOSED_FEEDS} ended runs"
    ),
    "MAX_WAITING_CALLS`": (
        f"{client_waits.MAX_WAITING_CALLS} per server process (each holds one of the "
        f"{anyio.run(_tool_threads):g} worker threads tool calls run on)"
    ),
    "MAX_WAITING_CALLS_PER_CLIENT": f"{client_waits.MAX_WAITING_CALLS_PER_CLIENT} per client",
    "ELICITATION_TIMEOUT_SECONDS": (
        f"{client_waits.ELICITATION_TIMEOUT_SECONDS:g} s for the reply to `elicitation/create`; "
        f"{input_rounds.ROUND_TIMEOUT_SECONDS:g} s per `input_required` round"
    ),
    "_QUEUE_SIZE": f"{client_logs._QUEUE_SIZE:,}",
    "MAX_VALUES": f"{completions.MAX_VALUES} per answer",
    "MAX_COMMENT_CHARS": (
        f"{confirmation.MAX_COMMENT_CHARS:,} characters (asked of the client); the notes shown "
        f"in the form: {confirmation.MAX_NOTES_CHARS:,} characters"
    ),
    "MAX_PROCESSES": (
        f"one per usable CPU from {jobs.MIN_FILES_FOR_PROCESSES} files (one below), at most "
        f"{jobs.MAX_PROCESSES} (`--jobs N`)"
    ),
    "FILES_PER_TASK": f"each process taking {worker_processes.FILES_PER_TASK} files at a time",
    "STALE_TEMPORARY_SECONDS": (
        f"{rewrites.STALE_TEMPORARY_SECONDS:,} s, or at once when the PID in its name is no live "
        "process"
    ),
    "MAX_SHOWN_VALUE_CHARS": (
        f"{step_checks.MAX_SHOWN_VALUE_CHARS} characters of the value, "
        f"{step_checks.MAX_SHOWN_VALUE_CHARS * 2} of the reason"
    ),
    "MAX_FILL_CHARS": f"{blockers.MAX_FILL_CHARS:,} characters each",
    "MAX_BLOCKERS": (
        f"{blockers.MAX_BLOCKERS} blockers, each message "
        f"{blockers.MAX_BLOCKER_MESSAGE_CHARS:,} characters, each suggestedFix "
        f"{blockers.MAX_BLOCKER_FIX_CHARS:,} characters"
    ),
    "RECOVERY_STEPS": (
        f"the last {sessions.RECOVERY_STEPS} answered steps, "
        f"{sessions.RECOVERY_NOTE_CHARS:,} characters of each one's notes, "
        f"{sessions.RECOVERY_CHARS:,} characters in all"
    ),
    "MAX_REFERENCES_LOOKED_UP": f"the first {reference_paths.MAX_REFERENCES_LOOKED_UP} of",
    "MAX_GIT_FILE_BYTES": (
        f"regular files only; {MAX_GIT_FILE_BYTES // KIB} KiB each (`HEAD`, "
        f"a worktree's `.git` file, `commondir`, a loose ref), "
        f"{MAX_PACKED_REFS_BYTES // MIB} MiB for `packed-refs`; "
        f"{GIT_CONTEXT_SECONDS:g} s for the whole look-up"
    ),
    "GIT_TIMEOUT_SECONDS": f"{GIT_TIMEOUT_SECONDS:g} s per call",
    "DEFAULT_SYNC_INTERVAL_SECONDS": (
        f"default every {DEFAULT_SYNC_INTERVAL_SECONDS:g} s; a `sync-interval` is raised to at "
        f"least {MIN_SYNC_INTERVAL_SECONDS:g} s; `WORKRAIL_SYNC_INTERVAL_SECONDS` (the person's "
        f"environment) to at least {MIN_SYNC_INTERVAL_OVERRIDE_SECONDS:g} s"
    ),
    "MAX_SOURCE_FILES": (
        f"each at most the document size ({limits.MAX_DOCUMENT_BYTES // MIB} MiB); "
        f"{MAX_SOURCE_FILES:,} files and {MAX_SOURCE_BYTES // MIB} MiB per commit"
    ),
    "MAX_FIXTURE_FILES": (
        f"{replay_fixtures.MAX_FIXTURE_FILES:,} files under a `--from` directory, each at most "
        f"{replay_fixtures.MAX_FIXTURE_BYTES // MIB} MiB"
    ),
    "DEFAULT_MAX_ITERATIONS": (
        f"default {loop_rules.DEFAULT_MAX_ITERATIONS}, at most {_loop_bound_maximum():,}"
    ),
}


def _limit_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "security.md").read_text()
    table = text.split("## The limits, in one table", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    header, *body = ([cell.strip() for cell in row.strip("|").split("|")] for row in rows)
    assert header == ["limit", "figure", "applies to", "past it", "constant"], header
    return [row for row in body if not set(row[0]) <= {"-"}]


def test_each_figure_in_the_limits_table_is_the_codes():
    rows = _limit_rows()
    checked = set()
    for limit, figure, _applies, _past, constant in rows:
        for key, expected in EXPECTED.items():
            if key in constant:
                assert expected in figure, (
                    f"{limit}: the table says {figure!r}, the code {expected!r}"
                )
                checked.add(key)
    assert checked == set(EXPECTED), f"rows missing for {set(EXPECTED) - checked}"


def test_each_module_the_limits_table_names_defines_its_constants():
    """A row's "constant" cell names the file that enforces the limit: the file exists and
    defines each name after it, so a module that moves takes its rows along."""
    import re

    named = 0
    for limit, _figure, _applies, _past, constant in _limit_rows():
        parts = re.split(r"`(workrail_\w+/[\w/]+\.py)`", constant)
        for path, after in zip(parts[1::2], parts[2::2], strict=True):
            assert (ROOT / path).is_file(), f"{limit}: the table names {path}, which is gone"
            source = (ROOT / path).read_text()
            for name in re.findall(r"`([A-Za-z_][\w.]*)`", after):
                defined = rf"^\s*(def |class )?{re.escape(name.split('.')[0])}\b"
                assert re.search(defined, source, re.M), f"{limit}: {path} defines no {name}"
                named += 1
    assert named > 20, "the table's paths were not read"
