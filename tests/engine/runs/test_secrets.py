"""Secrets never survive in pieces: masked before the output caps cut, across pipe reads, and in
everything the run store holds — read back with the sqlite3 module, every table, every column."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from runs_support import command, py, workflow

from workrail_engine.runs import RunOptions
from workrail_engine.runs.command_process import STDERR_TAIL, STDOUT_CAP, CommandSpec, run_command
from workrail_engine.runs.secrets import StreamMask

FRAGMENT = 8  # no run of this many characters of a secret may be left anywhere


def new_secret() -> str:
    return "S3CRET-" + os.urandom(16).hex()  # 39 characters, none shared with the filler


def fragments(secret: str) -> set[str]:
    return {secret[i : i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)}


def leaks(text: str, secret: str) -> list[str]:
    return sorted(f for f in fragments(secret) if f in text)


# --- the stream mask -----------------------------------------------------------------------------


def test_a_secret_split_at_any_point_between_reads_is_masked_whole():
    secret = "hunter2-correct-horse"
    stream = b"before " + secret.encode() + b" middle " + secret.encode() + b" after"
    for size in range(1, len(stream) + 1):
        mask = StreamMask([secret])
        out = b"".join(mask.feed(stream[i : i + size]) for i in range(0, len(stream), size))
        out += mask.flush()
        assert out == b"before *** middle *** after", size


def test_the_longest_secret_wins_and_no_secret_means_no_change():
    mask = StreamMask(["abc", "abcdef"])
    assert mask.feed(b"xx abcdef yy abc") + mask.flush() == b"xx *** yy ***"
    assert StreamMask([]).feed(b"abc") == b"abc"


# --- the executor's caps -------------------------------------------------------------------------


def _spec(tmp_path: Path, code: str, secret: str) -> CommandSpec:
    return CommandSpec(
        [py("")[0], "-c", code],
        tmp_path,
        {"PATH": os.environ["PATH"], "TOKEN": secret},
        secrets=(secret,),
    )


def test_the_stderr_tail_does_not_cut_a_secret_in_two(tmp_path):
    secret = new_secret()
    # unmasked, the tail would begin 12 bytes before the end of the secret
    code = (
        "import os, sys; s = os.environ['TOKEN']; "
        f"sys.stderr.write('x' * 100 + s + '.' * {STDERR_TAIL - 12})"
    )
    out = run_command(_spec(tmp_path, code, secret))
    assert out.exit_code == 0, out
    assert len(out.stderr_tail) == STDERR_TAIL and out.stderr_tail.endswith("." * 100)
    assert leaks(json.dumps(out.output()), secret) == []


def test_the_stdout_cap_does_not_cut_a_secret_in_two(tmp_path):
    secret = new_secret()
    # unmasked, the cap would fall 12 bytes into the secret; written in pieces, so that the
    # reads split it too
    code = (
        "import os, sys; s = os.environ['TOKEN']; w = sys.stdout.write; "
        f"w('y' * {STDOUT_CAP - 12}); sys.stdout.flush(); w(s[:5]); sys.stdout.flush(); "
        "w(s[5:] + 'tail')"
    )
    out = run_command(_spec(tmp_path, code, secret))
    assert out.exit_code == 0, out.error
    assert leaks(json.dumps(out.output()), secret) == []
    assert out.stdout.endswith("y***tail")  # the cap counts the masked output


# --- the run store -------------------------------------------------------------------------------


def database_text(home: Path) -> str:
    """Every value of every table of the store, as text, read with the sqlite3 module."""
    parts = []
    for path in home.rglob("*.sqlite"):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = [
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                for row in conn.execute(f'SELECT * FROM "{table}"'):
                    for value in row:
                        if isinstance(value, bytes):
                            parts.append(value.decode("utf-8", "replace"))
                        elif value is not None:
                            parts.append(str(value))
        finally:
            conn.close()
    return "\n".join(parts)


def test_nothing_stored_holds_a_secret_or_a_piece_of_one(service, run_home, monkeypatch):
    secret = new_secret()
    marker = "visible-" + os.urandom(6).hex()
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    wf = workflow(
        command(
            "cut-by-caps",
            py(
                "import os, sys; s = os.environ['DEPLOY_TOKEN']; "
                f"sys.stdout.write('y' * {STDOUT_CAP - 12} + s); "
                f"sys.stderr.write(s + '.' * {STDERR_TAIL - 12}); print({marker!r}, file=sys.stderr)"
            ),
        ),
        {"id": "ask", "title": "Ask", "prompt": "Paste the token"},
        command("echo-param", ["echo", "{{parameters.target}}"]),
        parameters={"type": "object", "properties": {"target": {"type": "string"}}},
        secrets=["DEPLOY_TOKEN"],
    )
    options = RunOptions(context={"note": f"ctx {secret}"})
    plan = service.plan(wf, {"target": f"to {secret}"}, options)
    assert plan["groups"][2]["steps"][0]["argv"] == ["echo", "to ***"]
    assert leaks(json.dumps(plan), secret) == []
    run_id = service.run(wf, {"target": f"to {secret}"}, options)
    waiting = service.wait(run_id, 60)
    assert waiting["status"] == "waiting", waiting
    done = service.continue_run(
        run_id, f"the agent says {secret}", context={"more": secret}, wait_seconds=60
    )
    assert done["status"] == "success", done
    answer = json.dumps(done)
    assert marker in answer and leaks(answer, secret) == []
    assert done["step_results"][2]["output"]["stdout"] == "to ***\n"

    stored = database_text(run_home)
    assert marker in stored  # the check below can fail: outputs are stored readable
    assert leaks(stored, secret) == []
    files = b"".join(p.read_bytes() for p in run_home.rglob("runs.sqlite*"))
    assert [f for f in fragments(secret) if f.encode() in files] == []
