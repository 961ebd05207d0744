"""Settings shared by the whole suite."""

import os
import ssl
from collections.abc import Iterator

import httpcore2
import pytest
from hypothesis import HealthCheck, settings
from postgres_server import ModuleDatabase, PostgresServer
from suite_bytecode import compile_the_packages, rewrite_the_plugins, rewrite_the_tests
from suite_order import in_dispatch_order
from system_packages import opt_in

# CI runs on a 2-core machine alongside real server processes: generation speed is not what the
# property tests check, so a slow moment must not fail them.
settings.register_profile("workrail", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("workrail")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the xdist controller (or a run without workers)
        compile_the_packages()
        rewrite_the_tests(config)
        rewrite_the_plugins(config)


@pytest.fixture(autouse=True, scope="session")
def _one_tls_context_for_every_http_client() -> Iterator[None]:
    """Each httpx2 client — the tests' own and the MCP SDK's, one per HTTP connection a test opens —
    built its TLS context anew, reading the system's whole CA bundle (≈ 27 ms of CPU each, about
    220 a run), though every test speaks plain HTTP to a local server. httpcore2's own default
    context, built once per set of the variables it reads, serves them all: what a client
    verifies does not change."""
    build = httpcore2.default_ssl_context
    built: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}

    def default_ssl_context(*, _trust_env: bool = True) -> ssl.SSLContext:
        read = (_trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if read not in built:
            built[read] = build(_trust_env=_trust_env)
        return built[read]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpcore2, "default_ssl_context", default_ssl_context)
        yield


@pytest.fixture(autouse=True)
def _a_workrail_home_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the real ~/.workrail: an in-process server finding a run store
    there would open it (DBOS is one per process, so a later test's own store would then be
    refused), and whether one exists depends on the machine and on the order tests run in."""
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path_factory.mktemp("workrail-home")))
    monkeypatch.delenv("WORKRAIL_DATABASE_URL", raising=False)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresServer]:
    """One PostgreSQL server per test session, that is per pytest-xdist worker: starting one (initdb,
    then the server) cost ≈ 1 s of CPU and several seconds of wall time under load, and seven
    modules each started their own. Opt-in (system_packages.SWITCHES)."""
    opt_in("WORKRAIL_TESTS_POSTGRES")
    server = PostgresServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def postgres_server(postgres_cluster: PostgresServer) -> ModuleDatabase:
    """A database of its own for each test module (what a server per module gave: no run, queue
    entry or executor row left by another module), on the session's server."""
    postgres_cluster.start_if_stopped()
    return ModuleDatabase(postgres_cluster, postgres_cluster.new_database())


@pytest.fixture(scope="module")
def postgres_url(postgres_server: ModuleDatabase) -> str:
    return postgres_server.url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    in_dispatch_order(items)
