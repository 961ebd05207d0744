"""Session tokens: opaque, signed with the store's key, naming a session and one step attempt.

A token is a prefix that says what it may do and 32 base64url characters: the kind, the session's
run id and the step attempt it names (11 bytes), and the first 13 bytes of their HMAC-SHA256 under
the store's key. It carries no goal, notes, context or secret — only which session and which
attempt. A token altered by one character, or signed by another store, fails the signature check
(`SessionTokenError` with ``reason: TOKEN_BAD_SIGNATURE``).

- ``ct_`` continue: answer the attempt it names (or re-read the session);
- ``ck_`` checkpoint: ask for a resume token at the attempt it names;
- ``st_`` resume: re-read the session from another conversation; it cannot advance it.

A re-read of a step the session has moved past hands out a *fork* token: a ``ct_`` whose payload
also names the branch that advancing it creates (6 more bytes: ``ct_`` + 40 characters). The
branch id is drawn at the re-read, so each re-read offers a branch of its own, and a fork token
sent again (a retry after a lost reply) finds the branch it made.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass

from ..errors import InvalidParams

__all__ = ["KINDS", "SessionToken", "SessionTokenError", "read_token", "sign_token"]

KINDS = {"continue": "ct_", "checkpoint": "ck_", "resume": "st_"}
_KIND_BYTE = {"continue": 1, "checkpoint": 2, "resume": 3}
_MAC_BYTES = 13
_RUN_ID = re.compile(r"^wf-([0-9a-f]{12})$")
_BODY = re.compile(r"^[A-Za-z0-9_-]{32}(?:[A-Za-z0-9_-]{8})?$")
_FORK_BYTE = 4  # a continue token that branches: kind, parent, attempt, branch
_PAYLOAD = 11
_FORK_PAYLOAD = 17


class SessionTokenError(InvalidParams):
    """A token that is malformed, forged, from another store, or used for what it cannot do.
    ``data.reason``: TOKEN_INVALID_FORMAT, TOKEN_BAD_SIGNATURE or TOKEN_SCOPE_MISMATCH."""


@dataclass(frozen=True)
class SessionToken:
    kind: str  # continue | checkpoint | resume
    run_id: str
    attempt: int
    # A fork token's branch: the session that advancing it creates (or created), from
    # ``run_id`` at ``attempt``. None for every other token.
    branch: str | None = None


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()[:_MAC_BYTES]


def _id_bytes(run_id: str) -> bytes:
    match = _RUN_ID.match(run_id)
    if match is None:
        raise ValueError(f"not a session id: {run_id!r}")
    return bytes.fromhex(match.group(1))


def sign_token(
    key: bytes, kind: str, run_id: str, attempt: int, *, branch: str | None = None
) -> str:
    """A signed token; ``branch`` (continue tokens only) makes it a fork token."""
    kind_byte = _KIND_BYTE[kind] if branch is None else _FORK_BYTE
    if branch is not None and kind != "continue":
        raise ValueError("only a continue token can branch a session")
    payload = bytes([kind_byte]) + _id_bytes(run_id) + attempt.to_bytes(4, "big")
    if branch is not None:
        payload += _id_bytes(branch)
    body = base64.urlsafe_b64encode(payload + _mac(key, payload)).decode("ascii")
    return KINDS[kind] + body


def read_token(key: bytes, token: str) -> SessionToken:
    """The session and attempt a token names, after checking its signature."""
    prefix, body = token[:3], token[3:]
    kind = next((k for k, p in KINDS.items() if p == prefix), None)
    if kind is None or not _BODY.match(body):
        raise SessionTokenError(
            "this is not a session token (ct_…, ck_… or st_… as a session tool returned it); "
            "pass the token exactly as received, or search for the session to resume it",
            reason="TOKEN_INVALID_FORMAT",
        )
    try:
        raw = base64.urlsafe_b64decode(body)
    except (binascii.Error, ValueError):
        raw = b""
    payload, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
    if len(payload) not in (_PAYLOAD, _FORK_PAYLOAD) or not hmac.compare_digest(
        mac, _mac(key, payload)
    ):
        raise SessionTokenError(
            "this token's signature does not match: it was altered, or issued by another run "
            "store (another WORKRAIL_HOME or database). Pass the token exactly as received, or "
            "search for the session again to resume it",
            reason="TOKEN_BAD_SIGNATURE",
        )
    forks = kind == "continue" and payload[0] == _FORK_BYTE and len(payload) == _FORK_PAYLOAD
    if not forks and (payload[0] != _KIND_BYTE[kind] or len(payload) != _PAYLOAD):
        raise SessionTokenError(
            "this token's prefix does not match its kind: pass it exactly as received",
            reason="TOKEN_BAD_SIGNATURE",
        )
    return SessionToken(
        kind,
        "wf-" + payload[1:7].hex(),
        int.from_bytes(payload[7:11], "big"),
        "wf-" + payload[11:17].hex() if forks else None,
    )
