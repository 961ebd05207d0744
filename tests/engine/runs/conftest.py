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
from system_packages import require

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
    require("postgresql")
    return sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))[-1].parent


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


class PostgresServer:
    """A real PostgreSQL server on loopback, in a directory of its own."""

    def __init__(self) -> None:
        self.base = Path(f"/tmp/workrail-pg-{os.getpid()}-{time.monotonic_ns()}")
        self.base.mkdir(mode=0o755)
        self.data, self.port, self.prefix, self.binaries = (
            self.base / "data",
            _free_port(),
            _as_postgres_user(),
            _pg_bin(),
        )
        if self.prefix:
            shutil.chown(self.base, user="postgres")
        subprocess.run(
            [
                *self.prefix,
                str(self.binaries / "initdb"),
                "-D",
                str(self.data),
                "-A",
                "trust",
                "-U",
                "workrail",
            ],
            check=True,
            capture_output=True,
        )
        self._pg_ctl("start")
        self.url = f"postgresql://workrail@127.0.0.1:{self.port}/postgres"

    def _pg_ctl(self, *action: str) -> None:
        subprocess.run(
            [
                *self.prefix,
                str(self.binaries / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.base / "log"),
                "-w",
                "-o",
                f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1",
                *action,
            ],
            check=True,
            capture_output=True,
        )

    def restart(self) -> None:
        """Ends every session, as a server restart or a failover does."""
        self._pg_ctl("-m", "fast", "restart")

    def stop(self) -> None:
        subprocess.run(
            [
                *self.prefix,
                str(self.binaries / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
        )
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_server():
    """A server per test module (starting one takes about 1.5 s); a module whose tests need a
    clean store each creates a database per test on it."""
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def postgres_url(postgres_server):
    return postgres_server.url
