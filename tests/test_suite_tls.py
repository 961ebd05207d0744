"""The test processes' HTTP clients share one TLS context (tests/conftest.py): building one reads
the system's CA bundle, ≈ 27 ms of CPU, once per client before."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpcore2
import httpx2
import pytest


def test_two_clients_are_built_with_one_context() -> None:
    with httpx2.Client(), httpx2.Client():
        pass
    assert httpcore2.default_ssl_context() is httpcore2.default_ssl_context()


def test_a_client_built_under_another_ca_file_gets_a_context_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = ssl.get_default_verify_paths().openssl_cafile
    if not Path(bundle).is_file():
        pytest.skip(f"no CA bundle at {bundle} to name in SSL_CERT_FILE")
    before = httpcore2.default_ssl_context()
    monkeypatch.setenv("SSL_CERT_FILE", bundle)
    named = httpcore2.default_ssl_context()
    assert named is not before and named is httpcore2.default_ssl_context()
