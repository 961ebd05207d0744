"""Frames over ``MAX_MESSAGE_BYTES`` are never handed to pygls, with the fast
start and without it (workrail_lsp/message_size.py)."""

from __future__ import annotations

import io

import pytest
from raw_lsp import SERVER, WITHOUT_FAST_START, RawLspServer, frame

from workrail_lsp.message_size import MAX_MESSAGE_BYTES, SizeLimitedStream

STARTS = {"fast start": SERVER, "without the fast start": WITHOUT_FAST_START}


def test_a_frame_over_the_limit_is_skipped_and_the_next_one_given():
    after = frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    limit = len(after)  # the next frame's body is within it
    big = b"Content-Type: x\r\nContent-Length: %d\r\n\r\n" % (limit + 1) + b"x" * (limit + 1)
    stream = SizeLimitedStream(io.BytesIO(big + after), max_message=limit)
    assert stream.readline() == b"Content-Type: x\r\n"  # pygls ignores a lone header line
    header, _, body = after.partition(b"\r\n\r\n")
    assert stream.readline() == header + b"\r\n"
    assert stream.readline() == b"\r\n"
    assert stream.read(len(body)) == body


@pytest.mark.parametrize("start", STARTS)
def test_a_frame_declaring_sixty_gigabytes_is_refused_without_reading_it(tmp_path, start):
    """pygls alone allocated the declared size and the process died of MemoryError; now the
    frame is skipped, and a client that never sends the body only makes the server wait for it:
    at the end of input it exits 0 with the reason on stderr. A 1 GiB address space shows that
    nothing near the declared size is allocated."""
    root = tmp_path / "ws"
    root.mkdir()
    server = RawLspServer(root, memory_limit=1024**3, command=STARTS[start])
    try:
        server.initialize()
        assert server.process.stdin is not None
        server.process.stdin.write(b"Content-Length: 60000000000\r\n\r\n{}")
        server.process.stdin.close()
        code = server.process.wait(timeout=30)
    finally:
        server.close()
    stderr = server.stderr_text()
    assert code == 0, stderr[-2000:]
    assert "MemoryError" not in stderr
    assert "refused a message of 60,000,000,000 bytes" in stderr


@pytest.mark.parametrize("start", STARTS)
def test_the_server_keeps_serving_after_an_oversized_frame(tmp_path, start):
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    server = RawLspServer(root, command=STARTS[start])
    try:
        server.initialize()
        server.send_bytes(b" " * (MAX_MESSAGE_BYTES + 1))
        text = '{"id": "after", "steps": []}'
        uri = server.open(root / "workflows" / "after.json", text)
        symbols = server.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        assert symbols["result"][0]["detail"] == "after", symbols
    finally:
        code = server.close()
    assert code == 0
    assert f"refused a message of {MAX_MESSAGE_BYTES + 1:,} bytes" in server.stderr_text()
