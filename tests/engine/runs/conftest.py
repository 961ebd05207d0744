"""One durable run store per test session (DBOS is one per process), in a temporary home; a real
PostgreSQL server on loopback for the tests of the Postgres configuration."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from workrail_engine.runs import RunService


@pytest.fixture(scope="session")
def run_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("workrail-home")


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("project")


@pytest.fixture(scope="module")
def service(run_home, project):
    """Module scope, and stopped afterwards: DBOS's background threads (queue and notification
    polling) must not keep running under the rest of the suite."""
    svc = RunService(project, allow_commands=True, home=run_home)
    svc.start()
    yield svc
    svc.close()


def _pg_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    assert found, "PostgreSQL is not installed (Debian package 'postgresql'; .ci/run installs it)"
    return found[-1].parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres_user() -> list[str]:
    """initdb refuses to run as root: run the server as the 'postgres' account then."""
    if os.geteuid() != 0:
        return []
    pwd.getpwnam("postgres")
    return ["runuser", "-u", "postgres", "--"]


@pytest.fixture(scope="module")
def postgres_url(tmp_path_factory):
    """A server per test module (starting one takes about 1.5 s); a module whose tests need a
    clean store each creates a database per test on it."""
    base = Path(f"/tmp/workrail-pg-{os.getpid()}-{time.monotonic_ns()}")
    base.mkdir(mode=0o755)
    data, port, prefix, binaries = base / "data", _free_port(), _as_postgres_user(), _pg_bin()
    if prefix:
        shutil.chown(base, user="postgres")
    subprocess.run([*prefix, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "workrail"],
                   check=True, capture_output=True)
    subprocess.run([*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-o",
                    f"-p {port} -k {base} -c listen_addresses=127.0.0.1", "start"], check=True, capture_output=True)
    try:
        yield f"postgresql://workrail@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
