"""Helpers for the end-to-end tests: sessions over the real server, ``|`` cursor markers, edits."""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from workrail_engine.text.document import LineIndex

SERVER = [sys.executable, "-m", "workrail_lsp"]
CLIENTS = {"vscode": "visual-studio-code", "neovim": "neovim@v0.11.0"}
ENCODINGS = {"vscode": "utf-16", "neovim": "utf-8"}
MARK = "|"


def marked(text: str, encoding: str = "utf-16") -> tuple[str, types.Position]:
    """Remove the ``|`` marker and return the text and the marker's position in ``encoding``."""
    offset = text.index(MARK)
    clean = text[:offset] + text[offset + 1 :]
    line, column = LineIndex(clean).position(offset, encoding)
    return clean, types.Position(line=line, character=column)


@dataclass
class Session:
    """One initialized client, with helpers that hide push vs pull."""

    client: LanguageClient
    name: str
    root: Path
    published: list[types.PublishDiagnosticsParams]
    registrations: list[types.Registration] = field(default_factory=list)
    """What the server registered with the client (``answer_registrations``)."""
    _versions = itertools.count(1)

    def __post_init__(self) -> None:
        self._marks: dict[str, int] = {}
        # The last version sent of each open document: a push for an older one does not count
        # (an open's push may arrive after a burst of changes has been sent).
        self._sent_versions: dict[str, int] = {}

    def _mark(self, uri: str) -> None:
        self._marks[uri] = len(self.published)

    @property
    def encoding(self) -> str:
        return ENCODINGS[self.name]

    @property
    def pull(self) -> bool:
        return self.name == "neovim"

    def position(self, text: str) -> tuple[str, types.Position]:
        return marked(text, self.encoding)

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def open(self, name: str, text: str, language: str = "json") -> str:
        uri = self.uri(name)
        self._mark(uri)
        version = self._sent_versions[uri] = next(self._versions)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str, range_: types.Range | None = None) -> int:
        version = self._sent_versions[uri] = next(self._versions)
        self._mark(uri)
        change: Any = (
            types.TextDocumentContentChangePartial(range=range_, text=text)
            if range_ is not None
            else types.TextDocumentContentChangeWholeDocument(text=text)
        )
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change]
            )
        )
        return version

    def close(self, uri: str) -> None:
        self._mark(uri)
        self._sent_versions.pop(uri, None)  # the push after a close has no version
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics(
        self, uri: str, version: int | None = None, timeout: float = 20
    ) -> list[types.Diagnostic]:
        """The diagnostics for ``uri`` (for push: the first publish for ``version``, by default
        the last one sent, or later)."""
        version = self._sent_versions.get(uri) if version is None else version
        if self.pull:
            report = await self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            assert report.kind == "full"
            return list(report.items)
        return await asyncio.wait_for(self._published(uri, version), timeout)

    async def diagnostics_until(
        self, uri: str, found: Callable[[list[types.Diagnostic]], bool], timeout: float = 20
    ) -> list[types.Diagnostic]:
        """The diagnostics for ``uri`` once ``found(items)`` holds. Workspace findings (duplicate
        ids) follow a document's own diagnostics when the workspace scan is done: pushed again,
        or on a later pull (as an editor pulls on its next change)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            if self.pull:
                items = await self.diagnostics(uri)
                if found(items):
                    return items
            else:
                version = self._sent_versions.get(uri)
                for params in self.published[self._marks.get(uri, 0) :]:
                    if params.uri != uri or (params.version or 0) < (version or 0):
                        continue
                    if found(list(params.diagnostics)):
                        return list(params.diagnostics)
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"no diagnostics for {uri} as expected within {timeout} s")
            await asyncio.sleep(0.05)

    async def _published(self, uri: str, version: int | None) -> list[types.Diagnostic]:
        """The first publish for ``uri`` since the last open/change/close of it."""
        while True:
            for params in self.published[self._marks.get(uri, 0) :]:
                if params.uri == uri and (version is None or (params.version or 0) >= version):
                    return list(params.diagnostics)
            await asyncio.sleep(0.01)

    async def completion(self, uri: str, position: types.Position) -> list[types.CompletionItem]:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=position
            )
        )
        if result is None:
            return []
        return list(result.items if isinstance(result, types.CompletionList) else result)

    async def hover(self, uri: str, position: types.Position) -> str | None:
        result = await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=position
            )
        )
        if result is None:
            return None
        assert isinstance(result.contents, types.MarkupContent)
        return result.contents.value


def initialize_params(
    name: str, root: Path, options: dict[str, Any] | None = None
) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=client_capabilities(CLIENTS[name]),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        initialization_options=options,
    )


def record_publications(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Keep every publishDiagnostics (pytest-lsp keeps only the last per document)."""
    published: list[types.PublishDiagnosticsParams] = []
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> Any:
        published.append(params)
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return published


def answer_registrations(client: LanguageClient) -> list[types.Registration]:
    """Answer ``client/registerCapability`` as VS Code does (its captured capabilities say it
    registers dynamically); returns the registrations, in the order they came."""
    registrations: list[types.Registration] = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    return registrations


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP text edits (positions in ``encoding``) the way a client does: last first."""
    index = LineIndex(text)
    spans = [
        (
            index.offset(e.range.start.line, e.range.start.character, encoding),
            index.offset(e.range.end.line, e.range.end.character, encoding),
            e.new_text,
        )
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text
