"""The one layout of a workflow file: ``workrail format`` writes it, the language server's
"Format Document" offers it (both call :func:`format_text`).

JSON: 2-space indentation, one member or item per line, empty ``{}``/``[]`` kept together, keys in
their written order and every scalar exactly as written. The text is re-emitted token by token
rather than through ``json.dumps``, so numbers like ``1.0`` or ``1e3`` and string escapes stay as
the author wrote them.

YAML: ruamel.yaml's round trip (comments, key order, quoting, anchors, flow collections and block
scalars kept), with mappings indented by 2 and sequence items by 4 with the dash at 2
(``steps:\\n  - id: x``); nulls are spelled ``null``; lines are never re-wrapped.

Line breaks stay as the file has them (CRLF when its first line ends so). Only a document that
parses strictly is formatted, and the result is kept only when it parses to the same value and
keeps every comment of the text, in order: formatting never changes what a workflow means, and
never loses what its author wrote beside it (ruamel.yaml drops a comment inside a multi-line flow
collection; such a file is left as it is, :attr:`Formatted.refusal` says which comment).
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from typing import Any

from .document import parse_document

__all__ = ["Formatted", "format_json", "format_text", "try_format", "yaml_comments"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
# What may stand before a YAML document's `---` (comments, blank lines, directives): ruamel.yaml
# drops comments there, so that part is kept aside and put back unchanged.
_YAML_PREAMBLE = re.compile(r"\A(?:[ \t]*(?:#[^\n]*|%[^\n]*)?\n)*---[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
# The same after the document: its end marker `...` and only comments and blank lines after it,
# which ruamel.yaml drops with the marker.
_YAML_POSTSCRIPT = re.compile(r"(?:^|\n)\.\.\.[ \t\r]*(?:#[^\n]*)?(?:\n[ \t\r]*(?:#[^\n]*)?)*\Z")


def format_json(text: str, indent: str = "  ") -> str:
    """``text`` (valid JSON) laid out one member per line; ends with a newline."""
    out: list[str] = []
    depth = 0
    tokens = _TOKEN.findall(text)
    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token in "{[" and len(token) == 1:
            if following in ("}", "]"):
                out.append(token)  # the closer follows right away: "{}" / "[]"
                continue
            depth += 1
            out.append(token + "\n" + indent * depth)
        elif token in "}]" and len(token) == 1:
            previous = tokens[position - 1] if position else ""
            if previous not in ("{", "["):
                depth -= 1
                out.append("\n" + indent * depth)
            out.append(token)
        elif token == ",":
            out.append(",\n" + indent * depth)
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
    return "".join(out) + "\n"


def _yaml_round_trip() -> Any:
    from ruamel.yaml import YAML  # imported on the first YAML file only

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = (
        1 << 30
    )  # never fold a long line: that would be a change the author did not ask for
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(
        type(None),
        lambda representer, _: representer.represent_scalar("tag:yaml.org,2002:null", "null"),
    )
    return yaml


def format_yaml(text: str) -> str:
    """``text`` (valid YAML, one document) in the layout above."""
    preamble = _YAML_PREAMBLE.match(text)
    head = preamble.group(0) if preamble else ""
    postscript = _YAML_POSTSCRIPT.search(text, len(head))
    tail = postscript.group(0).removeprefix("\n") if postscript else ""
    body = text[len(head) : len(text) - len(tail)]
    if head and not head.endswith("\n"):
        head += "\n"  # `---` was the last line
    yaml = _yaml_round_trip()
    out = io.StringIO()
    yaml.dump(yaml.load(body), out)
    return head + out.getvalue() + tail


def yaml_comments(text: str) -> list[tuple[int, str]]:
    """Every comment of a YAML text that scans, as (0-based line, text without trailing blanks).

    From libyaml's tokens: what lies between two tokens is blanks, line breaks and comments, so
    a ``#`` there starts one; inside a token (a quoted or plain scalar, a block scalar's lines) it
    is text, except in a block scalar's header line (``prompt: |  # why``).
    """
    import yaml

    from ._yaml_text import _Loader

    found: list[int] = []
    scanned_to = 0
    for token in yaml.scan(text, Loader=_Loader):
        start, end = token.start_mark.index, token.end_mark.index
        found += _comments_between(text, scanned_to, start)
        if isinstance(token, yaml.ScalarToken) and token.style in ("|", ">"):
            header_end = text.find("\n", start, end)
            header = text[start : end if header_end < 0 else header_end]
            mark = re.search(r"[ \t]#", header)
            found += [start + mark.start() + 1] if mark else []
        scanned_to = max(scanned_to, end)
    found += _comments_between(text, scanned_to, len(text))
    comments, line, counted_to = [], 0, 0
    for at in found:  # in text order: count the lines between one comment and the next only
        line += text.count("\n", counted_to, at)
        counted_to = at
        comments.append((line, _line_from(text, at).rstrip()))
    return comments


def _comments_between(text: str, start: int, end: int) -> list[int]:
    """Where each comment starts in ``text[start:end]``, a stretch between two tokens."""
    starts = []
    at = text.find("#", start, end)
    while at >= 0:
        starts.append(at)
        line_end = text.find("\n", at, end)
        at = -1 if line_end < 0 else text.find("#", line_end, end)
    return starts


def _line_from(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start : len(text) if end < 0 else end]


def _lost_comment(before: str, after: str) -> str | None:
    """Why ``after`` cannot stand for ``before``: the first of its comments missing or moved."""
    if "#" not in before:
        return None
    kept = [comment for _, comment in yaml_comments(after)]
    for index, (line, comment) in enumerate(yaml_comments(before)):
        if index >= len(kept) or kept[index] != comment:
            return f"the layout would drop the comment on line {line + 1} ({comment})"
    return None


@dataclass(frozen=True, slots=True)
class Formatted:
    """The formatted text, or None and why the text is left as it is."""

    text: str | None
    refusal: str = ""


def format_text(
    text: str, path: str | os.PathLike[str] | None = None, fmt: str | None = None
) -> str | None:
    """The formatted text, or None when ``text`` is left alone (see :func:`try_format`)."""
    return try_format(text, path, fmt).text


def try_format(
    text: str, path: str | os.PathLike[str] | None = None, fmt: str | None = None
) -> Formatted:
    """The formatted text; a text that does not parse, or whose layout would change its value or
    lose a comment, is left alone (``text`` None, ``refusal`` saying why)."""
    document = parse_document(text, path, fmt)
    if document.value is None or any(e.is_error for e in document.syntax_errors):
        return Formatted(None, "it does not parse (`workrail validate` says why)")
    body = text[1:] if text.startswith("\ufeff") else text  # the BOM is WR007's fix, not ours
    try:
        formatted = format_yaml(body) if document.format == "yaml" else format_json(body)
    except Exception:  # noqa: BLE001 - a YAML construct the round trip cannot keep: leave the file
        return Formatted(None, "the YAML layout cannot keep a construct of it")
    lost = _lost_comment(body, formatted) if document.format == "yaml" else None
    if lost:
        return Formatted(None, lost)
    newline = text.find("\n")
    if (
        newline > 0 and text[newline - 1] == "\r"
    ):  # a CRLF file stays CRLF (ruff's line-ending auto)
        formatted = formatted.replace("\r\n", "\n").replace("\n", "\r\n")
    again = parse_document(formatted, path, document.format)
    if again.value != document.value or again.syntax_errors:
        return Formatted(None, "the layout would change its value")
    return Formatted(text[: len(text) - len(body)] + formatted)
