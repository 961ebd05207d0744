"""The order tests/conftest.py hands modules to pytest-xdist in: the longest ones first."""

from __future__ import annotations

import tomllib
from pathlib import Path

from suite_order import LONGEST_MODULES

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_named_longest_exists() -> None:
    # A renamed module would silently fall back to the end of the queue.
    assert [m for m in LONGEST_MODULES if not (ROOT / m).is_file()] == []


def test_xdist_keeps_the_order_conftest_gives() -> None:
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = pytest_options["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--no-loadscope-reorder" in addopts and "loadscope" in addopts
