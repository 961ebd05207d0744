"""`create_server()`: the WorkRail MCP server as one object, ready for any transport."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import mcp.server.mcpserver.server as sdk_server_module
from mcp.server import MCPServer
from mcp_types import Completion, CompletionArgument, CompletionContext

from workrail_engine import __version__
from workrail_engine.answers.model_loop import ModelLimits
from workrail_mcp.catalog_content import CatalogContent
from workrail_mcp.change_notices import ChangeNotices
from workrail_mcp.client_logs import ClientLogs
from workrail_mcp.client_roots import ClientRoots
from workrail_mcp.client_waits import ClientWaits
from workrail_mcp.completions import Completions
from workrail_mcp.input_rounds import InputRounds
from workrail_mcp.protocol import ProtocolMiddleware
from workrail_mcp.tool_tasks import ToolTasks
from workrail_mcp.tools import EDITIONS, ToolEnv, ToolRegistry
from workrail_mcp.tools.runs import RecoveryKick, RunsState

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["SERVER_NAME", "SERVER_TITLE", "TOOL_EDITIONS", "create_server"]

SERVER_NAME = "workflowlookup"  # the source specs' identifier
SERVER_TITLE = "WorkRail"

_INSTRUCTIONS = (
    "WorkRail serves step-by-step workflows for coding tasks. Find one with workflow_list (or "
    "list_workflows, which filters by category and counts the runs in progress). Two ways to "
    "follow one: (1) statelessly, for prompt steps you do in this conversation: call "
    "workflow_next (pass the ids of the steps you completed, appended in order, and the context "
    "the previous call returned), check each step's output with workflow_validate; (2) as a run, "
    "when the workflow has command steps or parameters or its state should be kept by the "
    "server: run_workflow returns a run id (wf-...); when it waits for you, do the step it shows "
    "and answer with continue_workflow; get_workflow_run and cancel_workflow take that run id, "
    "never a workflow id. Errors carry a code and data: -32001 unknown workflow (data.closest "
    "lists similar ids), -32002 invalid workflow file (data.diagnostics), -32003 unknown step, "
    "-32008 unknown run, -32602 bad arguments (data.details; data.closest for a misspelt name). "
    "(3) as a session, kept by the server across conversations: start_workflow returns the first "
    "step and a continueToken, continue_workflow {continueToken, output: {notesMarkdown}} answers "
    "it; checkpoint_workflow and resume_session pick a session up from another conversation."
)
_UPSTREAM_INSTRUCTIONS = (
    "WorkRail serves step-by-step workflows as sessions kept by the server. list_workflows shows "
    "them; start_workflow {workflowId, workspacePath, goal} returns the first pending step and a "
    "continueToken; do the step, then continue_workflow {continueToken, output: {notesMarkdown}} "
    "until isComplete. A blocked answer lists what to fix; send it again with retryContinueToken. "
    "To continue in another conversation: checkpoint_workflow, then resume_session and "
    "continue_workflow {continueToken: resumeToken, intent: rehydrate}."
)
TOOL_EDITIONS = tuple(EDITIONS)


@contextmanager
def _logging_left_as_configured() -> Iterator[None]:
    """Skip the SDK's logging set-up while an `MCPServer` is made, when it would do nothing.

    ``MCPServer()`` calls the SDK's ``configure_logging``: it imports rich (~20 ms of CPU, 2 % of
    a ``workrail-mcp`` start) to build a handler for ``logging.basicConfig``, which does nothing
    once the root logger has a handler — as ``workrail-mcp`` gives it before making the server.
    A program that made the server without configuring logging gets the SDK's set-up as before.
    """
    if not logging.getLogger().handlers:
        yield
        return
    configure = sdk_server_module.configure_logging
    sdk_server_module.configure_logging = lambda level="INFO": None
    try:
        yield
    finally:
        sdk_server_module.configure_logging = configure


def create_server(
    catalog: CatalogProtocol,
    *,
    allow_commands: bool = False,
    poll_seconds: float = 1.0,
    use_client_roots: bool = False,
    run_service: Any = None,
    tools_edition: str = "default",
    model_limits: ModelLimits | None = None,
    shared: bool = False,
) -> MCPServer:
    """An `MCPServer` named ``workflowlookup`` serving ``catalog`` (an engine `Catalog`).

    ``allow_commands`` lets the run tools execute command steps (off by default: an agent must
    not get a shell by asking). ``poll_seconds`` is how often the catalog is checked for
    changed workflow files, to tell clients their prompt and resource lists changed.
    ``use_client_roots`` takes the project directories from the client's roots (for a server
    with one client, i.e. stdio without an explicit project). ``run_service``: the process's
    `RunService`, when the dashboard shares it (one is made otherwise). ``tools_edition``:
    ``default`` or ``upstream`` (upstream WorkRail 3.x's session tools, names and shapes).
    ``shared``: the server has many clients (HTTP), so no client may list the sessions of
    another workspace than its own (docs/sessions.md, "Whose sessions a client sees").
    """

    runs = RunsState(catalog, allow_commands, service=run_service)
    # model_limits (--sampling): a session's steps may be answered by the client's model.
    env = ToolEnv(
        catalog=catalog,
        allow_commands=allow_commands,
        runs=runs,
        model_limits=model_limits,
        shared=shared,
    )
    registry = ToolRegistry(env)
    tools = [registry.add(spec) for spec in EDITIONS[tools_edition]]
    notices = ChangeNotices(catalog, poll_seconds=poll_seconds)
    logs = ClientLogs()

    async def call_for_task(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await registry.call_tool(name, arguments)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    tasks = ToolTasks(call_for_task, lambda: runs.service)
    waits = ClientWaits()
    rounds = InputRounds(sampling=model_limits is not None, waits=waits)

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        async with notices.running(), logs.forwarding(), tasks.running(), rounds.running():
            yield {}

    with _logging_left_as_configured():
        server: MCPServer = MCPServer(
            SERVER_NAME,
            title=SERVER_TITLE,
            description="WorkRail workflows for AI coding agents (Workflow Orchestration System MCP server)",
            instructions=_UPSTREAM_INSTRUCTIONS if tools_edition == "upstream" else _INSTRUCTIONS,
            version=__version__,
            tools=tools,
            subscriptions=notices.bus,
            lifespan=lifespan,
            log_level="WARNING",
        )

    completions = Completions(catalog)

    @server.completion()
    async def complete(
        ref: Any, argument: CompletionArgument, context: CompletionContext | None
    ) -> Completion:
        chosen = (context.arguments if context is not None else None) or {}
        found = await anyio.to_thread.run_sync(
            completions.complete,
            ref.model_dump(by_alias=True),
            argument.name,
            argument.value,
            chosen,
        )
        return Completion.model_validate(found)

    async def tool_names() -> list[str]:
        return [tool.name for tool in await server.list_tools()]

    info = {
        "name": server.name,
        "title": server.title,
        "version": server.version,
        "description": server.description,
    }
    roots = ClientRoots(catalog) if use_client_roots else None
    server.middleware.append(
        ProtocolMiddleware(
            registry,
            CatalogContent(catalog),
            notices,
            tool_names,
            info,
            roots,
            logs=logs,
            tasks=tasks,
            rounds=rounds,
            waits=waits,
        )
    )
    server.middleware.append(RecoveryKick(runs))
    return server
