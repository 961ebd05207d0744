"""RFC 6901 reference tokens, escaped in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from workrail_engine.text.json_pointer import escape_token, pointer_join, unescape_token


@pytest.mark.parametrize(
    "token, escaped",
    [("a/b", "a~1b"), ("m~n", "m~0n"), ("~1", "~01"), ("/~", "~1~0"), (3, "3"), ("", "")],
)
def test_escape_and_back(token, escaped):
    assert escape_token(token) == escaped
    assert unescape_token(escaped) == str(token)


def test_pointer_join():
    assert pointer_join("/steps/0", "run", "env", "A/B") == "/steps/0/run/env/A~1B"


def test_no_module_escapes_pointers_by_hand():
    root = Path(__file__).resolve().parents[3]
    inline = [
        str(path.relative_to(root))
        for package in ("workrail_engine", "workrail_lsp", "workrail_mcp")
        for path in (root / package).rglob("*.py")
        if path.name != "json_pointer.py"
        and ('"~0"' in (text := path.read_text()) or "'~0'" in text or '"~1"' in text)
    ]
    assert inline == []
