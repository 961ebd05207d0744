"""How a plain tool function becomes an MCP tool, and how the same function is called directly.

A tool is a small typed function ``fn(env, **arguments) -> dict`` whose parameters are
``Annotated[..., Field(description=...)]``: the SDK turns them into the input schema and
validates calls against it. Here each function is wrapped twice over the same validation:
as an SDK `Tool` (``tools/call``) and as a direct JSON-RPC method (the source specs'
``{"method": "workflow_list"}``).

The SDK derives a tool's two JSON schemas from its signature with pydantic every time a server
is made: about half of what building our tools cost a ``workrail-mcp`` start. The schemas do not
change between starts, so ``tool_schemas.json`` records them (``python -m
workrail_mcp.tools.recorded``); a tool whose signature no longer matches its record is derived
as before, and a test fails while any record differs from what the SDK derives.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.from_thread
import anyio.to_thread
from mcp import MCPError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import ValidationError
from typing_extensions import is_typeddict

from workrail_engine.answers.model_loop import ModelLimits
from workrail_engine.errors import EngineError, InvalidParams, closest
from workrail_mcp.client_model import ClientModel
from workrail_mcp.confirmation import Person
from workrail_mcp.error_mapping import (
    as_json_text,
    describe_validation_error,
    engine_error_to_mcp,
    error_result,
    invalid_params,
    success_result,
)
from workrail_mcp.known_json import KnownJson

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol, WorkflowEntry

__all__ = ["ToolEnv", "ToolRegistry", "ToolSpec", "read_only", "writes"]

View = TypeVar("View")

RECORDED_SCHEMAS = Path(__file__).with_name("tool_schemas.json")


Progress = Callable[[float, float | None, str | None], Awaitable[None]]


def _unexpected(unknown: list[str], accepted: list[str]) -> MCPError:
    """Unknown argument names refused, with the accepted ones and the likeliest meant."""
    meant = {name: closest(name, accepted, n=1, cutoff=40.0) for name in unknown}
    hints = [f"{name!r} (did you mean {m[0]!r}?)" if m else repr(name) for name, m in meant.items()]
    return invalid_params(
        f"unexpected argument{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; "
        f"accepted: {', '.join(accepted) or 'none'}",
        unexpected=unknown,
        accepted=accepted,
        closest=sorted({m[0] for m in meant.values() if m}),
    )


def read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


def writes(title: str, *, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


@dataclass
class ToolEnv:
    """What a tool needs besides its arguments: the catalog and the runs layer's view."""

    catalog: CatalogProtocol
    allow_commands: bool = False
    # The run tools' state (`workrail_mcp.tools.runs.RunsState`); None in a server without runs.
    runs: Any = None
    # --sampling: the bounds of what a run may ask of the client's model (None: never asked).
    model_limits: ModelLimits | None = None
    # A server with many clients (HTTP): what one client may see of another's sessions is
    # narrower (resume_session cannot be widened past the caller's workspace).
    shared: bool = False
    _views: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False)

    def catalog_view(self, key: str, build: Callable[[list[WorkflowEntry]], View]) -> View:
        """``build(entries)``, computed once per catalog generation and then shared.

        Listing 10,000 workflows is the hot path of a big catalog; the catalog re-scans when a
        re-scan is due and bumps ``generation`` only when something changed. Callers must not
        modify the shared value.
        """
        cached = self._views.get(key)  # each key is always built by the same function
        if cached is not None:
            self.catalog.refresh()  # cheap unless a re-scan is due; skips sorting every entry again
            if cached[0] == self.catalog.generation:
                view: View = cached[1]
                return view
        entries = self.catalog.entries()
        generation = self.catalog.generation
        value = build(entries)
        self._views[key] = (generation, value)
        return value


@dataclass(frozen=True)
class ClientPeer:
    """What a request's client offers to ask on the server's behalf (None: it cannot)."""

    person: Person | None = None
    model: ClientModel | None = None


@dataclass(frozen=True)
class ToolSpec:
    fn: Callable[..., Mapping[str, Any]]
    name: str
    title: str
    description: str
    annotations: ToolAnnotations
    # Replaces the schema derived from the return annotation (e.g. a compact workflow shape).
    output_schema: dict[str, Any] | None = None
    # The function takes ``report=(done, total, message)``, called from its worker thread; it is
    # no argument of the tool (the client asks for progress with a token in ``_meta``).
    reports_progress: bool = False
    # The function takes ``confirm`` (the engine's way to ask a person to confirm a step), made
    # from the client's elicitation capability; None when the client cannot ask anyone.
    asks_person: bool = False
    # The function takes ``sample`` (the engine's way to ask the client's model), made when the
    # server runs with --sampling and the client offers sampling; None otherwise.
    samples: bool = False
    # How an anticipated failure is answered to ``tools/call`` (default: our numeric-code
    # envelope; the upstream edition answers in upstream's shape, `_upstream_errors`).
    error_result: Callable[[EngineError], CallToolResult] | None = None


class _Invoker:
    """Runs one tool function and shapes its answer; reuses the JSON text of a shared result.

    A tool that returns the very object it returned last time (a catalog view) is answered with
    the text made then, and that JSON is remembered in ``known`` for the stdio transport.
    """

    def __init__(self, spec: ToolSpec, env: ToolEnv, known: KnownJson) -> None:
        self.spec, self.env, self.known = spec, env, known
        self._last: tuple[Any, str | None] | None = None

    def _shared_text(self, result: Any) -> str | None:
        last = self._last
        if last is None or last[0] is not result:
            return None
        text = last[1] if last[1] is not None else as_json_text(result)
        self._last = (result, text)
        self.known.remember(result, lambda: text)
        return text

    def __call__(self, **arguments: Any) -> CallToolResult:
        try:
            result = _json_object(self.spec.fn(self.env, **arguments))
        except EngineError as error:
            if self.spec.error_result is not None:
                return self.spec.error_result(error)
            return error_result(error.code, error.message, error.data or None)
        text = self._shared_text(result)
        if text is None:
            text = as_json_text(result)
            self._last = (result, text)
        else:  # the text block of tools/call carries the same JSON once more, as a JSON string
            self.known.remember(text, lambda: json.dumps(text, ensure_ascii=False))
        return success_result(result, text=text)

    def direct(self, **arguments: Any) -> dict[str, Any]:
        """The bare result (direct method); its JSON is made only once the result proves shared."""
        result = _json_object(self.spec.fn(self.env, **arguments))
        if self._shared_text(result) is None:
            self._last = (result, None)
        return result


@dataclass
class _Bound:
    spec: ToolSpec
    tool: Tool
    invoke: _Invoker


# Parameters the server fills, not the client: progress reports, a person to confirm steps, the
# client's model.
_SERVER_SIDE = ("report", "confirm", "sample")


def _json_object(result: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's result as the JSON object it is: its declared type is a TypedDict, a dict at run
    time, passed on as it is (the JSON already made of a shared result is found by identity)."""
    if not isinstance(result, dict):
        raise TypeError(f"a tool returned {type(result).__name__}, not a JSON object")
    return result


def _client_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``fn``'s signature as the client sees it: without `env` (the first) and the server-side
    parameters, its annotations evaluated. Only the client's are: a server-side parameter's type
    may name what is loaded on first use (the sessions engine), which the server starts without."""

    def evaluated(annotation: Any) -> Any:
        if not isinstance(annotation, str):  # our modules use `from __future__ import annotations`
            return annotation
        return eval(annotation, fn.__globals__)  # our own source, as inspect.signature does

    signature = inspect.signature(fn)
    parameters = [
        p.replace(annotation=evaluated(p.annotation))
        for p in list(signature.parameters.values())[1:]
        if p.name not in _SERVER_SIDE
    ]
    return signature.replace(
        parameters=parameters, return_annotation=evaluated(signature.return_annotation)
    )


def client_function(spec: ToolSpec, invoke: Callable[..., Any]) -> Callable[..., Any]:
    """What the SDK binds: ``invoke`` under the tool's name, with the client's signature."""

    def run(**arguments: Any) -> Any:
        return invoke(**arguments)

    run.__signature__ = _client_signature(spec.fn)  # type: ignore[attr-defined]
    run.__name__ = spec.name
    return run


def record_key(spec: ToolSpec) -> str:
    """A tool function's name in ``tool_schemas.json`` (editions share functions)."""
    return f"{spec.fn.__module__}.{spec.fn.__qualname__}"


def signature_digest(fn: Callable[..., Any]) -> str:
    """What a record was made from: the parameters' names, annotations (their source text: our
    tool modules postpone annotations) and defaults, and the result's annotation. Cheap, unlike
    the evaluated signature's text; a change it does not see (a description constant, a field of
    the result's TypedDict) is caught by the test that compares every record with the SDK."""
    text = repr((fn.__annotations__, fn.__defaults__, fn.__kwdefaults__))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def derived_tool(spec: ToolSpec, run: Callable[..., Any]) -> Tool:
    """The SDK's own binding: both schemas derived from the signature by pydantic."""
    tool = Tool.from_function(
        run,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=spec.annotations,
        structured_output=True,
    )
    # The specs' schemas are closed; a misspelt argument should be an error, not ignored.
    tool.parameters["additionalProperties"] = False
    if spec.output_schema is not None:
        tool.fn_metadata.output_schema = spec.output_schema
    return tool


def _recorded_tool(spec: ToolSpec, run: Callable[..., Any], record: dict[str, Any]) -> Tool:
    """The same `Tool` as `derived_tool`, its schemas taken from the record.

    Only the argument model is built (calls are validated against it); the SDK builds the
    result's validator from ``output_model`` if it ever needs it (we answer ``tools/call``)."""
    result_type = run.__signature__.return_annotation  # type: ignore[attr-defined]
    metadata = FuncMetadata(
        arg_model=func_metadata(run, structured_output=False).arg_model,
        output_schema=spec.output_schema or record["outputSchema"],
        output_model=result_type,
    )
    return Tool(
        fn=run,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=record["inputSchema"],
        fn_metadata=metadata,
        is_async=False,
        annotations=spec.annotations,
    )


def _bind(spec: ToolSpec, invoke: _Invoker, records: dict[str, Any]) -> Tool:
    run = client_function(spec, invoke)
    record = records.get(record_key(spec))
    # A TypedDict result is the SDK's output model as it is; other results it wraps or converts.
    if (
        record is None
        or record["signature"] != signature_digest(spec.fn)
        or not is_typeddict(run.__signature__.return_annotation)  # type: ignore[attr-defined]
    ):
        return derived_tool(spec, run)
    return _recorded_tool(spec, run, record)


def recorded_schemas() -> dict[str, Any]:
    """``tool_schemas.json``, read anew for each registry (each server's tools own their dicts)."""
    try:
        return json.loads(RECORDED_SCHEMAS.read_bytes())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return {}


@dataclass
class ToolRegistry:
    """Our tools by name, bound to one environment."""

    env: ToolEnv
    known: KnownJson = field(default_factory=KnownJson)
    _tools: dict[str, _Bound] = field(default_factory=dict)
    _records: dict[str, Any] = field(default_factory=recorded_schemas, repr=False)

    def add(self, spec: ToolSpec) -> Tool:
        invoke = _Invoker(spec, self.env, self.known)
        tool = _bind(spec, invoke, self._records)
        self._tools[spec.name] = _Bound(spec, tool, invoke)
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def asks_client(self, name: str) -> bool:
        """Whether the tool may ask the client's side something (a person, a model)."""
        spec = self._tools[name].spec
        return spec.asks_person or spec.samples

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """Validated keyword arguments, or `MCPError(-32602)` with readable details."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise invalid_params(
                f"arguments of {name} must be an object, not {type(arguments).__name__}"
            )
        tool = self._tools[name].tool
        accepted = sorted(tool.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - set(accepted))
        if unknown:
            raise _unexpected(unknown, accepted)
        try:
            return tool.fn_metadata.validate_arguments(dict(arguments))
        except ValidationError as error:
            raise invalid_params(describe_validation_error(error)) from None

    def _progress(self, name: str, kwargs: dict[str, Any], progress: Progress | None) -> None:
        """Hand a progress-reporting tool a ``report`` that it can call from its thread."""
        if not self._tools[name].spec.reports_progress:
            return
        if progress is None:
            kwargs["report"] = None
            return

        def report(done: float, total: float | None, message: str | None) -> None:
            anyio.from_thread.run(partial(progress, done, total, message))

        kwargs["report"] = report

    def _peer(self, name: str, kwargs: dict[str, Any], peer: ClientPeer | None) -> None:
        """Hand the tool what it may ask of the client's side: a person, a model."""
        spec = self._tools[name].spec
        if spec.asks_person:
            person = peer.person if peer is not None else None
            kwargs["confirm"] = None if person is None else person.confirm_from_thread()
        if spec.samples:
            model = peer.model if peer is not None and self.env.model_limits else None
            kwargs["sample"] = None if model is None else model.ask_from_thread()

    async def call_tool(
        self,
        name: str,
        arguments: Any,
        progress: Progress | None = None,
        peer: ClientPeer | None = None,
    ) -> CallToolResult:
        """A ``tools/call`` answered here, without the SDK's per-call conversions.

        Same validation and same function as the SDK path; what it saves is re-validating and
        re-dumping the result several times, which dominates for large results (10,000 workflows).
        """
        try:
            kwargs = self.validate(name, arguments)
        except MCPError as error:
            shape = self._tools[name].spec.error_result
            if shape is not None:  # the tool's own error shape, for bad arguments too
                data = error.error.data if isinstance(error.error.data, dict) else {}
                return shape(InvalidParams(error.error.message, **data))
            return error_result(error.error.code, error.error.message, error.error.data)
        self._progress(name, kwargs, progress)
        self._peer(name, kwargs, peer)
        return await anyio.to_thread.run_sync(partial(self._tools[name].invoke, **kwargs))

    async def call_direct(
        self,
        name: str,
        arguments: Any,
        progress: Progress | None = None,
        peer: ClientPeer | None = None,
    ) -> dict[str, Any]:
        """The bare result, or `MCPError` with the spec code (the direct-method path)."""
        kwargs = self.validate(name, arguments)
        self._progress(name, kwargs, progress)
        self._peer(name, kwargs, peer)
        try:
            return await anyio.to_thread.run_sync(
                partial(self._tools[name].invoke.direct, **kwargs)
            )
        except EngineError as error:
            raise engine_error_to_mcp(error) from None
