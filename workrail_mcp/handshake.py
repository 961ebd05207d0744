"""The `initialize` rules of the handshake spec, checked before the SDK negotiates.

- no ``protocolVersion`` → −32602 with ``data.details``;
- a version that is not a ``YYYY-MM-DD`` date, or is older than the oldest we speak →
  −32000 "Unsupported protocol version" with ``data: {supportedVersions, requestedVersion}``;
- anything else goes on to the SDK, which echoes a version it knows and answers a newer
  unknown date with its latest (the MCP negotiation rule, so newer clients keep working).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from mcp import MCPError
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, OLDEST_SUPPORTED_VERSION

from workrail_mcp.error_mapping import invalid_params

__all__ = ["UNSUPPORTED_VERSION", "check_initialize", "default_client_info", "is_date_version"]

UNSUPPORTED_VERSION = -32000


def is_date_version(value: str) -> bool:
    if len(value) != 10:
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def check_initialize(params: Mapping[str, Any] | None) -> None:
    params = params or {}
    if "protocolVersion" not in params:
        raise invalid_params("protocolVersion is required")
    requested = params["protocolVersion"]
    if not isinstance(requested, str):
        raise invalid_params(f"protocolVersion must be a string, not {type(requested).__name__}")
    if not is_date_version(requested) or requested < OLDEST_SUPPORTED_VERSION:
        raise MCPError(
            code=UNSUPPORTED_VERSION,
            message="Unsupported protocol version",
            data={
                "supportedVersions": list(KNOWN_PROTOCOL_VERSIONS),
                "requestedVersion": requested,
            },
        )
    if not isinstance(params.get("capabilities", {}), Mapping):
        raise invalid_params("capabilities must be an object")


_ANONYMOUS_CLIENT = {"name": "unnamed-client", "version": "0"}


def default_client_info(params: Any) -> None:
    """The handshake spec makes ``clientInfo`` optional; the SDK requires it.

    The SDK reads these very params again after the middleware chain (to commit the handshake),
    so the default is filled in place rather than in a copy.
    """
    if isinstance(params, dict) and "clientInfo" not in params:
        params["clientInfo"] = dict(_ANONYMOUS_CLIENT)
