"""The MCP handshake as raw JSON-RPC messages, for the tests that write lines or HTTP bodies
themselves (the others use the SDK's client)."""

from __future__ import annotations

from typing import Any

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}

# The lifecycle spec's own example: Claude Desktop on 2024-11-05, the oldest version the server
# speaks (it has no structuredContent, so the tests replaying it see text only).
SPEC_EXAMPLE_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}},
        "clientInfo": {"name": "claude-desktop", "version": "1.0.0"},
    },
}
