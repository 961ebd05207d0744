"""Workflow repositories through the real `workrail` process, against real Git repositories: bare
ones over ``file://`` and a smart-HTTP server on loopback that asks for a token."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.git_remotes import GitRemote, http_git_server, workflow
from workrail_engine.limits import MAX_DOCUMENT_BYTES

WORKRAIL = Path(sys.executable).with_name("workrail")
Run = Callable[..., subprocess.CompletedProcess[str]]


def declare(project: Path, *entries: dict[str, str]) -> None:
    lines = ["workflow-repos = ["]
    for entry in entries:
        lines.append("  {" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry.items()) + "},")
    (project / ".workrail").mkdir(parents=True, exist_ok=True)
    (project / ".workrail" / "config.toml").write_text("\n".join([*lines, "]"]) + "\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def run(project: Path, home: Path) -> Run:
    def invoke(*args: str, expect: int | None = 0, env: dict[str, str] | None = None) -> Any:
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("WORKRAIL_", "WORKFLOW_GIT"))
        }
        done = subprocess.run(
            [str(WORKRAIL), *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=project,
            env={**base, "WORKRAIL_HOME": str(home), "NO_COLOR": "1", **(env or {})},
        )
        if expect is not None:
            assert done.returncode == expect, (args, done.stdout, done.stderr)
        return done

    return invoke


def listed(run: Run, **options: Any) -> dict[str, dict[str, Any]]:
    done = run("list", "--format", "json", **options)
    return {row["id"]: row for row in json.loads(done.stdout)}


@pytest.fixture
def remote(tmp_path: Path) -> GitRemote:
    made = GitRemote(tmp_path / "remotes")
    made.write("workflows/first.json", workflow("team-first", "First version."))
    made.commit("one", tag="v1")
    return made


def test_a_tag_stays_pinned_and_a_followed_branch_moves_only_at_sync(
    project: Path, remote: GitRemote, run: Run
) -> None:
    declare(project, {"url": remote.url, "rev": "v1", "path": "workflows", "name": "pinned"})
    never = run("list")
    assert "workflow repository pinned" in never.stderr and "never fetched" in never.stderr
    run("sources", "sync")
    assert listed(run)["team-first"]["source"] == "repo:pinned"

    remote.write("workflows/first.json", workflow("team-first", "Second version."))
    remote.write("workflows/second.json", workflow("team-second"))
    remote.commit("two")
    run("sources", "sync")
    assert "team-second" not in listed(run)  # the tag has not moved
    shown = run("show", "team-first", "--format", "json").stdout
    assert "First version." in shown

    declare(project, {"url": remote.url, "rev": "main", "path": "workflows", "name": "followed"})
    run("sources", "sync")
    both = listed(run)
    assert both["team-second"]["source"] == "repo:followed"
    remote.write("workflows/third.json", workflow("team-third"))
    remote.commit("three")
    assert "team-third" not in listed(run)  # nothing reaches the network but sync
    run("sources", "sync")
    assert "team-third" in listed(run)


def test_a_commit_id_pins_and_sources_lists_it(project: Path, remote: GitRemote, run: Run) -> None:
    first = remote.commit("again")
    remote.write("workflows/later.json", workflow("team-later"))
    remote.commit("later")
    declare(project, {"url": remote.url, "rev": first, "path": "workflows", "name": "team"})
    run("sources", "sync")
    assert "team-later" not in listed(run) and "team-first" in listed(run)
    rows = {r["source"]: r for r in json.loads(run("sources", "--format", "json").stdout)}
    assert rows["repo:team"]["commit"] == first and rows["repo:team"]["workflows"] == 1
    assert rows["repo:team"]["synced"]
    assert {"bundled", "user", "project"} <= set(rows)


def test_the_lock_is_honoured_until_updated(project: Path, remote: GitRemote, run: Run) -> None:
    declare(project, {"url": remote.url, "rev": "main", "path": "workflows", "name": "team"})
    first = remote.commit("locked")
    run("sources", "lock")
    lock = json.loads((project / ".workrail" / "sources.lock").read_text())
    assert [(s["name"], s["commit"]) for s in lock["sources"]] == [("team", first)]

    remote.write("workflows/new.json", workflow("team-new"))
    second = remote.commit("moved on")
    run("sources", "sync")  # fetches, but serves the locked commit
    run("sources", "lock")  # a locked commit stays
    assert "team-new" not in listed(run)

    run("sources", "update", "team")
    lock = json.loads((project / ".workrail" / "sources.lock").read_text())
    assert lock["sources"][0]["commit"] == second
    assert "team-new" in listed(run)
    assert run("sources", "update", "nobody", expect=2).stderr.count("nobody") == 1


def test_an_unreachable_remote_serves_the_cached_commit(
    project: Path, remote: GitRemote, run: Run, tmp_path: Path
) -> None:
    declare(project, {"url": remote.url, "rev": "main", "path": "workflows", "name": "team"})
    run("sources", "sync")
    remote.bare.rename(tmp_path / "gone.git")
    offline = run("sources", "sync")
    assert "serving the cached commit" in offline.stderr
    assert listed(run)["team-first"]["source"] == "repo:team"


def test_a_hostile_repository_runs_nothing_and_reads_nothing_outside(
    project: Path, remote: GitRemote, run: Run, tmp_path: Path, home: Path
) -> None:
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("reference-transaction", "post-checkout", "post-merge", "pre-auto-gc"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    # A person's global configuration turning hooks on must not reach the clone either.
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n[init]\n\ttemplateDir = {tmp_path}\n")
    remote.write("workflows/hooks/post-checkout", f"#!/bin/sh\ntouch {marker}\n")
    os.symlink("/etc/passwd", remote.work / "workflows" / "passwd.json")
    os.symlink("first.json", remote.work / "workflows" / "alias.json")
    remote.write("workflows/huge.json", b" " * (MAX_DOCUMENT_BYTES + 1))
    remote.write(
        ".gitmodules",
        '[submodule "evil"]\n\tpath = workflows/evil\n\turl = ext::sh -c touch% /tmp/x\n',
    )
    git_ = ["git", "-C", str(remote.work)]
    subprocess.run(
        [*git_, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},workflows/evil"],
        check=True,
    )
    remote.commit("hostile")
    declare(project, {"url": remote.url, "rev": "main", "path": "workflows", "name": "team"})

    synced = run("sources", "sync", env={"GIT_CONFIG_GLOBAL": str(config)})
    assert "passwd.json: a symbolic link out of the repository: left out" in synced.stderr
    assert "huge.json" in synced.stderr and "MAX_DOCUMENT_BYTES" in synced.stderr
    assert not marker.exists()
    names = {p.name for p in (home / "sources").rglob("trees/*/workflows/*")}
    assert names == {"first.json", "alias.json"}, names  # no link out, no huge file, no hook
    passwd = Path("/etc/passwd").read_bytes()[:40]
    for path in home.rglob("*"):
        if path.is_file():
            assert passwd not in path.read_bytes(), path
    workflows = listed(run)
    assert workflows["team-first"]["source"] == "repo:team"


def test_a_foreign_transport_is_refused_before_git_runs(
    project: Path, run: Run, tmp_path: Path
) -> None:
    marker = tmp_path / "ext-ran"
    declare(project, {"url": f"ext::sh -c touch% {marker}", "name": "evil"})
    refused = run("sources", "sync", expect=2)
    assert "transport helper" in refused.stderr and "refused" in refused.stderr
    assert "usage" not in refused.stdout
    listing = run("list")  # the catalog carries on with the other sources
    assert "refused" in listing.stderr
    assert not marker.exists()
    declare(project, {"url": "fd::17", "name": "fd"})
    assert "transport helper" in run("sources", "sync", expect=2).stderr


def test_a_machine_without_git_is_told_what_to_install(
    project: Path, remote: GitRemote, run: Run
) -> None:
    declare(project, {"url": remote.url, "rev": "main", "name": "team"})
    missing = run("sources", "sync", expect=1, env={"PATH": ""})
    assert "`git` executable" in missing.stderr and "install Git" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_a_token_over_http_is_used_and_never_leaks(
    project: Path, remote: GitRemote, run: Run, tmp_path: Path, home: Path
) -> None:
    token = "wrtok-4f1c9a7e0b2d"
    encoded = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    # A `git` in front of the real one records every argument list it is given.
    shims = tmp_path / "shims"
    shims.mkdir()
    argv_log = tmp_path / "argv.log"
    real_git = subprocess.run(
        ["which", "git"], capture_output=True, text=True, check=True
    ).stdout.strip()
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {argv_log}\nexec {real_git} "$@"\n')
    shim.chmod(0o755)
    path = f"{shims}{os.pathsep}{os.environ['PATH']}"
    with http_git_server(remote.bare.parent, token) as (base, seen):
        declare(
            project,
            {"url": f"{base}/{remote.bare.name}", "rev": "v1", "path": "workflows", "name": "web"},
        )
        refused = run("sources", "sync", expect=1, env={"PATH": path})
        assert "web" in refused.stderr
        wrong = run("sources", "sync", expect=1, env={"PATH": path, "WORKRAIL_GIT_TOKEN": "not-it"})
        assert "not-it" not in wrong.stderr + wrong.stdout
        outputs = [refused.stdout + refused.stderr]
        env = {"PATH": path, "WORKRAIL_GIT_TOKEN": token}
        for args in (("sources", "sync"), ("sources", "lock"), ("sources",), ("list",)):
            done = run(*args, env=env)
            outputs.append(done.stdout + done.stderr)
        assert f"Basic {encoded}" in seen
    assert "team-first" in outputs[-1]
    for text in outputs:
        assert token not in text and encoded not in text
    assert argv_log.read_text().count("fetch") + argv_log.read_text().count("clone") >= 1
    for folder in (home, project, tmp_path / "shims"):
        for file in folder.rglob("*"):
            if file.is_file():
                data = file.read_bytes()
                assert token.encode() not in data and encoded.encode() not in data, file
    assert token not in argv_log.read_text() and encoded not in argv_log.read_text()
