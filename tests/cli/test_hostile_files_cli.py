"""Hostile files against the real `workrail` process: each is refused with a code, in bounded time.

Deep nesting, references that would fetch a URL or read a file, a YAML alias bomb, FIFOs and
devices — every command must answer (no hang, no gigabytes) and never echo what it must not read.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from address_space import limit_address_space

from tests.hostile_workflows import alias_bomb, deep_run_condition_workflow

WORKRAIL = Path(sys.executable).with_name("workrail")
SECRET = "TOP-SECRET-FILE-CONTENT-7f3a"


def workrail(
    cwd: Path,
    *args: str,
    timeout: float = 60,
    stdin: Any = subprocess.DEVNULL,
    home: Path | None = None,
    memory_limit: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """``stdin``: a file or pipe for standard input; ``home``: $HOME (for ``~`` in paths);
    ``memory_limit``: the address space in bytes, so that reading without end fails fast."""
    env = {k: v for k, v in os.environ.items() if k != "WORKRAIL_WORKFLOW_PATH"}
    env["WORKRAIL_HOME"] = str(cwd / ".home")
    env["NO_COLOR"] = "1"
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [str(WORKRAIL), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=stdin,
        preexec_fn=limit_address_space(memory_limit) if memory_limit else None,
    )


def ref_workflow(reference: str) -> dict:
    return {
        "id": "ref-flow",
        "name": "Refs",
        "description": "A parameters schema that references something outside itself",
        "parameters": {
            "type": "object",
            "properties": {"target": {"$ref": reference}},
        },
        "steps": [{"id": "only", "title": "Only", "prompt": "Look at {{parameters.target}}"}],
    }


@contextmanager
def watched_http_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request it gets."""
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            requests.append(self.path)
            body = json.dumps({"type": "string", "description": SECRET}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema.json", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --- deep nesting -------------------------------------------------------------------------


def test_validate_refuses_a_300_deep_run_condition(tmp_path):
    path = tmp_path / "workflows" / "deep-condition.json"
    path.parent.mkdir()
    path.write_text(json.dumps(deep_run_condition_workflow(300)))
    done = workrail(tmp_path, "validate", str(path), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    codes = [d["code"] for f in json.loads(done.stdout)["files"] for d in f["diagnostics"]]
    assert codes == ["WR005"]


# --- $ref never leaves the schema ------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "file"])
def test_a_reference_outside_the_schema_is_a_diagnostic_and_nothing_is_fetched(tmp_path, kind):
    secret_file = tmp_path / "secret.json"
    secret_file.write_text(json.dumps({"type": "string", "description": SECRET}))
    with watched_http_server() as (url, requests):
        reference = url if kind == "http" else secret_file.as_uri()
        path = tmp_path / "ref-flow.json"
        path.write_text(json.dumps(ref_workflow(reference)))

        checked = workrail(tmp_path, "validate", str(path), "--format", "json")
        assert checked.returncode == 1, checked.stdout + checked.stderr
        [diagnostic] = json.loads(checked.stdout)["files"][0]["diagnostics"]
        assert diagnostic["code"] == "WR406"
        assert diagnostic["pointer"] == "/parameters/properties/target/$ref"

        dry = workrail(tmp_path, "run", str(path), "--dry-run", "--param", "target=x")
        assert dry.returncode != 0
        assert "WR406" in dry.stdout + dry.stderr

        assert requests == []  # the server never saw a request
        for output in (checked, dry):
            assert SECRET not in output.stdout + output.stderr


def test_the_run_time_check_refuses_references_even_without_the_linter(tmp_path):
    """`check_parameters` (what every run and dry run calls) compiles offline, in-document only."""
    from workrail_engine.errors import InvalidWorkflow
    from workrail_engine.runs.params import check_parameters

    secret_file = tmp_path / "secret.json"
    secret_file.write_text(json.dumps({"type": "string", "description": SECRET}))
    with watched_http_server() as (url, requests):
        for reference in (url, secret_file.as_uri(), "relative.json"):
            with pytest.raises(InvalidWorkflow) as refused:
                check_parameters(ref_workflow(reference), {"target": 1})
            assert SECRET not in str(refused.value) + json.dumps(refused.value.data)
        assert requests == []
    # a reference inside the schema still works
    inside = ref_workflow("#/$defs/target")
    inside["parameters"]["$defs"] = {"target": {"type": "string"}}
    assert check_parameters(inside, {"target": "x"}) == {"target": "x"}


# --- the YAML alias bomb -----------------------------------------------------------------


def test_the_alias_bomb_is_refused_by_validate_and_list(tmp_path):
    bomb = tmp_path / "workflows" / "bomb.yaml"
    bomb.parent.mkdir()
    bomb.write_text(alias_bomb())
    assert len(alias_bomb().encode()) < 500
    checked = workrail(tmp_path, "validate", str(bomb), "--format", "json", timeout=20)
    assert checked.returncode == 1
    codes = [d["code"] for f in json.loads(checked.stdout)["files"] for d in f["diagnostics"]]
    assert codes == ["WR008"]
    listed = workrail(tmp_path, "list", timeout=20)
    assert listed.returncode == 0, listed.stdout + listed.stderr


def test_a_yaml_value_that_does_not_fit_its_tag_is_a_diagnostic_not_a_traceback(tmp_path):
    """`!!int abc` made PyYAML raise a bare ValueError, and `workrail validate` died with it."""
    flow = tmp_path / "workflows" / "tagged.yaml"
    flow.parent.mkdir()
    flow.write_text("id: tagged\nname: !!int abc\nsteps: []\n")
    checked = workrail(tmp_path, "validate", str(flow), "--format", "json", timeout=20)
    assert checked.returncode == 1, checked.stderr
    assert "Traceback" not in checked.stderr
    [found] = [d for f in json.loads(checked.stdout)["files"] for d in f["diagnostics"]]
    assert (found["code"], found["line"], found["column"]) == ("WR001", 2, 7), found
    listed = workrail(tmp_path, "list", timeout=20)
    assert listed.returncode == 0, listed.stdout + listed.stderr


# --- FIFOs and devices -------------------------------------------------------------------


def test_validate_refuses_a_fifo_and_dev_zero_without_hanging(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero_link = tmp_path / "zero.json"
    zero_link.symlink_to("/dev/zero")
    for target in (str(fifo), "/dev/zero", str(zero_link)):
        done = workrail(tmp_path, "validate", target, "--format", "json", timeout=20)
        assert done.returncode == 1, done.stdout + done.stderr
        [diagnostic] = json.loads(done.stdout)["files"][0]["diagnostics"]
        assert diagnostic["code"] == "WR003" and "not a regular file" in diagnostic["message"]


def test_a_directory_walk_skips_a_fifo_named_like_a_workflow(tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    os.mkfifo(project / "package.json")  # the $schema sniffing would open it
    (project / "good.workflow.json").write_text(
        json.dumps(
            {
                "id": "good",
                "name": "Good",
                "description": "d",
                "steps": [{"id": "one", "title": "One", "prompt": "p"}],
            }
        )
    )
    done = workrail(tmp_path, "validate", str(project), "--format", "json", timeout=20)
    assert done.returncode == 0, done.stdout + done.stderr
    checked = [Path(f["path"]).name for f in json.loads(done.stdout)["files"]]
    assert checked == ["good.workflow.json"]


# --- control characters in paths --------------------------------------------------------


def test_a_path_with_a_newline_is_escaped_in_text_output(tmp_path):
    folder = tmp_path / "workflows"
    folder.mkdir()
    name = "evil\nforged.json:1:1: WR000 \x1b[2Jfake.json"
    (folder / name).write_text("{not json")
    done = workrail(tmp_path, "validate", str(folder), timeout=20)
    assert done.returncode == 1
    [head] = [line for line in done.stdout.splitlines() if "WR001" in line]
    assert head.startswith(str(folder) + "/evil\\nforged.json:1:1: WR000 \\u001b[2Jfake.json:1:2:")
    assert not any(line.startswith("forged.json") for line in done.stdout.splitlines())
    assert "\x1b" not in done.stdout
    # the JSON format, for comparison, carries the same escapes
    as_json = workrail(tmp_path, "validate", str(folder), "--format", "json", timeout=20)
    assert json.loads(as_json.stdout)["files"][0]["path"].endswith(name)
    listed = workrail(tmp_path, "list", timeout=20)
    assert "\x1b" not in listed.stdout + listed.stderr
    assert "evil\\nforged.json" in listed.stderr


# --- --context and --param values on the command line ----------------------------------


@pytest.mark.parametrize("depth", [100, 5000])
def test_deep_json_in_context_and_param_values_is_a_usage_error(tmp_path, depth):
    deep = "[" * depth + "]" * depth
    path = tmp_path / "flow.json"
    path.write_text(
        json.dumps(
            {
                "id": "flow",
                "name": "Flow",
                "description": "d",
                "steps": [{"id": "one", "title": "One", "prompt": "p"}],
            }
        )
    )
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "flow.json").write_text(path.read_text())
    nxt = workrail(tmp_path, "next", "flow", "--context", f"x={deep}", timeout=30)
    run = workrail(tmp_path, "run", str(path), "--dry-run", "--param", f"x={deep}", timeout=30)
    for done in (nxt, run):
        assert done.returncode == 2, done.stdout + done.stderr
        assert "nested deeper than 64 levels" in done.stderr
        assert "Traceback" not in done.stderr


# --- configuration files and standard input -----------------------------------------------

MEMORY_LIMIT = 1024**3  # reading without end fails at 1 GiB (MemoryError) instead of swapping
SECRET_TOKEN = "TOKEN-ghp_0123456789abcdefSECRET"
FLOW = {"id": "flow", "name": "Flow", "steps": [{"id": "one", "title": "One", "prompt": "p"}]}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".workrail").mkdir()
    (root / "workflows").mkdir()
    (root / "workflows" / "flow.json").write_text(json.dumps(FLOW))
    return root


def hostile_config(repo: Path, kind: str) -> tuple[Path, str]:
    """Lay out a configuration file of ``kind``; the file the error must name, and its words."""
    config = repo / ".workrail" / "config.toml"
    if kind == "symlink-to-dev-zero":  # Git stores symlinks: a clone can hold this one
        config.symlink_to("/dev/zero")
        return config, "must lie inside the repository"
    if kind == "fifo":
        os.mkfifo(config)
        return config, "named pipe (FIFO), not a regular file"
    if kind == "pyproject-fifo":
        os.mkfifo(repo / "pyproject.toml")
        return repo / "pyproject.toml", "named pipe (FIFO), not a regular file"
    if kind == "extended-fifo":
        config.write_text('extend = "shared.toml"\n')
        os.mkfifo(repo / ".workrail" / "shared.toml")
        return repo / ".workrail" / "shared.toml", "named pipe (FIFO), not a regular file"
    assert kind == "too-large"
    config.write_text("# " + "x" * (1024 * 1024) + "\nstrict = true\n")
    return config, "File too large (1.0 MiB; the limit is 1 MiB)"


@pytest.mark.parametrize(
    "kind", ["symlink-to-dev-zero", "fifo", "pyproject-fifo", "extended-fifo", "too-large"]
)
def test_a_configuration_file_not_regular_or_too_large_is_a_usage_error(repo, kind):
    culprit, words = hostile_config(repo, kind)
    for command in (["validate"], ["format", "--check"]):
        done = workrail(repo, *command, timeout=20, memory_limit=MEMORY_LIMIT)
        assert done.returncode == 2, done.stdout + done.stderr
        assert str(culprit) in done.stderr and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_extend_outside_the_repository_is_refused_unread_and_unechoed(repo, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "secrets.toml").write_text(f'select = ["{SECRET_TOKEN}"]\n')
    (repo / "inside-link.toml").symlink_to(home / "secrets.toml")
    config = repo / ".workrail" / "config.toml"
    errors = {}
    for extend in (
        "~/secrets.toml",
        "~/missing.toml",
        "../../home/secrets.toml",
        "../inside-link.toml",
    ):
        config.write_text(f'strict = false\nextend = "{extend}"\n')
        done = workrail(repo, "validate", home=home, timeout=20)
        assert done.returncode == 2, done.stdout + done.stderr
        assert SECRET_TOKEN not in done.stdout + done.stderr
        assert f"{config}:2: 'extend' must name a file inside the repository" in done.stderr
        errors[extend] = done.stderr.replace(extend, "EXTEND")
    # Whether the file outside exists is not told either.
    assert errors["~/secrets.toml"] == errors["~/missing.toml"]
    # Nor is a configuration file that is itself a link out of the repository read.
    config.unlink()
    config.symlink_to(home / "secrets.toml")
    done = workrail(repo, "validate", home=home, timeout=20)
    assert done.returncode == 2, done.stdout + done.stderr
    assert SECRET_TOKEN not in done.stdout + done.stderr
    assert f"{config}: a configuration file must lie inside the repository" in done.stderr


def test_validate_reads_standard_input_only_up_to_the_document_limit(repo):
    big = repo / "big.json"
    big.write_text(json.dumps({**FLOW, "description": "x" * (6 * 1024 * 1024)}))
    by_path = workrail(repo, "validate", str(big), "--format", "json", timeout=20)
    with open("/dev/zero", "rb") as zero:
        by_stdin = workrail(
            repo, "validate", "-", "--format", "json", stdin=zero, memory_limit=MEMORY_LIMIT
        )
    assert by_stdin.returncode == by_path.returncode == 1, by_stdin.stderr + by_path.stderr
    [from_stdin] = json.loads(by_stdin.stdout)["files"][0]["diagnostics"]
    [from_path] = json.loads(by_path.stdout)["files"][0]["diagnostics"]
    assert from_stdin["code"] == from_path["code"] == "WR004"
    assert "the limit is 5 MiB" in from_stdin["message"]


def test_format_reads_a_pipe_that_never_ends_only_up_to_the_document_limit(repo):
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = workrail(repo, "format", "-", stdin=yes.stdout, memory_limit=MEMORY_LIMIT)
    finally:
        yes.kill()
        yes.wait()
        assert yes.stdout is not None
        yes.stdout.close()
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "-: not formatted: File too large (more than 5.0 MiB" in done.stderr


def test_standard_input_not_utf8_is_refused_as_the_same_file_is(repo):
    latin1 = repo / "workflows" / "latin1.json"
    latin1.write_bytes(
        json.dumps({**FLOW, "name": "Fl\u00f6w"}, ensure_ascii=False).encode("latin-1")
    )
    by_path = workrail(repo, "validate", str(latin1), "--format", "json")
    with latin1.open("rb") as source:
        by_stdin = workrail(repo, "validate", "-", "--format", "json", stdin=source)
    assert by_stdin.returncode == by_path.returncode == 1, by_stdin.stderr + by_path.stderr
    [from_stdin] = json.loads(by_stdin.stdout)["files"][0]["diagnostics"]
    [from_path] = json.loads(by_path.stdout)["files"][0]["diagnostics"]
    assert {**from_stdin, "path": None} == {**from_path, "path": None}
    assert from_stdin["code"] == "WR003" and "Not UTF-8: byte 0xf6" in from_stdin["message"]
    with latin1.open("rb") as source:
        formatted = workrail(repo, "format", "-", stdin=source)
    assert formatted.returncode == 2, formatted.stdout + formatted.stderr
    assert formatted.stdout == ""  # no text with U+FFFD where the byte was
    assert "-: not formatted: Not UTF-8: byte 0xf6 at line 1" in formatted.stderr
