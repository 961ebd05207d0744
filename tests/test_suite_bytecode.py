"""The session writes our packages' bytecode, and pytest's rewritten test modules, before the tests
start their server processes and the workers collect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from suite_bytecode import (
    CHECKOUT,
    PACKAGES,
    compile_the_packages,
    has_current_bytecode,
    modules,
    rewrite_the_plugins,
    rewrite_the_tests,
)


def test_a_process_the_tests_start_loads_our_modules_from_bytecode() -> None:
    # `python -v` names the file each module's code came from; PYTHONDONTWRITEBYTECODE as on this
    # machine and in CI containers, where nothing but the session's compile writes a `.pyc`.
    run = subprocess.run(
        [sys.executable, "-v", "-c", "import workrail_engine.cli"],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded = "# code object from "
    sources = [
        line[len(loaded) :].strip("'")
        for line in run.stderr.splitlines()
        if line.startswith(loaded)
    ]
    ours = [Path(s) for s in sources if any(Path(s).is_relative_to(CHECKOUT / p) for p in PACKAGES)]
    assert len(ours) > 10
    assert [path for path in ours if path.suffix != ".pyc"] == []


def test_every_module_of_our_packages_has_current_bytecode() -> None:
    assert [m for m in modules() if not has_current_bytecode(m)] == []


def test_a_module_edited_after_the_compile_is_read_from_source_until_compiled_again(
    tmp_path: Path,
) -> None:
    module = tmp_path / PACKAGES[0] / "edited.py"
    module.parent.mkdir()
    module.write_text("VALUE = 1\n", encoding="utf-8")
    compile_the_packages(tmp_path)
    assert [has_current_bytecode(m) for m in modules(tmp_path)] == [True]

    module.write_text("VALUE = 22\n", encoding="utf-8")  # another size, whatever the clock says
    assert not has_current_bytecode(module)

    compile_the_packages(tmp_path)
    assert has_current_bytecode(module)


def test_pytest_reads_the_rewritten_test_modules_written_once_and_rewrites_an_edited_one(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    sample = tests / "test_sample.py"
    sample.write_text("def test_sum():\n    total = 3\n    assert total == 4\n", encoding="utf-8")
    rewrite_the_tests(request.config, tests)

    def run_pytest() -> tuple[str, str]:
        log = tmp_path / "debug.log"
        run = subprocess.run(
            [sys.executable, "-m", "pytest", str(tests), "-p", "no:cacheprovider", "-p", "no:xdist"]
            + ["-o", "addopts=", f"--debug={log}", "--rootdir", str(tmp_path)],
            env={
                **os.environ,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            },
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        return run.stdout, log.read_text(encoding="utf-8")

    output, log = run_pytest()
    assert f"found cached rewritten pyc for {sample}" in log
    assert "assert 3 == 4" in output  # the cached code is the rewritten one: asserts explained

    sample.write_text("def test_sum():\n    total = 30\n    assert total == 4\n", encoding="utf-8")
    output, log = run_pytest()
    assert f"rewriting {sample!r}" in log
    assert "assert 30 == 4" in output


def test_pytest_reads_the_plugins_rewritten_modules_written_once(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """pytest rewrites the asserts of its plugins' packages in every process (hypothesis' among
    them: its plugin imports it); written once (by the controller, here by this worker), a pytest
    started next reads them instead."""
    import hypothesis
    from _pytest.assertion.rewrite import PYC_TAIL, get_cache_dir

    package = Path(hypothesis.__file__)
    (get_cache_dir(package) / (package.stem + PYC_TAIL)).unlink(missing_ok=True)
    rewrite_the_plugins(request.config)

    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    log = tmp_path / "debug.log"
    subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path), "-p", "no:cacheprovider", "-n", "0"]
        + ["-o", "addopts=", f"--debug={log}", "--rootdir", str(tmp_path)],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        check=True,
    )
    debug = log.read_text(encoding="utf-8")
    assert f"rewriting {tmp_path / 'test_nothing.py'!r}" in debug  # the log names each module
    assert f"found cached rewritten pyc for {package}" in debug
