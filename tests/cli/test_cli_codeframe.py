"""Code frames: carets under the right columns, whatever the characters before them."""

from __future__ import annotations

import pytest

from workrail_engine.cli.formatters.codeframe import ELLIPSIS, code_frame, printable


def caret_columns(frame: list[str], gutter: int) -> tuple[int, int]:
    """Display columns (0-based, after the gutter) of the first and last caret."""
    marker = frame[2][gutter:]
    return marker.index("^"), marker.rindex("^")


@pytest.mark.parametrize(
    ("line", "start", "end", "first", "last"),
    [
        pytest.param('  "name": 5,', 10, 11, 10, 10, id="one-char"),
        pytest.param('  "title": "x",', 2, 9, 2, 8, id="key-span"),
        pytest.param('  "x": 1', 4, 4, 4, 4, id="empty-span-gets-one-caret"),
        pytest.param('  "x": 1', 6, 99, 6, 7, id="span-running-past-the-line"),
        pytest.param('  "日本": 5', 8, 9, 10, 10, id="wide-chars-before-the-span"),
        pytest.param('  "é": "ü", "x": 9', 17, 18, 17, 17, id="accents-are-one-cell"),
        pytest.param('  "名前": "値"', 8, 11, 10, 13, id="wide-chars-inside-the-span"),
    ],
)
def test_carets_sit_under_the_span(line: str, start: int, end: int, first: int, last: int) -> None:
    frame = code_frame(3, line, start, end)
    assert frame[1] == f"3 | {line}"
    assert caret_columns(frame, len("3 | ")) == (first, last), "\n".join(frame)


def test_tabs_are_repeated_in_the_padding() -> None:
    frame = code_frame(12, '\t\t"id": 3', 8, 9)
    assert frame[2] == "   | \t\t      ^"


def test_gutter_width_follows_the_line_number() -> None:
    frame = code_frame(1234, "x", 0, 1, label="error")
    assert frame == ["     |", "1234 | x", "     | ^ error"]


def test_long_lines_are_cut_around_the_span() -> None:
    line = "a" * 5000 + "TARGET" + "b" * 5000
    frame = code_frame(1, line, 5000, 5006)
    shown = frame[1][len("1 | ") :]
    assert shown.startswith(ELLIPSIS) and shown.endswith(ELLIPSIS)
    assert len(shown) < 200
    first, last = caret_columns(frame, len("1 | "))
    assert shown[first : last + 1] == "TARGET"


def test_control_characters_cannot_reach_the_terminal() -> None:
    assert printable("ok\x1b[31mred\x07") == "ok\ufffd[31mred\ufffd"
    frame = code_frame(1, '"\x1b[2J": 1', 0, 1)
    assert "\x1b" not in "".join(frame)
