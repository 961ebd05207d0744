"""Bytecode of our packages, written once per test session (tests/conftest.py calls it).

Where PYTHONDONTWRITEBYTECODE is set (this machine, many CI containers) no process writes `.pyc`
files, so every `workrail`, `workrail-mcp` or `workrail-lsp` process a test started compiled each
of our modules it imported from source, again and again: hundreds of processes, ≈ 0.1-0.2 s of
CPU each for an MCP server. pip compiled the installed libraries; this does the same for the
editable install of this checkout, before any worker or server process starts. The test
modules' own cache (pytest's copies with rewritten asserts) is written here too, for the same
reason (`rewrite_the_tests`).
"""

from __future__ import annotations

import importlib.util
import py_compile
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
# What the processes the tests start import from the checkout (the editable install points here).
PACKAGES = ("workrail_engine", "workrail_mcp", "workrail_lsp")


def compile_the_packages(root: Path = CHECKOUT) -> None:
    """Timestamp-checked `.pyc` files, as `import` writes them: a module edited after this (or
    during the run) no longer matches its `.pyc` and is read from source, as Python always does.
    py_compile writes each file atomically (a temporary file, then a rename), so two runs at once
    never read a half-written one. Only a module whose `.pyc` does not match it is compiled, so a
    second run costs a `stat` and a read of 16 bytes per module. (compileall would skip a module
    edited in the same second as its `.pyc`: it compares the modification time alone.)"""
    for module in modules(root):
        if not has_current_bytecode(module):
            try:
                py_compile.compile(
                    str(module),
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
                )
            except py_compile.PyCompileError:
                pass  # the tests that import it fail, with the error in context


def modules(root: Path = CHECKOUT) -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((root / package).rglob("*.py"))


def has_current_bytecode(module: Path) -> bool:
    """Whether Python would load `module` from its `.pyc` (the header's magic, mtime and size)."""
    cached = Path(importlib.util.cache_from_source(str(module)))
    try:
        header = cached.read_bytes()[:16]
    except FileNotFoundError:
        return False
    source = module.stat()
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[4:8], "little") == 0  # timestamp-checked
        and int.from_bytes(header[8:12], "little") == int(source.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(header[12:16], "little") == source.st_size & 0xFFFFFFFF
    )


def rewrite_the_tests(config: Any, root: Path = CHECKOUT / "tests") -> None:
    """pytest's own cached copies of the test modules with their asserts rewritten, written once.

    pytest rewrites each test module's `assert` statements when it imports it and keeps the result
    in `__pycache__` — unless PYTHONDONTWRITEBYTECODE is set: then every pytest-xdist worker
    rewrote every test module at collection (≈ 5 s of CPU each; docs/benchmarks.md). Written here
    with pytest's own functions, the workers find and read them, checked against each source's
    mtime and size as pytest always checks them. These functions are pytest's internals: with a
    pytest that lacks them, the workers rewrite as before (only slower).
    """
    _write_rewritten(
        config,
        (
            module
            for module in sorted(root.rglob("*.py"))
            if module.name.startswith("test_") or module.name == "conftest.py"
        ),
    )


def rewrite_the_plugins(config: Any) -> None:
    """The same for the plugins' modules this process imported with their asserts rewritten.

    pytest rewrites the asserts of every package of a distribution that registers a plugin
    (anyio, xdist, pytest-lsp, pytest-asyncio, platformdirs, hypothesis — whose plugin makes the
    whole `hypothesis` package one: ≈ 125 modules here), in every pytest process, at its start:
    0.5–1 s of CPU of each worker where no `.pyc` may be written (docs/benchmarks.md). The
    controller has imported them by now; written here, the workers read them.
    """
    try:
        from _pytest.assertion.rewrite import AssertionRewritingHook
    except ImportError:
        return
    _write_rewritten(
        config,
        (
            Path(module.__file__)
            for module in list(sys.modules.values())
            if isinstance(getattr(module, "__loader__", None), AssertionRewritingHook)
            and getattr(module, "__file__", None)
        ),
    )


def _write_rewritten(config: Any, sources: Iterable[Path]) -> None:
    """pytest's rewritten `.pyc` of each of ``sources`` that has none current."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:  # --assert=plain: nothing is rewritten
        return
    for module in sources:
        cache_dir = get_cache_dir(module)
        pyc = cache_dir / (module.name[:-3] + PYC_TAIL)
        if _read_pyc(module, pyc, state.trace) is not None or not try_makedirs(cache_dir):
            continue
        try:
            source_hash, code = _rewrite_test(module, config)
        except SyntaxError:
            continue  # its collection reports the error
        _write_pyc(state, code, source_hash, pyc)
