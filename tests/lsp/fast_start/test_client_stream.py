"""``ClientStream`` over a real pipe: whole frames by a deadline, the rest left for pygls."""

from __future__ import annotations

import os
import threading
import time

from raw_lsp import frame

from workrail_lsp.fast_start.client_stream import ClientStream


def _stream(*writes: bytes, pause: float = 0.0) -> ClientStream:
    read_end, write_end = os.pipe()

    def write() -> None:
        for data in writes:
            os.write(write_end, data)
            time.sleep(pause)
        os.close(write_end)

    threading.Thread(target=write, daemon=True).start()
    return ClientStream(read_end)


def test_a_frame_written_in_pieces_is_read_whole_and_the_rest_stays():
    first = frame({"method": "initialized", "params": {}})
    second = frame({"id": 1, "method": "shutdown"})
    stream = _stream(first[:10], first[10:30], first[30:] + second[:5], second[5:], pause=0.02)
    raw, message = stream.frame(time.monotonic() + 10, 1 << 20)
    assert raw == first and message["method"] == "initialized"
    header = stream.readline()
    assert header.startswith(b"Content-Length:")
    assert stream.readline() == b"\r\n"
    rest = second.partition(b"\r\n\r\n")[2]
    assert stream.read(len(rest)) == rest
    assert stream.read(1) == b""  # the end of the stream


def test_nothing_by_the_deadline_is_none_and_loses_nothing():
    whole = frame({"method": "initialized"})
    stream = _stream(whole[:12], b"", whole[12:], pause=0.5)
    began = time.monotonic()
    assert stream.frame(began + 0.1, 1 << 20) is None
    assert time.monotonic() - began < 0.4
    assert stream.read(len(whole)) == whole


def test_a_frame_over_the_limit_is_left_to_the_reader():
    big = frame({"method": "x", "params": {"text": "a" * 5000}})
    stream = _stream(big)
    assert stream.frame(time.monotonic() + 10, 1000) is None
    assert stream.read(len(big)) == big
