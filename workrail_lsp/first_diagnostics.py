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
configuration, as ``DocumentState.diagnostics``); a test checks they equal the server's.

The early path steps aside — loading pygls at once with every byte read — whenever it would have
to guess: a client that reads settings through ``workspace/configuration`` (the document must not
be judged by default settings first), any other message, a document that is not a workflow, a
diagnostic pointing into another file, or no document opened within ``OPEN_WAIT`` seconds.

Only the standard library and the engine are imported here (never pygls or lsprotocol).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

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
    from workrail_engine.document import parse_document
    from workrail_engine.lint import lint_document

    from .configuration import reported

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
    stdin to give pygls (every byte read, but a pull request answered here)."""
    params = stdout.params
    capabilities = params.get("capabilities", {})
    workspace = capabilities.get("workspace")
    if isinstance(workspace, dict) and workspace.get("configuration"):
        return stdin  # settings come later from the client: judged by the server with them
    text_document = capabilities.get("textDocument")
    pull = isinstance(text_document, dict) and text_document.get("diagnostic") is not None
    client = stdin.stream
    if not isinstance(client, ClientStream):
        return stdin  # a stream that cannot be waited on with a deadline
    kept = bytearray()
    deadline = time.monotonic() + OPEN_WAIT
    opened: dict[str, Any] | None = None
    items: list[dict[str, Any]] | None = None
    while (read := client.frame(deadline)) is not None:
        raw, message = read
        method = message.get("method") if isinstance(message, dict) else None
        if method == "initialized" and opened is None:
            kept += raw
            continue
        if method == "textDocument/didOpen" and opened is None:
            kept += raw
            opened = _opened(message)
            if opened is None:
                break
            items = _diagnose(opened, capabilities, params.get("initializationOptions"))
            if items is None:
                break
            if not pull:
                notification = {
                    "uri": opened["uri"],
                    "diagnostics": items,
                    "version": opened["version"],
                }
                log.info("publishing the diagnostics of %s before loading pygls", opened["uri"])
                _send(stdout, {"method": "textDocument/publishDiagnostics", "params": notification})
                break
            deadline = time.monotonic() + OPEN_WAIT  # for the pull, after the work above
            continue
        if method == "textDocument/diagnostic" and opened is not None and items is not None:
            asked = message.get("params", {}).get("textDocument", {}).get("uri")
            if asked == opened["uri"] and "id" in message:
                result_id = f"{opened['version']}.early.{len(opened['text'])}"
                report = {"kind": "full", "resultId": result_id, "items": items}
                log.info("answering the diagnostics of %s before loading pygls", opened["uri"])
                _send(stdout, {"id": message["id"], "result": report})
                break  # answered: pygls never sees this request
        kept += raw
        break
    return Replay(stdin.consumed + bytes(kept), client)  # type: ignore[arg-type]


def _opened(message: dict[str, Any]) -> dict[str, Any] | None:
    document = message.get("params", {}).get("textDocument")
    if not isinstance(document, dict):
        return None
    uri, text, version = document.get("uri"), document.get("text"), document.get("version")
    if not isinstance(uri, str) or not isinstance(text, str) or not isinstance(version, int):
        return None
    return {"uri": uri, "version": version, "text": text}


def _diagnose(
    opened: dict[str, Any], capabilities: dict[str, Any], options: Any
) -> list[dict[str, Any]] | None:
    from .configuration import Settings

    try:
        return document_diagnostics(
            opened["uri"],
            opened["text"],
            position_encoding(capabilities),
            Settings.from_client(options),
        )
    except Exception:  # the server judges it again; its failure is logged there
        log.exception("early diagnostics failed for %s", opened["uri"])
        return None
