"""The stdio wire's bytes: on the event loop for pipes, on a worker thread for anything else."""

from __future__ import annotations

import os
import threading

import anyio
import anyio.to_thread
import pytest

from workrail_mcp.wire_io import MAX_LINE_BYTES, TOO_LONG, LineReader, WireWriter


@pytest.fixture
def no_worker_threads(monkeypatch):
    """Any hand-over to a worker thread fails the test."""

    async def refuse(*_args, **_kwargs):
        raise AssertionError("the wire used a worker thread")

    monkeypatch.setattr(anyio.to_thread, "run_sync", refuse)


@pytest.fixture
def pipe():
    read_end, write_end = os.pipe()
    reading = os.fdopen(read_end, "rb", buffering=0)
    writing = os.fdopen(write_end, "wb", buffering=0)
    yield reading, writing
    for end in (reading, writing):
        if not end.closed:
            end.close()


async def test_a_full_pipe_waits_on_the_loop_without_blocking_it(pipe, no_worker_threads):
    """Lines bigger than the pipe holds arrive whole and in order; the loop runs meanwhile."""
    reading, writing = pipe
    writer = WireWriter(writing)
    lines = [bytes([65 + n]) * 200_000 for n in range(3)]  # each three times a pipe's 64 KiB
    ticks = 0
    received = bytearray()

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0)

    async def drain() -> None:
        reader = LineReader(reading)
        for _ in lines:
            line = await reader.read_line()
            assert line is not None
            received.extend(line + b"\n")

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        group.start_soon(drain)
        with anyio.fail_after(20):
            for line in lines:
                await writer.write_line(line)
        while len(received) < sum(len(line) + 1 for line in lines):
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    assert bytes(received) == b"".join(line + b"\n" for line in lines)
    assert ticks > 3  # the writer waited for room without holding the loop
    assert os.get_blocking(writing.fileno())  # the shared pipe's flags are left alone


async def test_pipe_lines_are_read_on_the_loop_with_the_line_rules(pipe, no_worker_threads):
    reading, writing = pipe
    reader = LineReader(reading)
    writing.write(b'{"a":1}\n{"b":2}\n')
    assert await reader.read_line() == b'{"a":1}'
    assert await reader.read_line() == b'{"b":2}'  # already buffered: no read at all

    def feed() -> None:  # a client of our own, on its own thread (the loop must not block)
        writing.write(b"x" * (MAX_LINE_BYTES + 10) + b"\nlast")
        writing.close()

    client = threading.Thread(target=feed)
    client.start()
    try:
        with anyio.fail_after(30):
            assert await reader.read_line() is TOO_LONG
            assert await reader.read_line() == b"last"
            assert await reader.read_line() is None
    finally:
        client.join()


async def test_a_regular_file_is_read_and_written_on_a_worker_thread(tmp_path):
    """epoll refuses regular files: the wire falls back to threads and behaves the same."""
    path = tmp_path / "wire"
    with open(path, "wb", buffering=0) as out:
        writer = WireWriter(out)
        await writer.write_line(b"one")
        await writer.write_line(b"two")
    with open(path, "rb", buffering=0) as source:
        reader = LineReader(source)
        assert [await reader.read_line() for _ in range(3)] == [b"one", b"two", None]
