"""The run store's files: private to their user (directories 0700, files 0600, the SQLite -wal and
-shm files included, looked at while a run holds them open), and no lock file left behind by a
process that ends with nothing in flight — while a live process keeps its own."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from runs_support import PY

CLI = [sys.executable, "-c", "from workrail_engine.cli import main; main()"]
SHOW_MODES = (
    "import json, os, sys\n"
    "modes = {}\n"
    "for top, dirs, files in os.walk(sys.argv[1]):\n"
    "    for name in dirs + files:\n"
    "        path = os.path.join(top, name)\n"
    "        modes[os.path.relpath(path, sys.argv[1])] = oct(os.stat(path).st_mode & 0o777)\n"
    "print(json.dumps(modes))\n"
)


def cli(home: Path, project: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, "--project", str(project), *args],
        cwd=project,
        env={**os.environ, "WORKRAIL_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        umask=0o022,  # what a user's shell usually has: files would be 0644
        **kw,
    )


def modes(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): oct(stat.S_IMODE(path.stat().st_mode))
        for path in root.rglob("*")
    }


def expected(root: Path, found: dict[str, str]) -> dict[str, str]:
    return {name: ("0o700" if (root / name).is_dir() else "0o600") for name in found}


def _workflow(project: Path, steps: list[dict]) -> Path:
    path = project / "wf.json"
    path.write_text(json.dumps({"id": "store-files", "name": "Store files", "steps": steps}))
    return path


def test_the_store_is_private_while_a_run_holds_it_and_after(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    store = home / "runs"
    path = _workflow(
        project,
        [{"id": "modes", "title": "modes", "run": {"command": [PY, "-c", SHOW_MODES, str(store)]}}],
    )
    out = cli(home, project, "run", str(path), "--format", "json")
    assert out.returncode == 0, out.stderr
    during = json.loads(out.stdout)["step_results"][0]["output"]["stdout"]
    # the database, its -wal and -shm (open while the step runs), the lock and its log of groups
    assert {"runs.sqlite", "runs.sqlite-wal", "runs.sqlite-shm", "executors"} <= set(during)
    assert any(name.endswith(".lock") for name in during), during
    assert during == {name: ("0o700" if name == "executors" else "0o600") for name in during}
    assert oct(stat.S_IMODE(store.stat().st_mode)) == "0o700"
    after = modes(store)
    assert after == expected(store, after)


def test_a_store_left_readable_by_an_earlier_version_is_made_private(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    store = home / "runs"
    (store / "executors").mkdir(parents=True)
    os.chmod(store, 0o755)
    os.chmod(store / "executors", 0o755)
    (store / "runs.sqlite").touch(mode=0o644)  # an empty file is an empty database
    os.chmod(store / "runs.sqlite", 0o644)
    out = cli(home, project, "runs")
    assert out.returncode == 0, out.stderr
    found = {**modes(store), ".": oct(stat.S_IMODE(store.stat().st_mode))}
    assert found == expected(store, found)


def test_no_lock_file_piles_up_and_a_live_executor_keeps_its_own(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    executors = home / "runs" / "executors"
    for _ in range(3):
        out = cli(home, project, "runs")
        assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in executors.iterdir()) == []

    log, go = project / "log", project / "go"
    slow = (
        f"import os, time; open({str(log)!r}, 'a').write('ran\\n')\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.05)"
    )
    path = _workflow(
        project, [{"id": "slow", "title": "slow", "run": {"command": [PY, "-c", slow]}}]
    )
    live = subprocess.Popen(
        [*CLI, "--project", str(project), "run", str(path), "--format", "json"],
        cwd=project,
        env={**os.environ, "WORKRAIL_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + 60
        while not log.exists():
            assert time.monotonic() < end and live.poll() is None, live.communicate()
            time.sleep(0.05)
        held = sorted(p.name for p in executors.glob("*.lock"))
        assert len(held) == 1, held
        for _ in range(2):  # each opens the store, looks for dead executors, and ends
            out = cli(home, project, "runs", "--format", "json")
            assert out.returncode == 0, out.stderr
            assert sorted(p.name for p in executors.glob("*.lock")) == held
        go.touch()
        result, err = live.communicate(timeout=60)
    finally:
        if live.poll() is None:
            live.kill()
            live.communicate()
    assert live.returncode == 0, err
    assert json.loads(result)["status"] == "success"
    assert log.read_text() == "ran\n"  # not taken over and run again by another process
    assert sorted(p.name for p in executors.iterdir()) == []
