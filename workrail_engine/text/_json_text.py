"""Strict JSON for workflow files: values fast, spans on demand.

Values come from the standard library's C scanner (a 1 MB file parses in a few milliseconds).
Spans are found lazily: to place a JSON pointer we walk only the containers on its path and skip
every sibling with the same C scanner, remembering where each child started so the next look-up
in the same container is a dictionary hit. A pure-Python walk of the whole text runs only in the
rare slow path (locating duplicate keys).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from ..limits import MAX_NESTING, TOO_DEEP
from .json_pointer import escape_token, unescape_token
from .syntax_problems import RAW_SURROGATE, UNPAIRED_SURROGATE, SyntaxProblem, has_raw_surrogate

__all__ = ["DuplicateKey", "JsonText", "parse_json", "parse_json_fragment"]

_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key repeated in one JSON object, with the spans its diagnostic and fix need."""

    key: str
    container: str  # JSON pointer of the object
    first: tuple[int, int]  # key span of the first occurrence
    again: tuple[int, int]  # key span of the repeated one
    member_end: int  # end of the repeated member's value (for a "remove it" fix)
    member_start: int  # start of the text to remove (includes the separating comma)


class _Reject(ValueError):
    """Raised inside the decoder for the things strict JSON forbids."""


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not valid JSON (use a number or null)")


class _DuplicateSeen(Exception):
    pass


def _pairs_checked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateSeen
    return out


_STRICT = json.JSONDecoder(object_pairs_hook=_pairs_checked, parse_constant=_reject_constant)
_LENIENT_DUPES = json.JSONDecoder(parse_constant=_reject_constant)
_SKIP = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


def _depth_error(text: str) -> SyntaxProblem | None:
    """Where nesting first exceeds MAX_NESTING, or None (strings are skipped, not counted).

    Only for text too deep for Python's C decoder (it stops near the recursion limit): a value
    that parsed is measured by the document model instead.
    """
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING:
                at = match.start()
                return SyntaxProblem(TOO_DEEP, at, at + 1, "WR005")
        elif token in "]}":
            depth -= 1
    return None


def _explain(text: str, err: json.JSONDecodeError) -> SyntaxProblem:
    """Turn the decoder's terse message into one that says what to do, at the right place."""
    pos = min(err.pos, len(text))
    msg = err.msg
    ahead = text[pos : pos + 2]
    before = text[:pos].rstrip()
    if ahead.startswith(("//", "/*")):
        return SyntaxProblem("Comments are not allowed in JSON", pos, pos + 2)
    if msg.startswith(
        ("Expecting property name", "Expecting value", "Illegal trailing comma")
    ) and before.endswith(","):
        comma = len(before) - 1
        return SyntaxProblem(
            "Trailing comma: remove the ',' before the closing bracket",
            comma,
            comma + 1,
            fix_title="Remove the trailing comma",
            fix_start=comma,
            fix_end=comma + 1,
        )
    if ahead[:1] == "'":
        return SyntaxProblem(
            'JSON strings and keys use double quotes ("), not single quotes', pos, pos + 1
        )
    if pos >= len(text.rstrip()):
        unclosed = _unclosed_bracket(text)
        if unclosed is not None:
            bracket, at = unclosed
            line = text.count("\n", 0, at) + 1
            return SyntaxProblem(
                f"The {bracket!r} opened on line {line} is never closed", at, at + 1
            )
    if msg.startswith("Extra data"):
        return SyntaxProblem(
            "Unexpected text after the end of the JSON value", pos, len(text.rstrip())
        )
    if msg.startswith("Expecting ',' delimiter"):
        if "\n" in text[len(before) : pos]:  # the comma belongs at the end of the previous line
            end = len(before)
            return SyntaxProblem(
                "Missing ',' after this value",
                end - 1,
                end,
                fix_title="Insert the missing ','",
                fix_start=end,
                fix_end=end,
                fix_text=",",
            )
        return SyntaxProblem("Expected ',' here", pos, min(pos + 1, len(text)))
    if msg.startswith("Expecting ':' delimiter"):
        return SyntaxProblem("Expected ':' here", pos, min(pos + 1, len(text)))
    if msg.startswith("Unterminated string"):
        return SyntaxProblem(
            "Unterminated string: add the closing '\"'", pos, min(pos + 1, len(text))
        )
    if msg.startswith("Invalid control character"):
        if text[pos] in "\r\n":
            opening = text.rfind('"', 0, pos)
            return SyntaxProblem(
                "Unterminated string: add the closing '\"' before the end of the line", opening, pos
            )
        return SyntaxProblem(
            "Raw control character in a string: escape it (\\n, \\t, …)", pos, pos + 1
        )
    end = pos + 1 if pos < len(text) else pos
    return SyntaxProblem(msg[0].upper() + msg[1:], pos, end)


def _unclosed_bracket(text: str) -> tuple[str, int] | None:
    """The innermost bracket still open at the end of the text (strings skipped), if any."""
    stack: list[tuple[str, int]] = []
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{\]}]', text):
        token = match.group()
        if token in "[{":
            stack.append((token, match.start()))
        elif token in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


# Searched without a `"\\u" in text` first: the pattern's search for its fixed start \u is
# twice as fast as str's (backslashes are common in JSON strings, and "u" more so).
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _surrogate_error(text: str, value: Any) -> SyntaxProblem | None:
    if not (has_raw_surrogate(text) or _ESCAPED_SURROGATE.search(text)):
        return None
    pointer = _find_surrogate(value, "")
    if pointer is None:
        return None
    located = JsonText(text).locate(pointer)
    start, end = located[1] if located else (0, 0)
    return SyntaxProblem(UNPAIRED_SURROGATE, start, end)


def _find_surrogate(value: Any, pointer: str) -> str | None:
    if isinstance(value, str):
        return pointer if RAW_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{escape_token(key)}"
            if RAW_SURROGATE.search(key):
                return child
            found = _find_surrogate(item, child)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_surrogate(item, f"{pointer}/{index}")
            if found is not None:
                return found
    return None


def parse_json(text: str) -> tuple[Any, SyntaxProblem | None, bool]:
    """Parse strictly: ``(value, syntax_error, has_duplicate_keys)``.

    With duplicate keys (and no syntax error) the value is still returned, the last one winning
    as every JSON reader does, so the rest of the file can be checked; the caller reports them.
    """
    if not text.strip():
        return (
            None,
            SyntaxProblem("The file is empty: a workflow is a JSON object", 0, 0, "WR006"),
            False,
        )
    try:
        value, error = _decode(_STRICT, text)
        duplicates = False
    except _DuplicateSeen:
        # The duplicate stopped the strict pass early: a syntax error may still lie further on.
        value, error = _decode(_LENIENT_DUPES, text)
        duplicates = error is None
    if error is None:
        error = _surrogate_error(text, value)
        if error is not None:
            return None, error, False
    return value, error, duplicates


def _decode(decoder: json.JSONDecoder, text: str) -> tuple[Any, SyntaxProblem | None]:
    try:
        return decoder.decode(text), None
    except json.JSONDecodeError as err:
        return None, _explain(text, err)
    except _Reject as err:
        return None, _constant_error(text, str(err))
    except RecursionError:
        return None, _depth_error(text) or SyntaxProblem("Nesting too deep", 0, 0, "WR005")


def parse_json_fragment(text: str) -> Any | None:
    """The value of ``text`` if it is exactly one strict JSON value with no duplicate keys, else None."""
    try:
        value, end = _STRICT.raw_decode(text)
    except (json.JSONDecodeError, _DuplicateSeen, _Reject, RecursionError):
        return None
    if end != len(text) or _surrogate_error(text, value) is not None:
        return None
    return value


def _constant_error(text: str, message: str) -> SyntaxProblem:
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN', text):
        if not match.group().startswith('"'):
            return SyntaxProblem(
                message.replace(message.split(" ")[0], match.group(), 1), match.start(), match.end()
            )
    return SyntaxProblem(message, 0, 0)


def _skip_ws(text: str, pos: int, _match: Any = _WHITESPACE.match) -> int:
    if text[pos] not in " \t\n\r":
        return pos
    return _match(text, pos).end()  # type: ignore[no-any-return]


_EVERY_CHILD = object()


class JsonText:
    """Span look-ups for one well-formed JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text
        # container start offset -> (children found so far, complete?)
        # children: key (str for objects, int for arrays) -> (key_start, key_end, value_start)
        self._children: dict[int, tuple[dict[str | int, tuple[int, int, int]], list[int]]] = {}
        # container start offset -> its end: finding the end of "/steps" means scanning the whole
        # array (~5 ms for 1 MB), which every keystroke's re-parse of one step asks for
        self._ends: dict[int, int] = {}

    def _value_end(self, start: int) -> int:
        end = self._ends.get(start)
        if end is None:
            end = _SKIP(self.text, start)[1]
            if self.text[start] in "[{":
                self._ends[start] = end
        return end

    def _child(self, container: int, key: Any) -> tuple[int, int, int] | None:
        text = self.text
        opener = text[container]
        entry = self._children.get(container)
        if entry is None:
            entry = ({}, [container + 1, 0])  # resume position, index for arrays; 0 = not complete
            self._children[container] = entry
        children, state = entry
        want: Any
        if key is _EVERY_CHILD:
            want = key  # equal to no child: the walk runs to the end of the container
        elif opener == "[":
            if not key.isdigit():
                return None
            want = int(key)
        else:
            want = key
        if want in children:
            return children[want]
        pos, index = state
        if pos < 0:  # already complete
            return None
        closer = "}" if opener == "{" else "]"
        skip_ws, skip_value = _skip_ws, _SKIP  # locals: this loop runs once per sibling
        while True:
            pos = skip_ws(text, pos)
            if text[pos] == ",":
                pos = skip_ws(text, pos + 1)
            if text[pos] == closer:
                state[0] = -1
                return None
            if opener == "{":
                key_start = pos
                name, key_end = scanstring(text, pos + 1)
                pos = skip_ws(text, key_end)
                value_start = skip_ws(text, pos + 1)  # past ':'
                found: str | int = name
            else:
                key_start = key_end = value_start = pos
                found = index
                index += 1
            if found not in children:
                children[found] = (key_start, key_end, value_start)
            pos = skip_value(text, value_start)[1]
            if found == want:
                state[0], state[1] = pos, index
                return children[found]
            state[0], state[1] = pos, index

    def locate(self, pointer: str) -> tuple[tuple[int, int] | None, tuple[int, int]] | None:
        """``(key_span, value_span)`` of the pointer's value, or None when it does not exist."""
        pos = _skip_ws(self.text, 0)
        key_span: tuple[int, int] | None = None
        if pointer:
            for raw in pointer.split("/")[1:]:
                if self.text[pos] not in "[{":
                    return None
                child = self._child(pos, unescape_token(raw))
                if child is None:
                    return None
                key_start, key_end, pos = child
                key_span = (key_start, key_end) if key_end > key_start else None
        return key_span, (pos, self._value_end(pos))

    def duplicate_keys(self) -> list[DuplicateKey]:
        """Every repeated key in every object (slow: walks the whole text in Python)."""
        found: list[DuplicateKey] = []
        self._walk_duplicates(_skip_ws(self.text, 0), "", found)
        return found

    def _walk_duplicates(self, pos: int, pointer: str, found: list[DuplicateKey]) -> int:
        text = self.text
        opener = text[pos]
        if opener not in "[{":
            return self._value_end(pos)
        closer = "}" if opener == "{" else "]"
        seen: dict[str, tuple[int, int]] = {}
        index = 0
        previous_end = pos + 1
        pos += 1
        while True:
            pos = _skip_ws(text, pos)
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
            if text[pos] == closer:
                return pos + 1
            if opener == "{":
                key_start = pos
                name, key_end = scanstring(text, pos + 1)
                value_start = _skip_ws(text, _skip_ws(text, key_end) + 1)
                child = f"{pointer}/{escape_token(name)}"
                end = self._walk_duplicates(value_start, child, found)
                if name in seen:
                    found.append(
                        DuplicateKey(
                            name, pointer, seen[name], (key_start, key_end), end, previous_end
                        )
                    )
                else:
                    seen[name] = (key_start, key_end)
            else:
                end = self._walk_duplicates(pos, f"{pointer}/{index}", found)
                index += 1
            previous_end = end
            pos = end

    def children_starts(self, container: int) -> list[int]:
        """Value starts of every child of the container at ``container``, in order (completes it)."""
        self._child(container, _EVERY_CHILD)
        children, _ = self._children[container]
        return sorted(start for _, _, start in children.values())

    def value_end(self, start: int) -> int:
        return self._value_end(start)

    def edited(self, new_text: str, cut_start: int, cut_end: int, delta: int) -> JsonText:
        """Look-ups for ``new_text``, where the value spanning ``cut_start..cut_end`` changed
        length by ``delta`` and everything outside it is as before: what was found outside is
        kept (shifted), what was found inside is forgotten."""

        def shift(offset: int) -> int:
            return offset + delta if offset >= cut_end else offset

        moved = JsonText(new_text)
        for container, (children, state) in self._children.items():
            if cut_start <= container < cut_end:
                continue
            kept = {key: (shift(a), shift(b), shift(c)) for key, (a, b, c) in children.items()}
            moved._children[shift(container)] = (
                kept,
                [shift(state[0]) if state[0] >= 0 else -1, state[1]],
            )
        moved._ends = {
            shift(start): shift(end)
            for start, end in self._ends.items()
            if not cut_start <= start < cut_end
        }
        return moved
