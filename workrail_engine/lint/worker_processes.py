"""The per-file checks of a large batch shared out over forked processes, so that `workrail
validate` on many files uses every core it may (as ruff does).

The parent checks the batch's first file (and its first YAML file) itself — which imports every
checking module and builds the schema's validator — and then forks the workers: a worker
imports nothing. The other files are cut into tasks of `FILES_PER_TASK`; the workers take them
from the first, the parent from the last, until they meet. A worker's results arrive pickled,
per file:

- the diagnostics;
- the text (the report's positions and code frames need it);
- the cross-file facts (`cross_file.CrossFileFacts`);
- the log records a failing check wrote (the serial path prints them on standard error).

Not the parsed value and its span index: pickling and loading the 1,000 documents of
bench/validate.py took 0.9 + 1.6 s of CPU where parsing their texts again takes 0.15 s, and
their texts and diagnostics 0.07 s. The parent parses again only the documents the cross-file
checks read whole (`cross_file.read_whole`: few or none in most batches); the other files'
reports hold a document of text alone, which is all the formatters read of it.

A worker that dies (killed, out of memory) or fails costs only time: the parent checks its
tasks itself. Workers write nothing to standard output or error (both are /dev/null in them);
the log records of every file are printed by the parent in the files' order, after the checks,
as the serial path prints them during. A worker's cyclic collector is as the parent left it
(`workrail validate` pauses it), and what a worker checked is never freed object by object: it
is kept until the worker ends with `os._exit`, as every `multiprocessing` child does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic
from ..text.document import WorkflowDocument, detect_format, parse_document
from .cross_file import CrossFileFacts
from .pipeline import lint_path

if TYPE_CHECKING:
    import logging

    from .step_check_cache import StepsByContent

__all__ = [
    "FILES_PER_TASK",
    "CheckedFile",
    "WORKER_TEST_HOOK",
    "lint_in_processes",
]

FILES_PER_TASK = 25
"""Files a worker (or the parent) takes at a time: small enough that neither waits long for the
other at the end (two tasks, ~25 ms), large enough that handing tasks and results between the
processes stays small (on bench/validate.py's 1,000 files, tasks of 10 cost ~0.07 s more CPU in
all than tasks of 25 or 50, medians of nine runs at load 2)."""

WORKER_TEST_HOOK = "WORKRAIL_TEST_LINT_WORKER"
"""For the tests: ``ACTION:DIR`` makes each worker create ``DIR/<its pid>`` when it takes a task
(so that a test knows workers ran), then, for ACTION ``kill``, end as a kill -9 would, or for
``memory-error``, raise MemoryError; ``mark`` does nothing more."""


@dataclass(slots=True)
class CheckedFile:
    """What a process found in one file; a worker sends it back without the document."""

    path: str
    text: str
    format: str
    diagnostics: list[Diagnostic]
    facts: CrossFileFacts
    log_records: list[logging.LogRecord]
    document: WorkflowDocument | None = None  # only in the process that checked it

    def report_document(self, whole: bool) -> WorkflowDocument:
        """The document for the file's report: the one checked, when checked here; else, for a
        file the cross-file checks read ``whole``, its text parsed again, or else its text
        alone (all the formatters read of it)."""
        if self.document is not None:
            return self.document
        if whole:
            return parse_document(self.text, self.path, self.format)
        return WorkflowDocument(self.text, self.path, self.format, None)


def lint_in_processes(
    paths: Sequence[str], processes: int, steps_by_content: StepsByContent
) -> list[CheckedFile]:
    """What `pipeline.lint_path` finds in each file, the files shared by ``processes``
    processes (the parent and forked workers); what failing checks logged is printed, in the
    files' order."""
    checked = _checked(paths, processes, steps_by_content)
    _print_log_records(checked)
    return checked


def _checked(
    paths: Sequence[str], processes: int, steps_by_content: StepsByContent
) -> list[CheckedFile]:
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    found: list[CheckedFile | None] = [None] * len(paths)
    with _log_records_kept() as records:

        def check_here(indices: Iterable[int]) -> None:
            for index in indices:
                found[index] = _check_file(paths[index], steps_by_content, records)

        check_here(_first_of_each_format(paths))
        tasks = _tasks([i for i, f in enumerate(found) if f is None])
        given: list[tuple[list[int], Future[list[CheckedFile]]]] = []
        workers = processes - 1
        # The workers take the tasks from the first, the parent from the last, until they meet;
        # each worker has two at a time (one to start as soon as it is done with the other),
        # the parent gives them more between two of its own: no process waits for a slower one.
        # (Not by cancelling the futures of tasks no worker took: a pool broken by a worker's
        # death then fails to mark the other futures, on Python 3.11.)
        first, last = 0, len(tasks)
        with ProcessPoolExecutor(
            workers, multiprocessing.get_context("fork"), initializer=_quiet_worker
        ) as pool:
            while first < last:
                try:
                    while first < last and sum(not f.done() for _, f in given) < 2 * workers:
                        task = tasks[first]
                        given.append((task, pool.submit(_check_task, [paths[i] for i in task])))
                        first += 1
                except BrokenProcessPool:  # a worker died: the parent checks the rest
                    pass
                if first < last:
                    last -= 1
                    check_here(tasks[last])
            for task, future in given:
                try:
                    results = future.result()
                except Exception:  # noqa: BLE001 - a worker that died or failed: checked here
                    check_here(task)
                    continue
                for index, result in zip(task, results, strict=True):
                    found[index] = result
    return [f for f in found if f is not None]


def _tasks(indices: list[int]) -> list[list[int]]:
    """``indices`` cut into runs of `FILES_PER_TASK`."""
    return [indices[i : i + FILES_PER_TASK] for i in range(0, len(indices), FILES_PER_TASK)]


def _first_of_each_format(paths: Sequence[str]) -> list[int]:
    """The first file, and the first YAML file (PyYAML is imported for it)."""
    firsts: dict[str, int] = {}
    for index, path in enumerate(paths):
        firsts.setdefault(detect_format(path), index)
        if len(firsts) == 2:
            break
    return sorted(firsts.values())


def _check_file(
    path: str, steps_by_content: StepsByContent, records: list[logging.LogRecord]
) -> CheckedFile:
    before = len(records)
    result = lint_path(path, steps_by_content)
    written = records[before:]
    del records[before:]
    document = result.document
    facts = CrossFileFacts.of(document)
    return CheckedFile(
        path, document.text, document.format, result.diagnostics, facts, written, document
    )


# What a worker checked, kept until it exits (see the module's docstring).
_checked_in_worker: list[object] = []


def _quiet_worker() -> None:
    """A worker's start: standard output and error to /dev/null (the parent's unwritten
    buffers, copied by the fork, are left unflushed: the parent writes them)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = open(null, "w", closefd=False)  # noqa: SIM115 - for the worker's life


def _check_task(paths: list[str]) -> list[CheckedFile]:
    _test_hook()
    steps_by_content = _worker_steps_by_content()
    out = []
    with _log_records_kept() as records:
        for path in paths:
            found = _check_file(path, steps_by_content, records)
            _checked_in_worker.append(found.document)
            found.document = None  # the parent parses it again if it needs it
            out.append(found)
    return out


@functools.cache
def _worker_steps_by_content() -> StepsByContent:
    """The worker's steps checked by content, kept from one task to the next."""
    from .step_check_cache import StepsByContent

    return StepsByContent()


def _test_hook() -> None:
    hook = os.environ.get(WORKER_TEST_HOOK)
    if not hook:
        return
    action, _, directory = hook.partition(":")
    with open(os.path.join(directory, str(os.getpid())), "w"):
        pass
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "memory-error":
        raise MemoryError


@contextlib.contextmanager
def _log_records_kept() -> Iterator[list[logging.LogRecord]]:
    """The records that would reach `logging.lastResort` (standard error, when nothing
    configured logging: a check that failed), kept instead, ready to be pickled."""
    import logging

    records: list[logging.LogRecord] = []
    printer = logging.lastResort

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            # As `logging.handlers.QueueHandler.prepare`: a traceback cannot be pickled, its
            # text can (the default formatter's, which `lastResort` prints).
            if record.exc_info:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.msg, record.args, record.exc_info = record.getMessage(), None, None
            records.append(record)

    logging.lastResort = Keep(printer.level if printer is not None else logging.WARNING)
    try:
        yield records
    finally:
        logging.lastResort = printer


def _print_log_records(checked: Sequence[CheckedFile]) -> None:
    records = [record for found in checked for record in found.log_records]
    if records:
        import logging

        for record in records:
            logging.getLogger(record.name).handle(record)
