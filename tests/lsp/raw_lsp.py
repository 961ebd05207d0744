"""A raw LSP client for the real ``workrail-lsp`` process: Content-Length frames written by hand.

pytest-lsp's client validates what it sends with lsprotocol's types, so it cannot send what
those types cannot hold (``line: -1``, a string position); this one writes any JSON, reads
every frame the server writes (checking each is one JSON object), and waits for an answer
only up to a deadline, so a server that never answers fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from address_space import limit_address_space

SERVER = [sys.executable, "-m", "workrail_lsp"]
WITHOUT_FAST_START = [*SERVER, "--no-fast-start"]  # pygls answers everything from the start
Found = TypeVar("Found")


def frame(message: dict[str, Any]) -> bytes:
    """One Content-Length framed JSON-RPC message ("jsonrpc": "2.0" added)."""
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawLspServer:
    def __init__(
        self,
        root: Path,
        memory_limit: int | None = None,
        command: list[str] | None = None,
        replies: dict[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        """``memory_limit``: the process's address space in bytes, so that a server that reads
        without end fails its test with MemoryError instead of taking the machine's memory;
        ``command``: the server's command line, if not ``SERVER``; ``replies``: the result to
        give, by method, to the server's requests (from its params), sent as soon as they are
        read (other requests of the server's are answered null while ``answer`` waits)."""
        self.root = root
        self.replies = replies or {}
        self._writing = threading.Lock()  # the reading thread answers ``replies`` too
        self._arrived = threading.Condition()
        self.stderr_path = root.parent / f"{root.name}-lsp-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            command or SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            preexec_fn=limit_address_space(memory_limit) if memory_limit else None,
        )
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.not_json: list[bytes] = []
        self.seen: list[dict[str, Any]] = []  # every message the server wrote, in order
        self._ended = False
        self.initialize_id: Any = None
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read_frames, daemon=True)
        self._reader.start()

    # -- the wire ---------------------------------------------------------------------------
    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        with self._writing:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def _read_frames(self) -> None:
        stream: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        try:
            while True:
                length = None
                while True:
                    header = stream.readline()
                    if not header:
                        return
                    if header in (b"\r\n", b"\n"):
                        break
                    name, _, value = header.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                assert length is not None, "a frame without Content-Length"
                body = stream.read(length)
                try:
                    message = json.loads(body)
                except ValueError:
                    self.not_json.append(body)
                    continue
                if not isinstance(message, dict):
                    self.not_json.append(body)
                    continue
                if message.get("method") in self.replies and "id" in message:
                    result = self.replies[message["method"]](message.get("params"))
                    self.send({"id": message["id"], "result": result})
                with self._arrived:
                    self.seen.append(message)
                    self._arrived.notify_all()
                self.frames.put(message)
        finally:
            with self._arrived:
                self._ended = True
                self._arrived.notify_all()
            self.frames.put(None)

    def wait_for(
        self, found: Callable[[list[dict[str, Any]]], Found | None], timeout: float = 60
    ) -> Found:
        """What ``found`` makes of every message the server has written so far, once it is not
        None; read again as each message arrives, until ``timeout`` or the server's exit."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while (result := found(self.seen)) is None:
                left = deadline - time.monotonic()
                if self._ended or left <= 0:
                    raise AssertionError(
                        f"not found within {timeout} s (server exit code {self.process.poll()}): "
                        f"{self.seen[-5:]}\n{self.stderr_text()[-2000:]}"
                    )
                self._arrived.wait(left)
        return result

    # -- requests -----------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, request_id: Any = None) -> Any:
        """Send a request (params as given, even if the protocol types cannot hold them); its id."""
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message: dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def answer(self, request_id: Any, timeout: float = 10) -> dict[str, Any]:
        """The server's response to ``request_id`` (its requests to us are answered null)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer to request {request_id!r} within {timeout} s")
            try:
                message = self.frames.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError(
                    f"the server exited ({self.process.poll()}) before answering {request_id!r}: "
                    + self.stderr_text()[-2000:]
                )
            if "method" in message:
                # a request of the server's (configuration, registration) not answered already
                if "id" in message and message["method"] not in self.replies:
                    self.send({"id": message["id"], "result": None})
                continue
            if message.get("id") == request_id:
                return message

    def call(self, method: str, params: Any = None, timeout: float = 10) -> dict[str, Any]:
        return self.answer(self.request(method, params), timeout)

    # -- a session ------------------------------------------------------------------------
    def initialize(
        self, capabilities: dict[str, Any] | None = None, **params: Any
    ) -> dict[str, Any]:
        """``initialize`` (with ``params`` laid over ours: ``initializationOptions``, …), then
        ``initialized``; the result."""
        uri = self.root.as_uri()
        self.initialize_id = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "capabilities": capabilities or {},
                **params,
            },
        )
        answer = self.answer(self.initialize_id, timeout=30)
        assert "result" in answer, answer
        self.notify("initialized", {})
        result: dict[str, Any] = answer["result"]
        return result

    def open(self, path: Path, text: str, language: str = "json") -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
        )
        return uri

    def peak_memory_bytes(self) -> int:
        """The server's peak resident memory so far (VmHWM)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM in /proc/PID/status")

    def stderr_text(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> int | None:
        """shutdown + exit; the exit code (killed, and None, if it does not exit in time)."""
        try:
            if self.process.poll() is None:
                self.call("shutdown", timeout=10)
                self.notify("exit")
            return self.process.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
            return None
        finally:
            self._stderr.close()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
