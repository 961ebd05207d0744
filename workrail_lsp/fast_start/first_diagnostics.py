"""The first opened document's own diagnostics, sent before pygls is loaded.

After ``initialize`` (answered early by ``handshake``), an editor sends ``initialized`` and opens
the file its user is looking at, then waits for that file's diagnostics. Loading pygls and
lsprotocol costs ~0.5 s of CPU here; the engine's parse and lint of a workflow ~0.1 s. So the
messages after ``initialize`` are read here too, with the standard library: the first opened
workflow is parsed and linted by the engine, and its diagnostics are published (push clients) or
given to the client's first ``textDocument/diagnostic`` request for it (pull clients) at once.

Everything read is then given to pygls as it came, except a pull request answered here (so the
client gets one answer), and the server judges the document again: its diagnostics add the
workspace-level findings (duplicate ids) when the workspace scan has found them, as they would
have. The early ones are exactly the document's own (``lint_document`` filtered by the project's
configuration, as ``DocumentState.diagnostics``); ``tests/lsp/fast_start/test_parity.py`` checks
they equal what pygls alone sends.

A client that serves settings through ``workspace/configuration`` is asked for them after
``initialized``, as the server asks (the document is never judged by default settings first);
its answer is kept from pygls, which asks for its own. The early path steps aside — loading pygls
at once with every byte read — whenever it would have to guess: any other message, a document
that is not a workflow, a diagnostic pointing into another file, or no document opened (or no
settings answered) within ``OPEN_WAIT`` seconds.

Only the standard library and the engine are imported here (never pygls or lsprotocol).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..message_size import MAX_MESSAGE_BYTES
from .client_stream import ClientStream
from .handshake import AnsweredOnce, Replay, position_encoding

__all__ = ["diagnose_first_document", "document_diagnostics"]

log = logging.getLogger(__name__)

OPEN_WAIT = 0.3
"""Seconds after ``initialize`` to wait for ``initialized`` and the first ``didOpen`` (and, from a
pull client, its request) before loading pygls: editors send them back to back; one that opens
nothing at start-up gets pygls that much later."""
_SEVERITY = {"error": 1, "warning": 2, "info": 3}  # LSP's DiagnosticSeverity
SOURCE = "workrail"
# The settings' section: configuration.SECTION, not imported before it is needed (the parity test
# fails if the request sent here differs from the server's).
SECTION = "workrail"
SETTINGS_REQUEST = "workrail-first-diagnostics-settings"  # the id of the settings request sent


def _file_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI (as pygls's ``to_fs_path`` gives it on POSIX)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path)


def document_diagnostics(
    uri: str, text: str, encoding: str, settings: Any
) -> list[dict[str, Any]] | None:
    """The document's own diagnostics in LSP's JSON form, as the server would give them; None when
    it is not a workflow or a diagnostic refers to another file (left to the server)."""
    from workrail_engine.lint import lint_document
    from workrail_engine.text.document import parse_document

    from ..configuration import reported

    path = _file_path(uri)
    if not settings.is_workflow(path, text):
        return None
    document = parse_document(text, path)
    index = document.line_index

    def range_(span: Any) -> dict[str, Any]:
        (sl, sc), (el, ec) = (
            index.position(span.start, encoding),
            index.position(span.end, encoding),
        )
        return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}

    items = []
    for found in reported(lint_document(document), path):
        related = []
        for r in found.related:
            if r.path is not None and (path is None or Path(r.path) != Path(path)):
                return None
            related.append(
                {"location": {"uri": uri, "range": range_(r.span)}, "message": r.message}
            )
        item = {
            "range": range_(found.span),
            "severity": _SEVERITY[found.severity.value],
            "code": found.code,
            "source": SOURCE,
            "message": found.message,
            "data": {"pointer": found.pointer, "fixes": [f.title for f in found.fixes]},
        }
        if related:
            item["relatedInformation"] = related
        items.append(item)
    return items


def _send(stdout: AnsweredOnce, message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    stdout.raw.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stdout.raw.flush()


def diagnose_first_document(stdin: Replay, stdout: AnsweredOnce) -> Replay:
    """Serve the first opened workflow's diagnostics from the messages after ``initialize``; the
    stdin to give pygls (every byte read, but a pull request answered here and the answer to the
    settings request sent here)."""
    client = stdin.stream
    if not isinstance(client, ClientStream):
        return stdin  # a stream that cannot be waited on with a deadline
    first = _FirstDocument(stdout)
    deadline = time.monotonic() + OPEN_WAIT
    while (read := client.frame(deadline, MAX_MESSAGE_BYTES)) is not None:
        raw, message = read
        if not first.take(raw, message):
            break
        if first.done:
            break
        if first.items is not None:
            deadline = time.monotonic() + OPEN_WAIT  # for the pull, after the work above
    return Replay(stdin.consumed + first.kept(), client)  # type: ignore[arg-type]


class _FirstDocument:
    """What the messages after ``initialize`` have told so far, and what was sent for them."""

    def __init__(self, stdout: AnsweredOnce) -> None:
        self.stdout = stdout
        params = stdout.params
        self.capabilities: dict[str, Any] = params.get("capabilities", {})
        text_document = self.capabilities.get("textDocument")
        self.pull = isinstance(text_document, dict) and text_document.get("diagnostic") is not None
        workspace = self.capabilities.get("workspace")
        # Such a client's settings are asked for after ``initialized`` (as the server does): the
        # document is not judged by the defaults first.
        self.asks_settings = isinstance(workspace, dict) and bool(workspace.get("configuration"))
        self.settings_read = not self.asks_settings
        self.options = params.get("initializationOptions")
        self.client_settings: Any = None
        self.notified: list[Any] = []  # settings sent with workspace/didChangeConfiguration
        self.initialized = False
        self.opened: dict[str, Any] | None = None
        self.items: list[dict[str, Any]] | None = None
        self.pull_request: tuple[bytes, Any] | None = None  # a pull that came before the settings
        self.done = False
        self._kept = bytearray()

    def kept(self) -> bytes:
        """What pygls is to read: every message taken, but those answered here."""
        pending = self.pull_request[0] if self.pull_request and not self.done else b""
        return bytes(self._kept) + pending

    def take(self, raw: bytes, message: Any) -> bool:
        """Take one message; False to step aside (the message is kept for pygls)."""
        method = message.get("method") if isinstance(message, dict) else None
        if method == "initialized" and not self.initialized:
            self.initialized = True
            self._kept += raw
            if self.asks_settings:
                items = [{"section": SECTION}]
                request = {"id": SETTINGS_REQUEST, "method": "workspace/configuration"}
                _send(self.stdout, {**request, "params": {"items": items}})
        elif isinstance(message, dict) and method is None and message.get("id") == SETTINGS_REQUEST:
            # The answer to the request sent above: not for pygls, which asks for its own.
            result = message.get("result")
            self.client_settings = result[0] if isinstance(result, list) and result else None
            self.settings_read = True
        elif method == "workspace/didChangeConfiguration" and self.initialized:
            # Editors send it right after ``initialized`` (Neovim with its ``settings``, VS Code's
            # ``synchronize.configurationSection``). As the server: a client that serves
            # ``workspace/configuration`` is asked instead; else its settings are laid over.
            self._kept += raw
            params = message.get("params")
            if not self.asks_settings and isinstance(params, dict):
                self.notified.append(params.get("settings"))
        elif method == "textDocument/didOpen" and self.opened is None:
            self._kept += raw
            self.opened = _opened(message)
            if self.opened is None:
                return False
        elif method == "textDocument/diagnostic" and self._pulls_opened(message):
            self.pull_request = (raw, message["id"])
        else:
            if self.pull_request is not None:  # a held pull goes first, as it came
                self._kept += self.pull_request[0]
                self.pull_request = None
            self._kept += raw
            return False
        return self._serve()

    def _pulls_opened(self, message: dict[str, Any]) -> bool:
        params = message.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        return (
            self.pull
            and self.opened is not None
            and self.pull_request is None
            and "id" in message
            and uri == self.opened["uri"]
        )

    def _serve(self) -> bool:
        if self.opened is None or not self.settings_read:
            return True
        if self.items is None:
            self.items = _diagnose(self.opened, self.capabilities, self._settings())
            if self.items is None:
                return False
        uri = self.opened["uri"]
        if not self.pull:
            published = {"uri": uri, "diagnostics": self.items, "version": self.opened["version"]}
            log.info("publishing the diagnostics of %s before loading pygls", uri)
            _send(self.stdout, {"method": "textDocument/publishDiagnostics", "params": published})
            self.done = True
        elif self.pull_request is not None:
            result_id = f"{self.opened['version']}.early.{len(self.opened['text'])}"
            report = {"kind": "full", "resultId": result_id, "items": self.items}
            log.info("answering the diagnostics of %s before loading pygls", uri)
            _send(self.stdout, {"id": self.pull_request[1], "result": report})
            self.done = True  # answered: pygls never sees this request
        return True

    def _settings(self) -> Any:
        from ..configuration import Settings

        # As the server: the initialization options, then the client's answer laid over them.
        settings = Settings.from_client(self.options)
        if isinstance(self.client_settings, dict):
            settings = Settings.from_client(self.client_settings, settings)
        for notified in self.notified:
            settings = Settings.from_client(notified, settings)
        return settings


def _opened(message: dict[str, Any]) -> dict[str, Any] | None:
    document = message.get("params", {}).get("textDocument")
    if not isinstance(document, dict):
        return None
    uri, text, version = document.get("uri"), document.get("text"), document.get("version")
    if not isinstance(uri, str) or not isinstance(text, str) or not isinstance(version, int):
        return None
    return {"uri": uri, "version": version, "text": text}


def _diagnose(
    opened: dict[str, Any], capabilities: dict[str, Any], settings: Any
) -> list[dict[str, Any]] | None:
    try:
        encoding = position_encoding(capabilities)
        return document_diagnostics(opened["uri"], opened["text"], encoding, settings)
    except Exception:  # the server judges it again; its failure is logged there
        log.exception("early diagnostics failed for %s", opened["uri"])
        return None
