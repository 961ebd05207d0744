"""End-to-end harness: the real ``workrail-lsp`` process, driven by pytest-lsp with the client
capabilities VS Code and Neovim actually send (captured by pytest-lsp), cursor positions marked
with ``|`` in the document text. Helpers live in ``lsp_harness``.
"""

from __future__ import annotations

import pytest
import pytest_lsp
from lsp_harness import (
    CLIENTS,
    SERVER,
    Session,
    answer_registrations,
    initialize_params,
    record_publications,
)
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest_lsp.fixture(
    scope="module", params=list(CLIENTS), config=ClientServerConfig(server_command=SERVER)
)
async def lsp(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    tmp_path_factory: pytest.TempPathFactory,
):
    root = tmp_path_factory.mktemp(f"ws-{request.param}")
    published = record_publications(lsp_client)
    registrations = answer_registrations(lsp_client)
    await lsp_client.initialize_session(initialize_params(request.param, root))
    session = Session(lsp_client, request.param, root, published, registrations)
    lsp_client.workrail_session = session  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def session(lsp: LanguageClient) -> Session:
    """One server per test module and client kind (VS Code's and Neovim's capabilities)."""
    return lsp.workrail_session  # type: ignore[attr-defined]
