"""Real Git repositories for the tests of workflow repositories: a bare repository written with
the ``git`` executable (served over ``file://``), and a Git smart-HTTP server on loopback
(``git http-backend`` as CGI behind a small Python HTTP server) that asks for a token."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "CALLER",
    "GitRemote",
    "http_git_server",
    "project_using",
    "team_remote",
    "workflow",
]

_AUTHOR = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def workflow(workflow_id: str, prompt: str = "Read the task.") -> dict[str, Any]:
    return {
        "id": workflow_id,
        "name": f"Flow {workflow_id}",
        "version": "1.0.0",
        "description": "A team workflow.",
        "steps": [{"id": "understand", "title": "Understand", "prompt": prompt}],
    }


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **_AUTHOR},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


class GitRemote:
    """A bare repository (``bare``) fed from a work tree (``work``) on branch ``main``."""

    def __init__(self, root: Path, name: str = "team") -> None:
        self.work = root / f"{name}-work"
        self.bare = root / f"{name}.git"
        self.work.mkdir(parents=True)
        git("init", "-q", "-b", "main", str(self.work), cwd=root)
        git("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)
        git("remote", "add", "origin", str(self.bare), cwd=self.work)

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def write(self, relative: str, content: dict[str, Any] | str | bytes) -> Path:
        path = self.work / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    def commit(self, message: str = "change", *, tag: str | None = None) -> str:
        """Commit everything, push main (and the tag); the commit id."""
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work)
        if tag:
            git("tag", tag, cwd=self.work)
        git("push", "-q", "origin", "main", *([tag] if tag else []), cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)


def project_using(
    remote: GitRemote, project: Path, *, rev: str = "main", sync: bool = True
) -> Path:
    """``project`` declaring ``remote`` (its ``flows`` folder, named ``team``) in
    ``.workrail/config.toml``, synced into the cache of ``WORKRAIL_HOME`` unless ``sync=False``."""
    from workrail_engine.sources.cache import sync as sync_source
    from workrail_engine.sources.served import declared_sources

    (project / ".workrail").mkdir(parents=True, exist_ok=True)
    (project / ".workrail" / "config.toml").write_text(
        f'workflow-repos = [{{url = "{remote.url}", rev = "{rev}", path = "flows", name = "team"}}]\n'
    )
    if sync:
        (source,) = declared_sources(project).sources
        assert sync_source(source).commit is not None
    return project


# A project's workflow naming the team repository's routine and workflow (`team_remote`), and
# a routine and a workflow nobody has.
CALLER = {
    "id": "caller",
    "name": "Caller",
    "version": "1.0.0",
    "steps": [
        {
            "id": "check",
            "title": "Check",
            "templateCall": {"templateId": "wr.templates.routine.team-check"},
        },
        {
            "id": "missing",
            "title": "Missing",
            "templateCall": {"templateId": "wr.templates.routine.absent"},
        },
        {
            "id": "fan-out",
            "title": "Fan out",
            "type": "parallel",
            "parallelDelegations": [
                {"workflowId": "team-review"},
                {"workflowId": "nobody-has-this"},
            ],
        },
    ],
}


def team_remote(tmp_path: Path) -> GitRemote:
    """A team repository with a routine and a workflow under ``flows``."""
    remote = GitRemote(tmp_path / "remotes")
    remote.write("flows/routines/team-check.json", workflow("routine-team-check", "Check it."))
    remote.write("flows/review.json", workflow("team-review", "Review it."))
    remote.commit("team flows")
    return remote


class _GitHttp(BaseHTTPRequestHandler):
    root: Path
    token: str
    seen_authorization: list[str]

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        authorization = self.headers.get("Authorization", "")
        self.seen_authorization.append(authorization)
        expected = "Basic " + base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        if authorization != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def http_git_server(root: Path, token: str) -> Iterator[tuple[str, list[str]]]:
    """(base URL, the Authorization headers received) of a server for the bare repositories
    under ``root``, which answers 401 to any request without the token."""
    seen: list[str] = []
    handler = type(
        "Handler", (_GitHttp,), {"root": root, "token": token, "seen_authorization": seen}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
