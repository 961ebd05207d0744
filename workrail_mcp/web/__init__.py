"""The web host: the port that `workrail-mcp --transport http` and `workrail dashboard` serve on,
and the rules every app mounted there keeps alike.

`WebHost.open` binds the port (a `ListenError` of one line when it cannot be had) and reads the
token (`TOKEN_ENV`); `HostRules` are the Host/Origin names it answers as; `BearerTokenGate`,
`bearer_authorized`, `limited` (a body cap) and `client_key` (whose request) are what an app
asks of a request; `RequestDeadlineProtocol` closes a connection whose headers or body are too
slow; `PathDispatch` mounts one app beside another; `shared_server_options` are the commands'
options. The MCP endpoint (`workrail_mcp.http`) and the dashboard (`workrail_mcp.dashboard`) are
apps on it; nothing here speaks MCP.

The names load their module on first use: the options are read before anything is served, and
`--help` stays without uvicorn and the SDK.
"""

from typing import TYPE_CHECKING

from workrail_engine.lazy_names import names_loaded_on_first_use

if TYPE_CHECKING:
    from workrail_mcp.web.access import (
        TOKEN_ENV,
        BearerTokenGate,
        HostRules,
        bearer_authorized,
        client_key,
        limited,
    )
    from workrail_mcp.web.host import PathDispatch, WebHost
    from workrail_mcp.web.listener import ListenError, RequestDeadlineProtocol
    from workrail_mcp.web.options import (
        BODY_TIMEOUT_SECONDS,
        HEADER_TIMEOUT_SECONDS,
        shared_server_options,
    )

_MODULE_OF = {
    "TOKEN_ENV": "access",
    "BearerTokenGate": "access",
    "HostRules": "access",
    "bearer_authorized": "access",
    "client_key": "access",
    "limited": "access",
    "PathDispatch": "host",
    "WebHost": "host",
    "ListenError": "listener",
    "RequestDeadlineProtocol": "listener",
    "BODY_TIMEOUT_SECONDS": "options",
    "HEADER_TIMEOUT_SECONDS": "options",
    "shared_server_options": "options",
}

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "HEADER_TIMEOUT_SECONDS",
    "TOKEN_ENV",
    "BearerTokenGate",
    "HostRules",
    "ListenError",
    "PathDispatch",
    "RequestDeadlineProtocol",
    "WebHost",
    "bearer_authorized",
    "client_key",
    "limited",
    "shared_server_options",
]

__getattr__ = names_loaded_on_first_use(__name__, _MODULE_OF)
