"""The order pytest-xdist's workers are handed the test modules in (tests/conftest.py applies it)."""

from __future__ import annotations

from collections import Counter

import pytest

# pytest-xdist hands each worker whole modules (--dist loadscope) in the order they are collected
# (addopts turn off its own order, most tests first): a module of a few long tests handed out last
# kept one worker busy alone for minutes at the end. These run longest, so they go first, longest
# first; a module marked slow comes next, then the rest, most tests first. A module missing from
# the list is only scheduled later, never skipped. The first two build or install what a clean
# clone lacks (the VS Code extension, pre-commit's environment of the project); the rest are the
# longest per-module sums of test durations of a whole CI=true run (docs/benchmarks.md, The test
# suite).
LONGEST_MODULES = (
    "tests/editors/test_vscode_in_code_server.py",
    "tests/test_pre_commit.py",
    "tests/cli/test_no_run_left_behind.py",
    "tests/engine/runs/test_recovery.py",
    "tests/engine/runs/test_postgres.py",
    "tests/cli/test_replay_forks_cli.py",
    "tests/cli/test_replay_cli.py",
    "tests/cli/test_fork_cli.py",
    "tests/mcp/dashboard/test_dashboard_hostile.py",
    "tests/mcp/test_stdio_protocol.py",
    "tests/mcp/test_run_model.py",
    "tests/mcp/test_http_hostile.py",
    "tests/mcp/test_http.py",
    "tests/engine/text/test_document_edits.py",
    "tests/cli/test_runs_cli.py",
    "tests/mcp/test_real_clients.py",
    "tests/mcp/test_run_recovery.py",
    "tests/engine/runs/test_store_files.py",
    "tests/mcp/test_tool_tasks.py",
    "tests/lsp/fast_start/test_handshake.py",
    "tests/engine/runs/test_step_processes.py",
    "tests/mcp/dashboard/test_dashboard_browser.py",
)


def in_dispatch_order(items: list[pytest.Item]) -> None:
    """Sorts the collected tests in place, keeping each module's tests together and in order."""
    tests_per_module = Counter(item.nodeid.split("::")[0] for item in items)
    slow_modules = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}

    def rank(module: str) -> tuple[int, int]:
        if module in LONGEST_MODULES:
            return (0, LONGEST_MODULES.index(module))
        return (1 if module in slow_modules else 2, -tests_per_module[module])

    items.sort(key=lambda item: rank(item.nodeid.split("::")[0]))  # stable: a module's own order
