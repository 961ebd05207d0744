"""A real PostgreSQL server on loopback for the tests of the Postgres configuration: one per test
session (per pytest-xdist worker), a database of its own for each test module that asks for one
(the `postgres_server` / `postgres_url` fixtures of tests/conftest.py)."""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from system_packages import require


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


# A test server need not survive a crash of the machine, only of its processes (the tests kill
# workers, restart and stop the server; the operating system keeps what was written), so it runs
# with PostgreSQL's "non-durable settings": no test's subject is a flush to disk (the journal's
# own connections already set synchronous_commit=off, runs/sql_store.py). Measured: the first
# `workrail runs` on a new database (DBOS's and our schema) took 2.7-4.1 s of wall, 1.4-2.1 s
# without the flushes (docs/benchmarks.md, The test suite).
NOT_DURABLE = "-c fsync=off -c full_page_writes=off"


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
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        self.pg_ctl("start")
        self.url = f"postgresql://workrail@127.0.0.1:{self.port}/postgres"
        self._databases = itertools.count(1)

    def pg_ctl(self, *action: str) -> None:
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
                f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 {NOT_DURABLE}",
                *action,
            ],
            check=True,
            capture_output=True,
        )

    def restart(self) -> None:
        """Ends every session, as a server restart or a failover does."""
        self.pg_ctl("-m", "fast", "restart")

    def start_if_stopped(self) -> None:
        """A module that stopped the server and failed before starting it again (exit code 3:
        not running) must not fail the next module's tests."""
        status = subprocess.run(
            [*self.prefix, str(self.binaries / "pg_ctl"), "-D", str(self.data), "status"],
            capture_output=True,
        )
        if status.returncode == 3:
            self.pg_ctl("start")

    def close(self) -> None:
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

    def new_database(self) -> str:
        """The URL of a database no other test module has used (a fresh copy of template1)."""
        name = f"module_{next(self._databases)}"
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + f"/{name}"


@dataclass(frozen=True)
class ModuleDatabase:
    """What a test module sees: its own database (`url`) on the session's server, which it may
    restart, stop and start (the next module's tests find it running: see tests/conftest.py)."""

    server: PostgresServer
    url: str

    def restart(self) -> None:
        self.server.restart()

    def stop(self) -> None:
        self.server.pg_ctl("-m", "fast", "stop")

    def start(self) -> None:
        self.server.pg_ctl("start")
