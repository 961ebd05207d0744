"""``create_language_server()``: a pygls server whose handlers only translate to feature functions.

Each LSP method gets one thin handler here; the work lives in one module per feature
(diagnostics, completion, hover, symbols, navigation, rename, code_actions, formatting), all
reading the shared per-version ``DocumentState``. A failing feature is logged and answers
nothing; it never takes the server or another feature down.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from . import tracing
from .configuration import (
    FIX_ALL_KIND,
    IS_WORKFLOW,
    PREVIEW_STEPS,
    SECTION,
    SEMANTIC_TOKEN_TYPES,
    VALIDATE_WORKSPACE,
    Settings,
)
from .disk_files import read_unopened
from .idle_work import IdleWork
from .protocol import AnsweringProtocol

if TYPE_CHECKING:
    from workrail_engine.text.document import WorkflowDocument

    from .diagnostics import DiagnosticsStore
    from .documents import DocumentState, DocumentStates
    from .workspace_index import WorkspaceIndex

# Feature modules (and through them the engine's schema, lint and tree-sitter) are imported on
# first use, not at start-up: a client waits for the process to answer ``initialize``.
_FEATURES = (
    "code_actions code_lens completion folding formatting highlights hover inlay_hints links navigation "
    "rename selection semantic_tokens symbols workspace_symbols workspace_validation"
).split()


def feature(name: str) -> Any:
    """The feature module ``name`` of this package, imported the first time it is needed."""
    assert name in _FEATURES, name
    return importlib.import_module(f"{__package__}.{name}")


__all__ = ["WorkrailLanguageServer", "create_language_server"]

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
_PUSH_DELAY = 0.05  # coalesces a burst of edits in push mode only; pull is never delayed
_SETTINGS_WAIT = 2.0  # a client that never answers workspace/configuration delays diagnostics once
_IDLE_SCAN_DELAY = 2.0


class WorkrailLanguageServer(LanguageServer):
    def __init__(self) -> None:
        from . import __version__

        super().__init__("workrail-lsp", __version__, protocol_cls=AnsweringProtocol)
        self.pull = False
        self.idle = IdleWork()
        self._pending: dict[str, asyncio.Task[None]] = {}
        # What ``initialize`` negotiated. The document states and the workspace index import the
        # engine (~0.1 s), so they are built from these on first use, after the client has its
        # answer, not while it waits for one.
        self.initial_encoding = "utf-16"
        self.initial_settings = Settings()
        # Set once the client's workspace/configuration has been read (or cannot be): pushed and
        # pulled diagnostics wait for it, so that a file opened right after ``initialized`` is
        # not judged by the default settings first.
        self.settings_read = asyncio.Event()

    @functools.cached_property
    def states(self) -> DocumentStates:
        from .documents import DocumentStates

        states = DocumentStates()
        states.on_discard = self.idle.discard
        states.encoding = self.initial_encoding
        states.settings = self.initial_settings.with_roots(self._roots())
        return states

    @functools.cached_property
    def index(self) -> WorkspaceIndex:
        from .workspace_index import WorkspaceIndex

        index = WorkspaceIndex()
        index.configure(self._roots(), self.states.settings)
        # Its scans run beside the requests; what they find reaches the open documents after.
        index.on_change = self.refresh_all
        return index

    @functools.cached_property
    def store(self) -> DiagnosticsStore:
        from .diagnostics import DiagnosticsStore

        store = DiagnosticsStore(self.index)
        store.on_discard = self.idle.discard
        store.open_document = self.states.by_path
        return store

    def state(self, uri: str, edited: WorkflowDocument | None = None) -> DocumentState:
        document = self.workspace.get_text_document(uri)
        if document.version is None:
            # Not opened by the client: pygls would read the file itself, whatever it is (a FIFO
            # blocks the server, /dev/zero never ends); read it the bounded way instead.
            document = TextDocument(document.uri, source=read_unopened(document.path))
        return self.states.get(document, edited)

    def apply_settings(self, settings: Settings) -> None:
        settings = settings.with_roots(self._roots())
        # Taken before reclassify drops the states of documents the settings make (or unmake)
        # workflows: their reports must go too, and their new diagnostics be published.
        open_uris = [s.uri for s in self.states.open_states()]
        self.states.reclassify(settings)
        self.index.configure(self._roots(), settings)
        for uri in open_uris:
            self.store.forget(uri)
            if uri in self.workspace.text_documents:  # opened by the client: judged again now
                self.state(uri)
        self.refresh_all()

    def start_sources_refresh(self) -> None:
        """Fetch the workspace's followed workflow repositories in the background
        (`workrail_engine.sources.refresh`); a moved one is scanned again from its new commit."""
        from workrail_engine.sources.refresh import BackgroundRefresh

        loop = asyncio.get_running_loop()
        index = self.index

        def moved() -> None:  # on the refresh's thread: the index is the loop's
            loop.call_soon_threadsafe(self._repositories_moved)

        BackgroundRefresh(lambda: list(index.roots), moved).start()

    def _repositories_moved(self) -> None:
        # A scan under way read the old commit's folders: it is dropped, and a new one started.
        self.index.configure(self.index.roots, self.index.settings)
        self.index.refresh()

    def _roots(self) -> list[Path]:
        roots = [Path(p) for f in self.workspace.folders.values() if (p := to_fs_path(f.uri))]
        if not roots and self.workspace.root_path:
            roots = [Path(self.workspace.root_path)]
        return roots

    # -- diagnostics delivery ------------------------------------------------------------------
    def document_changed(
        self, uri: str, edited: WorkflowDocument | None = None, delay: float = _PUSH_DELAY
    ) -> None:
        """``delay``: how long a push waits for more edits (none after an open)."""
        state = self.state(uri, edited)
        generation = self.index.generation
        if state.path is not None and state.is_workflow:
            self.index.set_open(state.path, state.workflow_id)
            # A due scan starts now, not at the next pull: the first one may have been answered
            # before pygls loaded (the fast start). It runs beside; on_change tells.
            with tracing.span("index.refresh"):
                self.index.refresh()
        if self.index.generation != generation:
            self.refresh_all(except_uri=uri)
        if not self.pull:
            self.schedule_push(uri, delay)

    def schedule_push(self, uri: str, delay: float = _PUSH_DELAY) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._pending[uri] = asyncio.get_running_loop().create_task(self._push_later(uri, delay))

    async def settled(self) -> None:
        """Returns once the client's settings are read (at once, after the first time)."""
        if self.settings_read.is_set():
            return
        try:
            await asyncio.wait_for(self.settings_read.wait(), _SETTINGS_WAIT)
        except TimeoutError:
            log.warning(
                "no workspace/configuration answer in %s s: default settings", _SETTINGS_WAIT
            )
            self.settings_read.set()

    async def _push_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.settled()
        self._pending.pop(uri, None)
        try:
            state = self.state(uri)
            report = self.store.report(state)
        except Exception:
            log.exception("diagnostics for %s failed", uri)
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=report.items, version=state.version)
        )

    def refresh_all(self, except_uri: str | None = None) -> None:
        """Other documents' workspace-level diagnostics may have changed."""
        if self.pull:
            refresh = (
                self.client_capabilities.workspace
                and self.client_capabilities.workspace.diagnostics
            )
            if refresh and refresh.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for state in self.states.open_states():
            if state.uri != except_uri:
                self.schedule_push(state.uri)

    def prime_completion(self, uri: str) -> None:
        """Build the tolerant tree of a newly opened document once its diagnostics are out, so
        the first feature request is fast and every later edit re-parses incrementally."""
        state = self.states.peek(uri)
        if state is not None and state.is_workflow:
            with tracing.span("prime"):
                state.tree.root  # noqa: B018 - computed for its cache

    def document_closed(self, uri: str) -> None:
        state = self.states.peek(uri)
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        # A 1 MB document's objects take milliseconds to free: that is done in the next pause.
        self.idle.discard(self.store.forget(uri), feature("symbols").forget(uri))
        self.states.drop(uri)
        if state is not None and state.path is not None:
            generation = self.index.generation
            self.index.set_open(state.path, None, is_open=False)
            if self.index.generation != generation:
                self.refresh_all()
        if not self.pull:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )


def guarded(handler: F) -> F:
    """Log a feature's failure and answer nothing, instead of failing the request."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Exception:
            log.exception("%s failed", handler.__name__)
            return None

    return wrapper  # type: ignore[return-value]


def create_language_server() -> WorkrailLanguageServer:
    server = WorkrailLanguageServer()
    _register_lifecycle(server)
    _register_sync(server)
    _register_features(server)
    _register_structure(server)
    return server


def _register_lifecycle(server: WorkrailLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: WorkrailLanguageServer, params: types.InitializeParams) -> None:
        from .positions import encoding_name
        from .text_documents import use_edited_documents

        use_edited_documents(ls.workspace)  # pygls has just created it
        ls.initial_encoding = encoding_name(ls.workspace.position_encoding)
        ls.pull = (
            params.capabilities.text_document is not None
            and params.capabilities.text_document.diagnostic is not None
        )
        ls.initial_settings = Settings.from_client(params.initialization_options)
        for built in ("states", "index"):  # built before initialize (only tests do): rebuilt
            ls.__dict__.pop(built, None)
        log.info(
            "client %s, encoding %s, %s diagnostics",
            params.client_info,
            ls.initial_encoding,
            "pull" if ls.pull else "push",
        )

    @server.feature(types.INITIALIZED)
    async def initialized(ls: WorkrailLanguageServer, params: types.InitializedParams) -> None:
        try:
            await _fetch_configuration(ls)
        finally:
            ls.settings_read.set()
        _watch_project_configuration(ls)

        # Scan the workspace while the editor is idle, so that the first document opened later
        # is judged with the workspace's ids already known (one opened sooner starts the scan);
        # then start fetching the followed workflow repositories, on a thread of their own.
        def when_idle() -> None:
            ls.index.refresh()
            ls.start_sources_refresh()

        asyncio.get_running_loop().call_later(_IDLE_SCAN_DELAY, when_idle)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(
        ls: WorkrailLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if not await _fetch_configuration(ls):
            ls.apply_settings(Settings.from_client(params.settings, ls.states.settings))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(
        ls: WorkrailLanguageServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        ls.apply_settings(ls.states.settings)  # the new folders' project configurations too

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(
        ls: WorkrailLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.index.files_changed()
        for state in ls.states.open_states():
            ls.store.forget(state.uri)
        ls.refresh_all()

    @server.command(VALIDATE_WORKSPACE)
    def validate_workspace_command(ls: WorkrailLanguageServer, *args: Any) -> dict[str, Any]:
        validation = feature("workspace_validation")
        result: dict[str, Any] = validation.validate_workspace(ls._roots(), ls.states.settings)
        return result

    @server.command(PREVIEW_STEPS)
    def preview_steps_command(ls: WorkrailLanguageServer, *args: Any) -> dict[str, Any]:
        uri = args[0] if args and isinstance(args[0], str) else None
        if uri is None:
            return {"steps": [], "message": "No document given."}
        result: dict[str, Any] = feature("code_lens").preview_steps(ls.state(uri).value)
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=result["message"])
        )
        return result

    @server.command(IS_WORKFLOW)
    def is_workflow_command(ls: WorkrailLanguageServer, *args: Any) -> bool:
        # Editors ask before they hand a JSON/YAML document to us (VS Code moves workflow files
        # to a language of their own so that its JSON service stays silent about them).
        uri, text = (*args, None, None)[:2]
        if not isinstance(uri, str) or not isinstance(text, str):
            return False
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return ls.states.settings.is_workflow(path, text)


CONFIG_WATCHERS = ("**/*.toml",)
"""Files whose change may change the project configuration: ``pyproject.toml``,
``.workrail/config.toml``, and any TOML file, since ``extend`` may name one."""


def _watch_project_configuration(ls: WorkrailLanguageServer) -> None:
    """Ask the client to tell (``workspace/didChangeWatchedFiles``) when a configuration file
    changes, where it can watch files for a server. A client that cannot (Neovim 0.11 on Linux)
    still gets the new configuration's diagnostics at its next pull or edit: each look-up of a
    document compares the configuration with the one its state was built under."""
    workspace = ls.client_capabilities.workspace
    watched = workspace and workspace.did_change_watched_files
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=g) for g in CONFIG_WATCHERS]
    )
    registration = types.Registration(
        id="workrail-project-configuration",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )

    def answered(future: Any) -> None:
        if future.exception() is not None:
            log.info("the client does not watch configuration files: %s", future.exception())

    ls.client_register_capability(types.RegistrationParams([registration])).add_done_callback(
        answered
    )


async def _fetch_configuration(ls: WorkrailLanguageServer) -> bool:
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return False
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception:
        log.exception("workspace/configuration failed; keeping the current settings")
        return False
    if result and isinstance(result[0], dict):
        ls.apply_settings(Settings.from_client(result[0], ls.states.settings))
    return True


def _register_sync(server: WorkrailLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: WorkrailLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri, delay=0)
        # Parse the tolerant tree once the first diagnostics are out and the client pauses.
        ls.idle.later(functools.partial(ls.prime_completion, params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: WorkrailLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        edited = None
        if len(params.content_changes) == 1:
            try:
                with tracing.span("edit"):
                    edited = ls.states.edited_document(uri, params.content_changes[0])
            except Exception:  # the full parse below is always correct
                log.exception("incremental re-parse failed for %s", uri)
        ls.document_changed(uri, edited)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: WorkrailLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.document_closed(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="workrail", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    async def pull_diagnostics(
        ls: WorkrailLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        await ls.settled()
        with tracing.span("pull"):
            report = ls.store.report(ls.state(params.text_document.uri))
        if params.previous_result_id == report.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=report.items, result_id=report.result_id
        )


def _register_features(server: WorkrailLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(
            trigger_characters=['"', ":", "{", ".", " "], resolve_provider=False
        ),
    )
    @guarded
    def on_completion(
        ls: WorkrailLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        return feature("completion").complete(
            ls.state(params.text_document.uri), params.position, _snippets(ls)
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded
    def on_hover(ls: WorkrailLanguageServer, params: types.HoverParams) -> types.Hover | None:
        return feature("hover").hover(
            ls.state(params.text_document.uri), params.position, _routines(ls)
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(
        ls: WorkrailLanguageServer, params: types.DefinitionParams
    ) -> list[types.Location] | None:
        try:
            navigation = feature("navigation")
            state = ls.state(params.text_document.uri)
            found: list[types.Location] | None = navigation.definition(state, params.position)
            if found is None:  # a routine or a delegation: the workflow files' ids are needed
                paths = await ls.index.settled_paths()
                found = navigation.workflow_definition(
                    ls.state(params.text_document.uri), params.position, paths
                )
        except Exception:
            log.exception("on_definition failed")
            return None
        return found

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded
    def on_references(
        ls: WorkrailLanguageServer, params: types.ReferenceParams
    ) -> list[types.Location] | None:
        state = ls.state(params.text_document.uri)
        return feature("navigation").references(
            state, params.position, params.context.include_declaration
        )

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    @guarded
    def on_prepare_rename(
        ls: WorkrailLanguageServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenameResult | None:
        return feature("rename").prepare(ls.state(params.text_document.uri), params.position)

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def on_rename(
        ls: WorkrailLanguageServer, params: types.RenameParams
    ) -> types.WorkspaceEdit | None:
        # Not guarded: an invalid new id must reach the client as an error response.
        return feature("rename").rename(
            ls.state(params.text_document.uri), params.position, params.new_name
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    @guarded
    def on_code_action(
        ls: WorkrailLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return feature("code_actions").code_actions(
            ls.state(params.text_document.uri), params.range, params.context
        )


# Features that read one whole document and nothing else: (method, options, module, function).
_WHOLE_DOCUMENT: list[tuple[str, Any, str, str]] = [
    (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, None, "symbols", "document_symbols"),
    (types.TEXT_DOCUMENT_FORMATTING, None, "formatting", "format_document"),
    (types.TEXT_DOCUMENT_CODE_LENS, None, "code_lens", "code_lenses"),
    (
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        types.SemanticTokensRegistrationOptions(
            legend=types.SemanticTokensLegend(token_types=SEMANTIC_TOKEN_TYPES, token_modifiers=[]),
            full=True,
        ),
        "semantic_tokens",
        "semantic_tokens",
    ),
]


def _whole_document_handler(module: str, function: str) -> Callable[..., Any]:
    def handler(ls: WorkrailLanguageServer, params: Any) -> Any:
        return getattr(feature(module), function)(ls.state(params.text_document.uri))

    handler.__name__ = handler.__qualname__ = f"on_{function}"
    return handler


def _register_structure(server: WorkrailLanguageServer) -> None:
    """The whole-document features, selection, highlights, workspace symbols, inlay hints,
    range formatting."""
    for method, options, module, function in _WHOLE_DOCUMENT:
        server.feature(method, options)(guarded(_whole_document_handler(module, function)))

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    @guarded
    def on_folding_ranges(
        ls: WorkrailLanguageServer, params: types.FoldingRangeParams
    ) -> list[types.FoldingRange] | None:
        text_document = ls.client_capabilities.text_document
        folding = text_document and text_document.folding_range
        return feature("folding").folding_ranges(
            ls.state(params.text_document.uri), folding.range_limit if folding else None
        )

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def on_links(
        ls: WorkrailLanguageServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink] | None:
        try:  # a link to a routine's file needs the workspace's ids: waits for a running scan
            ids = await ls.index.settled_paths()
            links: list[types.DocumentLink] | None = feature("links").document_links(
                ls.state(params.text_document.uri), ids
            )
        except Exception:
            log.exception("on_links failed")
            return None
        return links

    @server.feature(types.TEXT_DOCUMENT_SELECTION_RANGE)
    @guarded
    def on_selection(
        ls: WorkrailLanguageServer, params: types.SelectionRangeParams
    ) -> list[types.SelectionRange] | None:
        return feature("selection").selection_ranges(
            ls.state(params.text_document.uri), params.positions
        )

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    @guarded
    def on_highlight(
        ls: WorkrailLanguageServer, params: types.DocumentHighlightParams
    ) -> list[types.DocumentHighlight] | None:
        return feature("highlights").highlights(ls.state(params.text_document.uri), params.position)

    @server.feature(types.WORKSPACE_SYMBOL)
    @guarded
    def on_workspace_symbols(
        ls: WorkrailLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol] | None:
        return feature("workspace_symbols").workspace_symbols(
            params.query, ls._roots(), ls.states.settings, ls.states
        )

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @guarded
    def on_inlay_hints(
        ls: WorkrailLanguageServer, params: types.InlayHintParams
    ) -> list[types.InlayHint] | None:
        return feature("inlay_hints").inlay_hints(ls.state(params.text_document.uri), params.range)

    @server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)
    @guarded
    def on_range_formatting(
        ls: WorkrailLanguageServer, params: types.DocumentRangeFormattingParams
    ) -> list[types.TextEdit] | None:
        return feature("formatting").format_range(ls.state(params.text_document.uri), params.range)


def _snippets(ls: WorkrailLanguageServer) -> bool:
    text_document = ls.client_capabilities.text_document
    item = text_document and text_document.completion and text_document.completion.completion_item
    return bool(item and item.snippet_support)


def _routines(ls: WorkrailLanguageServer) -> Callable[[str], dict[str, Any] | None]:
    """Routines for a hover's compiled view: the workflow files (the workspace's first, then the
    catalog's other sources'), looked up by id."""

    def find(workflow_id: str) -> dict[str, Any] | None:
        for path, found in reversed(ls.index.workflow_paths().items()):
            if found == workflow_id:
                try:  # an unopened file is read the bounded way (size and time limits)
                    value = json.loads(read_unopened(path))
                except ValueError:
                    return None
                return value if isinstance(value, dict) else None
        return None

    return find
