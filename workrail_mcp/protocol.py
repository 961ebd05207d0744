"""The protocol middleware: what design §5 asks beyond the SDK's defaults.

It sits in front of every request, before the SDK's method lookup and argument validation:
- ``initialize``: the handshake spec's version rules; advertises prompt/resource list changes;
- direct calls of tool names as JSON-RPC methods (the source specs' style) → bare results;
- ``tools/call``: unknown tool names → −32602; bad arguments → an ``isError`` result with
  −32602 and readable ``details`` (the model can correct itself);
- ``resources/*`` and ``prompts/*`` for workflows → answered from the catalog;
- every error leaves with a spec code: −32601 names the method in ``data``, pydantic's
  validation errors become readable ``details``, and an unexpected exception becomes
  −32603 without its text;
- nesting: a request's params deeper than the engine's ``MAX_NESTING`` are refused with −32602
  before anything reads them, and a result too deep to serialize becomes −32603 here, where the
  request can still be answered (on HTTP the SDK serializes it where a failure cannot be caught).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
from mcp import MCPError
from mcp_types import SERVER_INFO_META_KEY, CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from workrail_engine.errors import EngineError, closest
from workrail_engine.evaluation.problems import pointer_join
from workrail_engine.limits import MAX_NESTING, nesting_exceeded
from workrail_mcp.catalog_content import CatalogContent
from workrail_mcp.change_notices import ChangeNotices
from workrail_mcp.client_logs import ClientLogs
from workrail_mcp.client_model import model_of
from workrail_mcp.client_roots import ClientRoots
from workrail_mcp.client_waits import ClientWaits
from workrail_mcp.confirmation import person_of
from workrail_mcp.error_mapping import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    describe_validation_error,
    engine_error_to_mcp,
    invalid_params,
)
from workrail_mcp.handshake import check_initialize, default_client_info
from workrail_mcp.input_rounds import InputRounds
from workrail_mcp.tool_tasks import TASK_TOOLS, TASKS_SINCE, ToolTasks
from workrail_mcp.tools import ToolRegistry
from workrail_mcp.tools.binding import ClientPeer

__all__ = ["ProtocolMiddleware"]

logger = logging.getLogger(__name__)

# The SDK's serializer (pydantic-core) refuses values nested 255 levels or more. Inputs are bounded
# by MAX_NESTING, so results that echo them stay far below this; the check is the last guard.
_RESULT_NESTING = 200

_ROOTS_MAY_HAVE_CHANGED = ("notifications/initialized", "notifications/roots/list_changed")
_STRUCTURED_SINCE = "2025-06-18"  # structuredContent and outputSchema exist from this revision on
_NOT_INITIALIZED = (
    "the server is not initialized: send initialize (and notifications/initialized) first"
)


def _is_modern(ctx: Any) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _initialized(ctx: Any) -> bool:
    return _is_modern(ctx) or ctx.session.client_params is not None


def _require_initialized(ctx: Any) -> None:
    if not _initialized(ctx):
        raise MCPError(
            code=INVALID_PARAMS,
            message="Server not initialized",
            data={"details": _NOT_INITIALIZED},
        )


def _finish(result: dict[str, Any], ctx: Any, server_info: dict[str, Any]) -> dict[str, Any]:
    """The 2026-07-28 envelope the SDK adds to results it serializes (we answered without it)."""
    if _is_modern(ctx):
        result.setdefault("resultType", "complete")
        result.setdefault("_meta", {SERVER_INFO_META_KEY: dict(server_info)})
    return result


def _dump_tool_result(
    result: CallToolResult, ctx: Any, server_info: dict[str, Any]
) -> dict[str, Any]:
    """The wire form, built by hand: dumping a 10,000-workflow result through pydantic is slow."""
    wire: dict[str, Any] = {
        "content": [{"type": "text", "text": block.text} for block in result.content]
    }  # type: ignore[union-attr]
    if result.is_error:
        wire["isError"] = True
    elif result.structured_content is not None and ctx.protocol_version >= _STRUCTURED_SINCE:
        wire["structuredContent"] = result.structured_content
    return _finish(wire, ctx, server_info)


def _advertise(result: Any, *, logging: bool) -> Any:
    """List changes of prompts and resources, logging when this server forwards its logs, and
    task-augmented tools/call on the revision that has tasks."""
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    if isinstance(capabilities, dict):
        if result.get("protocolVersion") == TASKS_SINCE:
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        for key in ("prompts", "resources"):
            if isinstance(capabilities.get(key), dict):
                capabilities[key]["listChanged"] = True
        if logging:
            capabilities.setdefault("logging", {})
    return result


def _offer_tasks(result: Any) -> None:
    """The run tools may be called as tasks (2025-11-25): ``execution.taskSupport``."""
    for tool in result.get("tools", []) if isinstance(result, dict) else []:
        if isinstance(tool, dict) and tool.get("name") in TASK_TOOLS:
            tool["execution"] = {"taskSupport": "optional"}


def _bounded(result: Any, method: str) -> Any:
    """The result, unless it is too deeply nested for the transport to write (−32603 then)."""
    if nesting_exceeded(result, _RESULT_NESTING) is None:
        return result
    logger.error(
        "the result of %r is nested deeper than %d levels: not sent", method, _RESULT_NESTING
    )
    raise MCPError(
        code=INTERNAL_ERROR,
        message="Internal error",
        data={"details": f"the result is nested deeper than {_RESULT_NESTING} levels"},
    )


def _refine(error: MCPError, ctx: Any) -> MCPError:
    data = error.error.data
    if error.error.code == METHOD_NOT_FOUND and not isinstance(data, dict):
        return MCPError(
            code=METHOD_NOT_FOUND, message="Method not found", data={"method": ctx.method}
        )
    if error.error.code == INVALID_PARAMS and data in ("", None):
        if not _initialized(ctx) and ctx.method != "initialize":
            return MCPError(
                code=INVALID_PARAMS,
                message="Server not initialized",
                data={"details": _NOT_INITIALIZED},
            )
        return invalid_params(f"invalid params for {ctx.method}")
    return error


class ProtocolMiddleware:
    def __init__(
        self,
        registry: ToolRegistry,
        content: CatalogContent,
        notices: ChangeNotices,
        list_tool_names: Callable[[], Awaitable[list[str]]],
        server_info: dict[str, Any],
        roots: ClientRoots | None = None,
        *,
        logs: ClientLogs | None = None,
        tasks: ToolTasks | None = None,
        rounds: InputRounds | None = None,
        waits: ClientWaits | None = None,
    ) -> None:
        self.server_info = server_info
        # The calls waiting for their client's reply, on every revision (shared with `rounds`).
        self.waits = waits if waits is not None else ClientWaits()
        self.rounds = rounds
        self.logs = logs
        self.tasks = tasks
        self.roots = roots
        self.registry = registry
        self.content = content
        self.notices = notices
        self._list_tool_names = list_tool_names
        self._tool_names: list[str] | None = None

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.request_id is None:
            if ctx.method == "notifications/initialized" and not _is_modern(ctx):
                self.notices.add_session(ctx.session)
            result = await call_next(ctx)
            if (
                self.roots is not None
                and ctx.method in _ROOTS_MAY_HAVE_CHANGED
                and not _is_modern(ctx)
            ):
                await self.roots.adopt(ctx.session)
            return result
        too_deep = nesting_exceeded(ctx.params, MAX_NESTING)
        if too_deep is not None:
            raise invalid_params(
                f"params are nested deeper than {MAX_NESTING} levels (objects and arrays "
                f"inside one another), at {pointer_join('', *too_deep)}"
            )
        try:
            return _bounded(await self._route(ctx, call_next), ctx.method)
        except MCPError as error:
            raise _refine(error, ctx) from None
        except EngineError as error:
            raise engine_error_to_mcp(error) from None
        except ValidationError as error:
            raise invalid_params(describe_validation_error(error)) from None
        except Exception:
            logger.exception("request %r failed", ctx.method)
            raise MCPError(code=INTERNAL_ERROR, message="Internal error") from None

    def _peer(self, ctx: Any) -> ClientPeer:
        return ClientPeer(person=person_of(ctx, self.waits), model=model_of(ctx, self.waits))

    async def _route(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        method = ctx.method
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if method == "initialize":
            check_initialize(ctx.params)
            default_client_info(ctx.params)
            return _advertise(await call_next(ctx), logging=self.logs is not None)
        if method == "logging/setLevel" and self.logs is not None and not _is_modern(ctx):
            _require_initialized(ctx)
            return self.logs.set_level(ctx, ctx.params)
        if method in self.registry:
            _require_initialized(ctx)
            arguments = ctx.params
            if isinstance(
                arguments, dict
            ):  # `_meta` is the envelope (progress token, version), not an argument
                arguments = {k: v for k, v in arguments.items() if k != "_meta"}
            return await self.registry.call_direct(
                method, arguments, progress=ctx.session.report_progress, peer=self._peer(ctx)
            )
        if self.tasks is not None and ctx.protocol_version == TASKS_SINCE:
            answered = await self._task_method(ctx, method, params)
            if answered is not None:
                return answered
        if method == "tools/call":
            screened = await self._screen_tool_call(ctx, params)
            return screened if screened is not None else await call_next(ctx)
        # The catalog may re-scan the disk when asked: off the event loop, like the tools.
        if method == "resources/read" and self.content.owns_uri(params.get("uri")):
            _require_initialized(ctx)
            read = await anyio.to_thread.run_sync(self.content.read, params["uri"])
            return _finish(read, ctx, self.server_info)
        if method == "prompts/get" and isinstance(params.get("name"), str):
            _require_initialized(ctx)
            prompt = await anyio.to_thread.run_sync(
                self.content.get_prompt, params["name"], params.get("arguments")
            )
            return _finish(prompt, ctx, self.server_info)
        result = await call_next(ctx)
        if (
            method == "tools/list"
            and self.tasks is not None
            and ctx.protocol_version == TASKS_SINCE
        ):
            _offer_tasks(result)
        return await self._extend_list(method, result)

    async def _task_method(self, ctx: Any, method: str, params: dict[str, Any]) -> Any:
        """tasks/* and a task-augmented tools/call of a run tool; None for anything else."""
        assert self.tasks is not None
        if method == "tools/call" and "task" in params and params.get("name") in TASK_TOOLS:
            _require_initialized(ctx)
            arguments = params.get("arguments") or {}
            self.registry.validate(params["name"], arguments)  # bad arguments: no task
            return self.tasks.start(ctx, params["name"], arguments, params["task"])
        if not method.startswith("tasks/"):
            return None
        _require_initialized(ctx)
        if method == "tasks/get":
            return self.tasks.get(ctx, params)
        if method == "tasks/list":
            return self.tasks.list(ctx)
        if method == "tasks/result":
            return await self.tasks.result(ctx, params)
        if method == "tasks/cancel":
            return await self.tasks.cancel(ctx, params)
        return None

    async def _extend_list(self, method: str, result: Any) -> Any:
        key, extra = {
            "resources/list": ("resources", self.content.resources),
            "resources/templates/list": ("resourceTemplates", self.content.templates),
            "prompts/list": ("prompts", self.content.prompts),
        }.get(method, (None, None))
        if key and extra and isinstance(result, dict):
            result[key] = [*result.get(key, []), *await anyio.to_thread.run_sync(extra)]
        return result

    async def _screen_tool_call(self, ctx: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        name = params.get("name")
        if not isinstance(name, str):
            return None  # the SDK's own params validation answers this one
        _require_initialized(ctx)
        if self._tool_names is None:
            self._tool_names = await self._list_tool_names()
        if name not in self._tool_names:
            raise invalid_params(
                f"Unknown tool {name!r}; available: {', '.join(self._tool_names)}",
                tool=name,
                closest=closest(name, self._tool_names),
            )
        if name not in self.registry:
            return None

        async def call(peer: ClientPeer) -> dict[str, Any]:
            result = await self.registry.call_tool(
                name, params.get("arguments"), progress=ctx.session.report_progress, peer=peer
            )
            return _dump_tool_result(result, ctx, self.server_info)

        if self.rounds is not None and _is_modern(ctx) and self.registry.asks_client(name):
            # 2026-07-28: what the tool asks its client rides input_required results.
            answered = await self.rounds.call(ctx, params, call)
            if answered is not None:
                return _finish(answered, ctx, self.server_info)
        return await call(self._peer(ctx))
