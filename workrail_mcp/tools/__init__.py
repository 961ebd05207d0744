"""The MCP tools, each a small typed function over the engine, grouped by source spec.

Two editions come from these specs: the default (the specs' tools, the run tools and the session
tools whose names clash with nothing) and ``upstream`` (upstream WorkRail 3.x's session tools).
"""

from dataclasses import replace

from workrail_mcp.tools.authoring import SPECS as AUTHORING_SPECS
from workrail_mcp.tools.binding import ToolEnv, ToolRegistry, ToolSpec, read_only, writes
from workrail_mcp.tools.orchestrator import SPECS as ORCHESTRATOR_SPECS
from workrail_mcp.tools.runs import SPECS as RUN_SPECS
from workrail_mcp.tools.sessions import SPECS as SESSION_SPECS
from workrail_mcp.tools.upstream import UPSTREAM_SPECS
from workrail_mcp.tools.workflows import SPECS as WORKFLOW_SPECS

__all__ = [
    "ALL_SPECS",
    "EDITIONS",
    "ToolEnv",
    "ToolRegistry",
    "ToolSpec",
    "UPSTREAM_SPECS",
    "read_only",
    "writes",
]

# Where the default edition has two tools for one job, each description names the other (the
# session tools' own descriptions already do).
_SIBLINGS = {
    "run_workflow": "(start_workflow starts a session instead: no command steps, kept across "
    "conversations with tokens, found again with resume_session.)",
    "workflow_get": "(inspect_workflow gives the content hash a session pins.)",
    "workflow_next": "(start_workflow starts a session instead: the server keeps your progress "
    "and notes, checks each answer, and finds it again from another conversation.)",
}


def _with_sibling(spec: ToolSpec) -> ToolSpec:
    extra = _SIBLINGS.get(spec.name)
    return replace(spec, description=f"{spec.description} {extra}") if extra else spec


ALL_SPECS: list[ToolSpec] = [
    _with_sibling(spec)
    for spec in [*WORKFLOW_SPECS, *ORCHESTRATOR_SPECS, *RUN_SPECS, *SESSION_SPECS, *AUTHORING_SPECS]
]

# ``workrail-mcp --tools NAME`` (or WORKRAIL_TOOLS=NAME): the tools/list each edition serves.
EDITIONS: dict[str, list[ToolSpec]] = {"default": ALL_SPECS, "upstream": UPSTREAM_SPECS}
