"""One durable run store per test session (DBOS is one per process), in a temporary home. (The
PostgreSQL server of the Postgres configuration's tests is tests/conftest.py's `postgres_url`.)"""

from __future__ import annotations

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
