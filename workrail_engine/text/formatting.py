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
parses strictly is formatted, and the result is kept only when it parses to
the same value: formatting never changes what a workflow means.
"""

from __future__ import annotations

import io
import os
import re
from typing import Any

from .document import parse_document

__all__ = ["format_json", "format_text"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
# What may stand before a YAML document's `---` (comments, blank lines, directives): ruamel.yaml
# drops comments there, so that part is kept aside and put back unchanged.
_YAML_PREAMBLE = re.compile(r"\A(?:[ \t]*(?:#[^\n]*|%[^\n]*)?\n)*---[ \t]*(?:#[^\n]*)?(?:\n|\Z)")


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
    if head and not head.endswith("\n"):
        head += "\n"  # `---` was the last line
    yaml = _yaml_round_trip()
    out = io.StringIO()
    yaml.dump(yaml.load(text[len(preamble.group(0)) if preamble else 0 :]), out)
    return head + out.getvalue()


def format_text(
    text: str, path: str | os.PathLike[str] | None = None, fmt: str | None = None
) -> str | None:
    """The formatted text, or None when ``text`` does not parse (a broken file is left alone)."""
    document = parse_document(text, path, fmt)
    if document.value is None or any(e.is_error for e in document.syntax_errors):
        return None
    body = text[1:] if text.startswith("\ufeff") else text  # the BOM is WR007's fix, not ours
    try:
        formatted = format_yaml(body) if document.format == "yaml" else format_json(body)
    except Exception:  # noqa: BLE001 - a YAML construct the round trip cannot keep: leave the file
        return None
    newline = text.find("\n")
    if (
        newline > 0 and text[newline - 1] == "\r"
    ):  # a CRLF file stays CRLF (ruff's line-ending auto)
        formatted = formatted.replace("\r\n", "\n").replace("\n", "\r\n")
    again = parse_document(formatted, path, document.format)
    if again.value != document.value or again.syntax_errors:
        return None
    return text[: len(text) - len(body)] + formatted
