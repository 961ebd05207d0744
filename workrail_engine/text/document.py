"""Workflow documents: text → values, the span of any JSON pointer, and syntax errors.

Every front end builds on this one model. JSON is parsed strictly (duplicate keys, comments,
trailing commas and ``NaN`` are errors); YAML through PyYAML with node marks. Spans are character
offsets; ``LineIndex`` turns them into lines and columns in the unit a client wants.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING, Any, BinaryIO

from ..definition.steps import StepSite, walk_steps
from ..diagnostics import Diagnostic, Fix, Related, Severity, Span, TextEdit
from ..limits import MAX_DOCUMENT_BYTES, MAX_NESTING, TOO_DEEP, nesting_exceeded
from ._json_text import JsonText, parse_json, parse_json_fragment
from .json_pointer import escape_token, pointer_join, unescape_token
from .pointer_spans import PointerSpans
from .regular_files import FileTooLarge, UnreadableFile, read_regular_file, read_stream

if TYPE_CHECKING:
    from ._yaml_text import YamlParse
    from .strict_tree import StrictSpans
    from .tolerant_document import TolerantDocument

__all__ = [
    "LineIndex",
    "UnreadableText",
    "WorkflowDocument",
    "detect_format",
    "parse_document",
    "read_document",
    "read_workflow_text",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Line starts of a text, for offset ↔ (line, column) in code points, UTF-16 or UTF-8 units."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._only_newlines = "\r" not in text
        self._ascii = text.isascii()

    @cached_property
    def starts(self) -> list[int]:
        """The offset of each line's first character."""
        text = self.text
        if not self._only_newlines:
            return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        # the usual case, in C: each line's length + 1, summed (~2.5× the regex's speed)
        lengths = map(len, text.split("\n")[:-1])
        return [0, *accumulate(map((1).__add__, lengths))]

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def edited(self, text: str, start: int, end: int, new_text: str) -> LineIndex:
        """The index of ``text``, which is this text with ``[start, end)`` replaced by ``new_text``.

        Line starts outside the edit are kept (shifted after it) instead of scanning the whole
        text again: on a 1 MB document that is ~1 ms instead of ~25 ms per keystroke.
        """
        old = self.text
        near = old[max(0, start - 1) : start] + old[end : end + 1] + new_text
        if "\r" in near:  # a \r next to the edit may pair with a \n: rescan everything
            return LineIndex(text)
        index = LineIndex.__new__(LineIndex)
        index.text = text
        index._only_newlines = self._only_newlines and "\r" not in new_text
        delta = len(new_text) - (end - start)
        before = self.starts[: bisect_right(self.starts, start)]
        inside = [start + m.end() for m in _LINE_BREAK.finditer(new_text)]
        after = [s + delta for s in self.starts[bisect_right(self.starts, end) :]]
        index.starts = before + inside + after
        index._ascii = self._ascii and new_text.isascii()
        return index

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def line_text(self, line: int) -> str:
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, offset: int, encoding: str = "utf-32") -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        if "starts" not in self.__dict__ and self._only_newlines:
            # A few positions of a text never edited (`workrail validate`'s reports): counted in
            # C up to each, rather than every line start found first (a third of the JSON
            # report's instructions).
            line = self.text.count("\n", 0, offset)
            prefix_start = self.text.rfind("\n", 0, offset) + 1
        else:
            line = self.line_of(offset)
            prefix_start = self.starts[line]
        column = offset - prefix_start
        if not self._ascii and encoding != "utf-32":
            column = _units(self.text[prefix_start:offset], encoding)
        return line, column

    def offset(self, line: int, column: int, encoding: str = "utf-32") -> int:
        if line >= len(self.starts):
            return len(self.text)
        if line < 0:
            return 0
        start = self.starts[line]
        text = self.line_text(line)
        if self._ascii or encoding == "utf-32":
            return start + max(0, min(column, len(text)))
        units = 0
        for index, char in enumerate(text):
            if units >= column:
                return start + index
            units += _units(char, encoding)
        return start + len(text)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


def detect_format(path: str | os.PathLike[str] | None, text: str = "") -> str:
    if path is not None and str(path).lower().endswith((".yaml", ".yml")):
        return "yaml"
    return "json"


@dataclass
class WorkflowDocument(PointerSpans):
    """One workflow file as text, with its parsed value and a way to place any JSON pointer."""

    text: str
    path: str | None
    format: str
    value: Any | None
    syntax_errors: list[Diagnostic] = field(default_factory=list)
    # Per-step lint results by step identity, shared with the documents made from this one by
    # with_edit (see lint/step_check_cache.py).
    lint_cache: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    _json: JsonText | None = field(default=None, repr=False)
    _yaml: YamlParse | None = field(default=None, repr=False)

    @cached_property
    def line_index(self) -> LineIndex:
        return LineIndex(self.text)

    @cached_property
    def step_sites(self) -> list[StepSite]:
        """Every step of the value with its pointer (`walk_steps`), walked once for all the
        per-file and cross-file checks of this document (the value is never changed in place:
        an edit makes a new document)."""
        return list(walk_steps(self.value))

    @cached_property
    def tolerant(self) -> TolerantDocument:
        """The tree every editor feature reads, recovered when the text is broken (see
        tolerant_document); the strict value, when there is one, is its value."""
        from .tolerant_document import parse_tolerant

        return parse_tolerant(self.text, self.format, self.value, self.path, self._yaml_spans)

    @property
    def _yaml_spans(self) -> StrictSpans | None:
        return self._yaml.spans if self._yaml is not None else None

    @property
    def ok(self) -> bool:
        """Parsed into a value (duplicate keys and other findings may still be reported)."""
        return self.value is not None

    def _locate(self, pointer: str) -> tuple[tuple[int, int] | None, tuple[int, int]] | None:
        if self._json is not None:
            try:
                return self._json.locate(pointer)
            except (IndexError, ValueError):
                return None
        if self._yaml is not None:
            return self._yaml.locate(pointer)
        return None

    def value_span(self, pointer: str) -> Span | None:
        found = self._locate(pointer)
        return Span(*found[1]) if found else None

    def key_span(self, pointer: str) -> Span | None:
        found = self._locate(pointer)
        return Span(*found[0]) if found and found[0] else None

    def with_edit(self, start: int, end: int, new_text: str) -> WorkflowDocument:
        """This document with ``text[start:end]`` replaced by ``new_text``.

        An edit inside one top-level step of a well-formed JSON workflow re-parses that step
        alone and keeps every other step's object, so per-step results can be reused; any other
        edit parses the new text from scratch. Either way the result equals
        ``parse_document(new text)``.
        """
        text = self.text[:start] + new_text + self.text[end:]
        document = None
        if _utf8_size_over_limit(text) is None:
            document = self._splice(start, end, text, len(new_text) - (end - start))
        if document is None:
            document = parse_document(text, self.path, self.format)
            document.lint_cache = self.lint_cache
        if "line_index" in self.__dict__:  # computed here already: shift it rather than rebuild
            document.__dict__["line_index"] = self.line_index.edited(text, start, end, new_text)
        if "tolerant" in self.__dict__:  # an incremental re-parse (~1 ms) instead of a full one
            tree = self.tolerant.edited(start, end, new_text)
            document.__dict__["tolerant"] = tree.with_strict_value(
                document.value, document._yaml_spans
            )
        return document

    def _splice(self, start: int, end: int, text: str, delta: int) -> WorkflowDocument | None:
        value = self.value
        if (
            self._json is None
            or self.syntax_errors
            or not isinstance(value, dict)
            or not isinstance(value.get("steps"), list)
        ):
            return None
        steps_span = self.value_span("/steps")
        if steps_span is None or not steps_span.start < start <= end < steps_span.end:
            return None
        starts = self._json.children_starts(steps_span.start)
        index = bisect_right(starts, start) - 1
        if index < 0:
            return None
        step_start = starts[index]
        step_end = self._json.value_end(step_start)
        # Strictly inside the step's braces, so the edit cannot merge it with a neighbour.
        if not (self.text[step_start] == "{" and step_start < start and end < step_end):
            return None
        step = parse_json_fragment(text[step_start : step_end + delta])
        if not isinstance(step, dict) or nesting_exceeded(step, MAX_NESTING - 2) is not None:
            return None  # a step sits 2 levels down (the workflow, its steps)
        steps = list(value["steps"])
        steps[index] = step
        moved = self._json.edited(text, step_start, step_end, delta)
        return WorkflowDocument(
            text,
            self.path,
            "json",
            {**value, "steps": steps},
            lint_cache=self.lint_cache,
            _json=moved,
        )


def _syntax(code: str, message: str, start: int, end: int) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, "", Span(start, max(start, end)))


def parse_document(
    text: str, path: str | os.PathLike[str] | None = None, fmt: str | None = None
) -> WorkflowDocument:
    """Parse ``text`` (a workflow in JSON or YAML) into a document; never raises for bad input."""
    fmt = fmt or detect_format(path, text)
    name = os.fspath(path) if path is not None else None
    size = _utf8_size_over_limit(text)
    if size is not None:  # an editor's buffer is bounded like a file on disk
        return _refused(text, name, fmt, "WR004", _too_large(size))
    bom = text.startswith("\ufeff")
    document = _parse_yaml(text, name, bom) if fmt == "yaml" else _parse_json(text, name, bom)
    if bom:
        document.syntax_errors.insert(0, _BOM_WARNING)
    return document


def _utf8_size_over_limit(text: str) -> int | None:
    """The text's size in UTF-8 bytes when it exceeds MAX_DOCUMENT_BYTES, else None."""
    if len(text) * 4 <= MAX_DOCUMENT_BYTES:  # no UTF-8 character takes more than 4 bytes
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > MAX_DOCUMENT_BYTES else None


def _too_large(size: int) -> str:
    return (
        f"File too large ({size / 1_048_576:.1f} MiB; "
        f"the limit is {MAX_DOCUMENT_BYTES / 1_048_576:g} MiB)"
    )


def _refused(text: str, name: str | None, fmt: str, code: str, message: str) -> WorkflowDocument:
    """A document whose text is kept but not parsed, with one error at its start."""
    return WorkflowDocument(text, name, fmt, None, [_syntax(code, message, 0, min(1, len(text)))])


def _too_deep(start: int) -> Diagnostic:
    return _syntax("WR005", TOO_DEEP, start, start + 1)


def _could_exceed_nesting(text: str) -> bool:
    """False when the text holds too few brackets to nest past the limit (most files): the
    depth walk is skipped."""
    return text.count("{") + text.count("[") > MAX_NESTING


# RFC 8259 lets a parser ignore a byte-order mark, and editors on Windows write one: accept it,
# with a warning and a fix, rather than fail the whole file on an invisible character.
_BOM_WARNING = Diagnostic(
    "WR007",
    Severity.WARNING,
    "The file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM",
    "",
    Span(0, 1),
    fixes=(Fix("Remove the byte-order mark", (TextEdit(Span(0, 1), ""),), safe=True),),
)


def _parse_json(text: str, name: str | None, bom: bool) -> WorkflowDocument:
    parsed_text = " " + text[1:] if bom else text  # same length: every span stays right
    value, json_error, has_duplicates = parse_json(parsed_text)
    if json_error is not None:
        error = _syntax(json_error.code, json_error.message, json_error.start, json_error.end)
        if json_error.fix_title is not None:
            edit = TextEdit(Span(json_error.fix_start, json_error.fix_end), json_error.fix_text)
            error = replace(error, fixes=(Fix(json_error.fix_title, (edit,), safe=True),))
        return WorkflowDocument(text, name, "json", None, [error])
    json_text = JsonText(parsed_text)
    if _could_exceed_nesting(text):
        too_deep = nesting_exceeded(value)
        if too_deep is not None:
            found = json_text.locate(pointer_join("", *too_deep))
            start = found[1][0] if found else 0
            return WorkflowDocument(text, name, "json", None, [_too_deep(start)])
    document = WorkflowDocument(text, name, "json", value, _json=json_text)
    if has_duplicates:
        document.syntax_errors.extend(_json_duplicates(json_text))
    return document


def _parse_yaml(text: str, name: str | None, bom: bool) -> WorkflowDocument:
    from ._yaml_text import parse_yaml  # PyYAML costs ~25 ms to import; JSON-only runs skip it

    shift = 1 if bom else 0  # PyYAML's marks do not count the BOM
    parsed, error = parse_yaml(text[shift:])
    if error is not None:
        return WorkflowDocument(
            text,
            name,
            "yaml",
            None,
            [_syntax(error.code, error.message, error.start + shift, error.end + shift)],
        )
    assert parsed is not None
    if shift:
        parsed.shift(shift)
    document = WorkflowDocument(text, name, "yaml", parsed.value, _yaml=parsed)
    document.syntax_errors.extend(_yaml_duplicates(parsed))
    return document


def _duplicate(
    name: str, pointer: str, first: tuple[int, int], again: tuple[int, int], fix: Fix | None
) -> Diagnostic:
    return Diagnostic(
        "WR002",
        Severity.ERROR,
        f"Duplicate key {name!r}: a later value silently replaces the earlier one",
        pointer,
        Span(*again),
        related=(Related(f"{name!r} is first defined here", Span(*first)),),
        fixes=(fix,) if fix else (),
    )


def _json_duplicates(json_text: JsonText) -> list[Diagnostic]:
    out = []
    for dup in json_text.duplicate_keys():
        escaped = escape_token(dup.key)
        fix = Fix(
            f"Remove the repeated {dup.key!r}",
            (TextEdit(Span(dup.member_start, dup.member_end), ""),),
        )
        out.append(_duplicate(dup.key, f"{dup.container}/{escaped}", dup.first, dup.again, fix))
    return out


def _yaml_duplicates(parsed: YamlParse) -> list[Diagnostic]:
    return [
        _duplicate(
            unescape_token(pointer.rsplit("/", 1)[1]),
            pointer,
            first,
            again,
            None,
        )
        for pointer, first, again in parsed.duplicates
    ]


def _unreadable(path: str | None, code: str, message: str, text: str = "") -> WorkflowDocument:
    # The diagnostic sits at the end of what could be read: for a bad byte, right where it is.
    at = len(text)
    return WorkflowDocument(text, path, detect_format(path), None, [_syntax(code, message, at, at)])


class UnreadableText(ValueError):
    """Bytes that are no workflow text: too many, binary, or not UTF-8. ``code`` is the
    diagnostic's (WR003 or WR004); ``readable`` the text before the first bad byte."""

    def __init__(self, code: str, message: str, readable: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.readable = readable

    def document(self, path: str | None) -> WorkflowDocument:
        """The unparsed document whose one diagnostic says why (``path``: None for standard
        input without ``--stdin-filename``)."""
        return _unreadable(path, self.code, str(self), self.readable)


def read_workflow_text(source: str | os.PathLike[str] | BinaryIO) -> str:
    """The text of a workflow file, or of a stream (standard input) read the same way: at most
    MAX_DOCUMENT_BYTES, UTF-8, no NUL bytes; raises `UnreadableText` for anything else."""
    try:
        if isinstance(source, (str, os.PathLike)):
            data = read_regular_file(source)
        else:
            data = read_stream(source)
    except FileTooLarge as err:
        raise UnreadableText("WR004", str(err)) from None
    except UnreadableFile as err:
        raise UnreadableText("WR003", str(err)) from None
    if b"\x00" in data[:8192]:
        raise UnreadableText("WR003", "Binary file (it contains NUL bytes): not a workflow")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        good = data[: err.start].decode("utf-8")
        line = good.count("\n") + 1
        column = len(good) - (good.rfind("\n") + 1) + 1
        raise UnreadableText(
            "WR003",
            f"Not UTF-8: byte 0x{data[err.start]:02x} at line {line}, column {column}; save the file as UTF-8",
            good,
        ) from None


def read_document(path: str | os.PathLike[str]) -> WorkflowDocument:
    """Read and parse a file; every way a file can be unreadable becomes a diagnostic.

    Only regular files of at most MAX_DOCUMENT_BYTES are read (see regular_files): a FIFO, a
    device or a directory is a WR003, never a read that blocks or never ends.
    """
    name = os.fspath(path)
    try:
        text = read_workflow_text(name)
    except UnreadableText as refused:
        return refused.document(name)
    return parse_document(text, name)
