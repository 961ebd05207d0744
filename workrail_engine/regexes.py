"""Regular expressions that run in linear time, for `regex` rules and `matches` conditions.

Patterns come from workflow files and are matched against text written by agents, so a
backtracking engine (Python's ``re``) could be made to spin for hours by a pattern like
``(a+)+$``. RE2 (the ``google-re2`` binding) guarantees time linear in the input, at the price of
backreferences and lookaround, which it rejects at compile time; our error messages say so.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import re2

__all__ = ["FLAGS", "CompiledRegex", "RegexError", "compile_regex"]

# i: ignore case, m: ^ and $ match at line breaks, s: . matches a newline
FLAGS = "ims"


class RegexError(ValueError):
    """A pattern or flag string that RE2 cannot compile; ``message`` says why."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class CompiledRegex:
    pattern: str
    flags: str
    _regex: Any = field(repr=False, compare=False)  # an re2 pattern (untyped library)

    def search(self, text: str) -> bool:
        """True when the pattern matches somewhere in ``text`` (unanchored, like JS ``test``)."""
        # Encoding ourselves lets lone surrogates (valid in JSON strings) through instead of
        # raising; RE2 treats those bytes as invalid UTF-8 that matches nothing but ``\C``.
        return self._regex.search(text.encode("utf-8", "surrogatepass")) is not None


def _options(flags: str) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # the engine never prints; errors come back as RegexError
    options.case_sensitive = "i" not in flags
    options.dot_nl = "s" in flags
    return options


def _hint(pattern: str, reason: str) -> str:
    if "invalid perl operator: (?=" in reason or "invalid perl operator: (?!" in reason:
        return " RE2 has no lookahead assertions ((?=…), (?!…)); match the text itself instead."
    if "invalid perl operator: (?<" in reason and ("(?<=" in pattern or "(?<!" in pattern):
        return " RE2 has no lookbehind assertions ((?<=…), (?<!…)); match the text itself instead."
    if "(?P=" in pattern and "invalid perl operator: (?P" in reason:
        return " RE2 has no backreferences ((?P=name)) because they cannot run in linear time."
    if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
        return " RE2 has no backreferences (\\1) because they cannot run in linear time."
    if reason == "invalid escape sequence: \\Z":
        return " RE2 spells end-of-text \\z."
    if reason.startswith("invalid repetition size"):
        return " RE2 allows counted repetitions up to {1000}."
    return ""


def _reason(error: re2.error) -> str:
    raw = error.args[0] if error.args else "invalid pattern"
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def compile_regex(pattern: str, flags: str = "") -> CompiledRegex:
    """Compile ``pattern`` (RE2 syntax) with ``flags`` from "i", "m", "s"; raises RegexError."""
    if not isinstance(pattern, str):
        raise RegexError(f"A regular expression must be a string, not {type(pattern).__name__}.")
    if not isinstance(flags, str):
        raise RegexError(f'Regex flags must be a string such as "im", not {type(flags).__name__}.')
    return _compile(pattern, flags)


@functools.lru_cache(maxsize=512)
def _compile(pattern: str, flags: str) -> CompiledRegex:
    unknown = sorted({flag for flag in flags if flag not in FLAGS})
    if unknown:
        listed = ", ".join(repr(flag) for flag in unknown)
        raise RegexError(
            f"Unknown regex flag(s) {listed}: use i (ignore case), m (multi-line), s (dot matches newline)."
        )
    options = _options(flags)
    try:
        regex = re2.compile(pattern, options)
    except re2.error as error:
        reason = _reason(error)
        raise RegexError(
            f"Invalid regular expression {pattern!r}: {reason}.{_hint(pattern, reason)}"
        ) from None
    if "m" in flags:
        # Perl-mode RE2 has no multi-line option, only the inline flag; a valid pattern stays
        # valid behind it, and errors above quote the author's pattern, not ours.
        regex = re2.compile("(?m)" + pattern, options)
    return CompiledRegex(pattern, flags, regex)
