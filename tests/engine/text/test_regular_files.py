"""Reading a regular file whole: sized by fstat, but never trusting that size."""

from __future__ import annotations

import os

import pytest

from workrail_engine.text import regular_files
from workrail_engine.text.regular_files import FileTooLarge, read_regular_file


@pytest.mark.parametrize(
    "reported",
    [
        pytest.param(0, id="size-0-as-in-proc"),
        pytest.param(100, id="grew-after-fstat"),
        pytest.param(50_000, id="shrank-after-fstat"),
        pytest.param(None, id="as-it-is"),
    ],
)
def test_the_whole_file_is_read_whatever_fstat_said(tmp_path, monkeypatch, reported):
    path = tmp_path / "w.json"
    data = bytes(range(256)) * 40 + b"end"  # 10,243 bytes
    path.write_bytes(data)
    real_fstat = os.fstat

    def fstat(fd):
        info = real_fstat(fd)
        if reported is None:
            return info
        fields = list(info)
        fields[6] = reported  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(regular_files.os, "fstat", fstat)
    assert read_regular_file(path) == data


def test_a_file_past_the_limit_is_refused_even_when_fstat_says_it_is_small(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 5000)
    real_fstat = os.fstat
    monkeypatch.setattr(
        regular_files.os,
        "fstat",
        lambda fd: os.stat_result([*list(real_fstat(fd))[:6], 10, *list(real_fstat(fd))[7:]]),
    )
    with pytest.raises(FileTooLarge):
        read_regular_file(path, max_bytes=4096)


def test_a_stream_is_read_up_to_the_limit_and_one_byte_more():
    import io

    assert regular_files.read_stream(io.BytesIO(b"x" * 4096), max_bytes=4096) == b"x" * 4096
    endless = io.BytesIO(b"y" * 100_000)
    with pytest.raises(FileTooLarge, match="more than"):
        regular_files.read_stream(endless, max_bytes=4096)
    assert endless.tell() == 4097  # the rest is never read
