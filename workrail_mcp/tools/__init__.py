"""The MCP tools, each a small typed function over the engine, grouped by source spec."""

from workrail_mcp.tools._binding import ToolEnv, ToolRegistry, ToolSpec, read_only, writes
from workrail_mcp.tools.authoring import SPECS as AUTHORING_SPECS
from workrail_mcp.tools.orchestrator import SPECS as ORCHESTRATOR_SPECS
from workrail_mcp.tools.runs import SPECS as RUN_SPECS
from workrail_mcp.tools.sessions import SPECS as SESSION_SPECS
from workrail_mcp.tools.workflows import SPECS as WORKFLOW_SPECS

__all__ = ["ALL_SPECS", "ToolEnv", "ToolRegistry", "ToolSpec", "read_only", "writes"]

ALL_SPECS: list[ToolSpec] = [
    *WORKFLOW_SPECS,
    *ORCHESTRATOR_SPECS,
    *RUN_SPECS,
    *SESSION_SPECS,
    *AUTHORING_SPECS,
]
