"""Answering ``initialize`` before pygls is loaded.

An editor waits for the server's answer to ``initialize`` before it sends anything else. Loading
pygls and lsprotocol costs ~0.5 s of Python here, most of it ``lsprotocol.types`` (hundreds of
attrs classes), then asyncio and cattrs building converters; nothing about the answer needs them.
So the first message is read here with the standard library, and an ``initialize`` request is
answered from ``initialize_result.json``: the capabilities that pygls builds for this server,
recorded by ``python -m workrail_lsp.fast_start.handshake`` (``RECORD_COMMAND``; a test fails,
naming it, when the file is out of date).

pygls is then loaded and given the same bytes, so it sets up its workspace, the client's
capabilities and our own ``initialize`` handler exactly as if it had read them itself. Its answer
is not sent twice: ``AnsweredOnce`` drops it, and logs a warning if it differs from the early one
(a client whose capabilities the recorded template does not cover). Requests the client sends in
the meantime wait in the pipe until pygls reads them, as they would while it started.

Only the standard library is imported here: this module runs before anything else.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

__all__ = ["AnsweredOnce", "Replay", "answer_initialize"]

log = logging.getLogger(__name__)

TEMPLATE = Path(__file__).with_name("initialize_result.json")
# What re-records ``TEMPLATE`` from the pygls server (``server.py``'s feature registrations).
RECORD_COMMAND = "python -m workrail_lsp.fast_start.handshake"
# The position encodings pygls can convert; the client's first one of these is used, else UTF-16
# (pygls's ``ServerCapabilitiesBuilder.choose_position_encoding``, checked against it by a test).
POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
DEFAULT_POSITION_ENCODING = "utf-16"
# An ``initialize`` request is a few kilobytes (VS Code's: ~10 KB); a larger first message is
# left to pygls rather than held in memory here.
MAX_EARLY_MESSAGE = 1 << 20
# The parts of the client's capabilities that change pygls's answer (each on its own; the
# template records what each changes, ``RECORD_COMMAND`` checks they combine).
CLIENT_SWITCHES = (
    "textDocument.synchronization.willSave",
    "textDocument.synchronization.willSaveWaitUntil",
    "textDocument.rename.prepareSupport",
    "notebookDocument",
    *(
        f"workspace.fileOperations.{operation}"
        for operation in (
            "didCreate",
            "willCreate",
            "didRename",
            "willRename",
            "didDelete",
            "willDelete",
        )
    ),
)


class FirstMessage(NamedTuple):
    raw: bytes  # every byte read from the client, to be given to pygls unchanged
    message: Any  # the decoded JSON body, or None when it could not be read


def read_first_message(stdin: BinaryIO) -> FirstMessage:
    """Read one Content-Length framed message, stopping early (with what was read) on anything
    unusual: pygls reads the rest and deals with it as it would have."""
    raw = bytearray()
    length = None
    while True:
        line = stdin.readline()
        raw += line
        if not line.endswith(b"\n"):
            return FirstMessage(bytes(raw), None)  # end of input
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return FirstMessage(bytes(raw), None)
    if length is None or not 0 < length <= MAX_EARLY_MESSAGE:
        return FirstMessage(bytes(raw), None)
    body = stdin.read(length)
    raw += body
    try:
        return FirstMessage(bytes(raw), json.loads(body))
    except ValueError:
        return FirstMessage(bytes(raw), None)


def _switch_state(capabilities: dict[str, Any], dotted: str) -> str | None:
    """The state of a switch in the client's capabilities: "true", "false", or None when left
    out. pygls reads some switches for presence, not truth: a client's ``willSave: false`` adds
    ``willSave: false`` to the answer, and ``notebookDocument: {}`` counts as set."""
    value: Any = capabilities
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    if value is None:
        return None
    return "false" if value is False else "true"


def position_encoding(capabilities: dict[str, Any]) -> str:
    general = capabilities.get("general")
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    if isinstance(offered, list):
        for encoding in offered:
            if encoding in POSITION_ENCODINGS:
                return str(encoding)
    return DEFAULT_POSITION_ENCODING


def _answerable(message: Any) -> bool:
    """An ``initialize`` request whose top-level params have the types LSP gives them. Deeper
    mistakes are pygls's to find; ``AnsweredOnce`` stops the server if it does."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return False
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return False
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    expected = {
        "processId": int,
        "rootUri": str,
        "rootPath": str,
        "workspaceFolders": list,
        "clientInfo": dict,
        "locale": str,
    }
    for name, kind in expected.items():
        value = params.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            return False
    return params.get("trace") in (None, "off", "messages", "verbose")


def initialize_result(params: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """What pygls answers to ``initialize`` with these params, from the recorded template."""
    client = params["capabilities"]
    capabilities = dict(template["capabilities"])
    capabilities["positionEncoding"] = position_encoding(client)
    for switch, by_state in template["switches"].items():
        if (state := _switch_state(client, switch)) in by_state:
            capabilities = _merged(capabilities, by_state[state])
    return {"capabilities": capabilities, "serverInfo": template["serverInfo"]}


def _merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` laid over it, objects member by member (two switches may each
    add a member to the same object: willSave and willSaveWaitUntil to ``textDocumentSync``)."""
    merged = dict(base)
    for key, value in changes.items():
        old = merged.get(key)
        both_objects = isinstance(old, dict) and isinstance(value, dict)
        merged[key] = _merged(old, value) if both_objects else value
    return merged


class Replay:
    """The client's stream for pygls: the bytes already read from it, then the stream itself."""

    def __init__(self, consumed: bytes, stream: BinaryIO) -> None:
        self._consumed = consumed
        self._stream = stream

    @property
    def consumed(self) -> bytes:
        """The bytes read from the client that pygls has not been given yet."""
        return self._consumed

    @property
    def stream(self) -> BinaryIO:
        return self._stream

    def readline(self) -> bytes:
        if not self._consumed:
            return self._stream.readline()
        end = self._consumed.find(b"\n") + 1
        if end == 0:
            line, self._consumed = self._consumed, b""
            return line + self._stream.readline()
        line, self._consumed = self._consumed[:end], self._consumed[end:]
        return line

    def read(self, size: int) -> bytes:
        head, self._consumed = self._consumed[:size], self._consumed[size:]
        if len(head) < size:
            head += self._stream.read(size - len(head))
        return head


class AnsweredOnce:
    """stdout for pygls: everything it writes, except its own answer to the ``initialize``
    request that was answered early."""

    def __init__(
        self,
        stream: BinaryIO,
        request_id: int | str,
        sent: dict[str, Any],
        params: dict[str, Any] | None = None,
    ) -> None:
        self._stream = stream
        self._request_id = request_id
        self._sent = sent
        self.params = params or {}  # the client's initialize params
        self.waiting = True

    @property
    def raw(self) -> BinaryIO:
        """The client's stream itself, for what is sent before pygls is loaded."""
        return self._stream

    def write(self, data: bytes) -> int:
        if self.waiting and self._is_pygls_answer(data):
            self.waiting = False
            return len(data)
        return self._stream.write(data)

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()

    def _is_pygls_answer(self, data: bytes) -> bool:
        _, _, body = data.partition(b"\r\n\r\n")
        try:
            message = json.loads(body)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        if message.get("id") != self._request_id:
            return False
        if "error" in message:
            # The client has been told it is initialized; pygls could not read its params, so no
            # document can be served. Stopping says so; serving nothing would hide it.
            log.error(
                "the client's initialize request was answered, then refused by pygls: %s; "
                "stopping (check the client's initialize params)",
                message["error"].get("message") if isinstance(message["error"], dict) else "",
            )
            self._stream.flush()
            os._exit(1)
        if message.get("result") != self._sent:
            # The client keeps what it was sent; pygls serves as it built. Likely a pygls release
            # the template was not recorded with: ``RECORD_COMMAND`` re-records it.
            log.warning(
                "initialize was answered with capabilities that differ from pygls's (%s); "
                "re-record %s with `%s`",
                _differences(self._sent, message.get("result")),
                TEMPLATE.name,
                RECORD_COMMAND,
            )
        return True


def _differences(sent: Any, built: Any) -> str:
    if isinstance(sent, dict) and isinstance(built, dict):
        keys = sorted({*sent, *built}, key=str)
        return ", ".join(
            f"{key}: {_differences(sent.get(key), built.get(key))}"
            for key in keys
            if sent.get(key) != built.get(key)
        )
    return f"sent {json.dumps(sent)}, pygls {json.dumps(built)}"


def answer_initialize(stdin: BinaryIO, stdout: BinaryIO) -> tuple[Replay, BinaryIO | AnsweredOnce]:
    """Read the client's first message and answer it if it is ``initialize``; returns the stdin
    and stdout to give pygls."""
    first = read_first_message(stdin)
    if not _answerable(first.message):
        return Replay(first.raw, stdin), stdout
    template = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    result = initialize_result(first.message["params"], template)
    body = json.dumps({"jsonrpc": "2.0", "id": first.message["id"], "result": result}).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stdout.flush()
    log.info("answered initialize before loading pygls")
    return Replay(first.raw, stdin), AnsweredOnce(
        stdout, first.message["id"], result, first.message["params"]
    )


# -- recording the template (development only: imports pygls and the whole server) ---------------


class _Collected(list[bytes]):
    def write(self, data: bytes) -> None:
        self.append(data)

    def close(self) -> None:
        pass


def initialized_server(capabilities: dict[str, Any]) -> tuple[Any, list[bytes]]:
    """A new server that has read an ``initialize`` request with these client capabilities
    through pygls's own message path, and what it wrote."""
    from ..server import create_language_server

    server = create_language_server()
    written = _Collected()
    server.protocol.set_writer(written)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": capabilities},
    }
    server.protocol.handle_message(
        json.loads(json.dumps(request), object_hook=server.protocol.structure_message)
    )
    return server, written


def pygls_answer(capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """pygls's own ``initialize`` result for a client with these capabilities (None if it
    refuses them)."""
    _, (answer,) = initialized_server(capabilities)
    result: dict[str, Any] | None = json.loads(answer.partition(b"\r\n\r\n")[2]).get("result")
    return result


def client_with(states: dict[str, str]) -> dict[str, Any]:
    """Client capabilities that set each switch to its state ("true" or "false")."""
    client: dict[str, Any] = {}
    for switch, state in states.items():
        *parents, last = switch.split(".")
        node = client
        for part in parents:
            node = node.setdefault(part, {})
        # notebookDocument is an object whose ``synchronization`` member LSP requires.
        on = {"synchronization": {}} if switch == "notebookDocument" else True
        node[last] = on if state == "true" else False
    return client


def _changes(base: dict[str, Any], switched: dict[str, Any]) -> dict[str, Any]:
    """What ``_merged`` must lay over ``base`` to make ``switched``."""
    if not set(base) <= set(switched):
        raise ValueError(f"a switch removes {sorted(set(base) - set(switched))}; cannot record it")
    changes = {}
    for key, value in switched.items():
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            if inner := _changes(old, value):
                changes[key] = inner
        elif old != value or key not in base:
            changes[key] = value
    return changes


def record_template() -> dict[str, Any]:
    """The template ``answer_initialize`` answers from, as pygls builds it for this server: its
    answer to a client that sets nothing, and what each switch in each state changes in it."""
    base = pygls_answer({})
    assert base is not None
    switches: dict[str, dict[str, Any]] = {}
    accepted: dict[str, list[str]] = {"true": [], "false": []}
    for switch in CLIENT_SWITCHES:
        for state in ("true", "false"):
            logging.disable(logging.ERROR)  # pygls logs the params it refuses with a traceback
            try:
                answer = pygls_answer(client_with({switch: state}))
            finally:
                logging.disable(logging.NOTSET)
            if answer is None:
                continue  # pygls refuses it (notebookDocument: false): never answered early
            accepted[state].append(switch)
            if changes := _changes(base["capabilities"], answer["capabilities"]):
                switches.setdefault(switch, {})[state] = changes
    template = {"capabilities": base["capabilities"], "switches": switches}
    template["serverInfo"] = base["serverInfo"]
    for state, names in accepted.items():
        every = client_with(dict.fromkeys(names, state))
        if initialize_result({"capabilities": every}, template) != pygls_answer(every):
            raise ValueError("switches change the same capability members; record combinations")
    return template


def template_text(template: dict[str, Any]) -> str:
    return json.dumps(template, indent=2) + "\n"


if __name__ == "__main__":
    TEMPLATE.write_text(template_text(record_template()), encoding="utf-8")
    print(f"wrote {TEMPLATE}")
