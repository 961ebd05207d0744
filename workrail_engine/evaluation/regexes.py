"""Regular expressions for `regex` rules and `matches` conditions: RE2 first, bounded fallback.

Patterns come from workflow files and are matched against text written by agents, so a
backtracking engine (Python's ``re``) could be made to spin for hours by a pattern like
``(a+)+$``. RE2 (the ``google-re2`` binding) guarantees time linear in the input, at the price of
backreferences and lookaround, which it rejects at compile time.

Upstream WorkRail's patterns are JavaScript regexes, and some use lookahead (``(?!.*TODO)``). A
pattern RE2 rejects only for lookaround or backreferences therefore falls back to the PyPI
``regex`` engine, which backtracks but takes a hard time limit per match
(``BACKTRACKING_TIMEOUT_SECONDS``): a match that runs out of time counts as no match, so a hostile
pattern still cannot hang the server. Such a pattern carries a ``notice`` that the linter shows
as a warning (WR405). Any other pattern RE2 rejects is an error, with a message that says why.

The fallback is bounded twice more. Its compilation expands counted repetitions (``(?:a{1000}){1000}``
is a million copies), so a pattern whose expansion, read from its text (``_regex_size``), passes
``MAX_BACKTRACKING_PATTERN_SIZE`` is refused before it is compiled. And the per-match limit alone
lets 200 rules cost 20 s, so one call — a validation of one output, one next step, one condition —
shares ``MAX_BACKTRACKING_SECONDS_PER_CALL`` among all its fallback matches
(`backtracking_budget`); once that is spent, the call's remaining fallback matches count as no
match without running.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import re2

from ._regex_size import expanded_size

__all__ = [
    "BACKTRACKING_TIMEOUT_SECONDS",
    "FLAGS",
    "MAX_BACKTRACKING_PATTERN_SIZE",
    "MAX_BACKTRACKING_SECONDS_PER_CALL",
    "CompiledRegex",
    "RegexError",
    "backtracking_budget",
    "compile_regex",
]

# i: ignore case, m: ^ and $ match at line breaks, s: . matches a newline
FLAGS = "ims"
# The time one match of a fallback (backtracking) pattern may take before it counts as no match:
# what a hostile pattern can cost a validation of agent output. The `regex` engine checks its
# clock periodically, so a loaded machine may overshoot it a few times.
BACKTRACKING_TIMEOUT_SECONDS = 0.1
# All the fallback matches of one call together (see the module's docstring): ten matches that
# each run out of time, where a real pattern takes microseconds.
MAX_BACKTRACKING_SECONDS_PER_CALL = 1.0
# The expanded size (atoms once counted repetitions are multiplied out) a fallback pattern may
# have: compiling 10,000 takes ~15 ms and ~3 MB here; a million took 1 s and 280 MB.
MAX_BACKTRACKING_PATTERN_SIZE = 10_000

_call_deadline: ContextVar[float | None] = ContextVar("workrail_regex_deadline", default=None)


@contextmanager
def backtracking_budget(seconds: float = MAX_BACKTRACKING_SECONDS_PER_CALL) -> Iterator[None]:
    """One call's fallback matches share ``seconds``; inside another budget, that one holds."""
    if _call_deadline.get() is not None:
        yield
        return
    token = _call_deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _call_deadline.reset(token)


def _match_timeout() -> float:
    """How long the next fallback match may take: its own limit, or what is left of the call's."""
    deadline = _call_deadline.get()
    if deadline is None:
        return BACKTRACKING_TIMEOUT_SECONDS
    return min(BACKTRACKING_TIMEOUT_SECONDS, deadline - time.monotonic())


class RegexError(ValueError):
    """A pattern or flag string that RE2 cannot compile; ``message`` says why."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class CompiledRegex:
    """A pattern compiled as it will run: by RE2, or by the time-limited fallback."""

    pattern: str
    flags: str
    _regex: Any = field(repr=False, compare=False)  # an re2 pattern (untyped library)
    # Set when RE2 could not run the pattern and the time-limited backtracking engine does.
    notice: str | None = None

    @property
    def backtracking(self) -> bool:
        return self.notice is not None

    def search(self, text: str) -> bool:
        """True when the pattern matches somewhere in ``text`` (unanchored, like JS ``test``)."""
        if self.backtracking:
            timeout = _match_timeout()
            if timeout <= 0:
                return False  # the call's time for backtracking is spent
            try:
                found = self._regex.search(text, timeout=timeout)
            except TimeoutError:
                return False  # bounded: a pattern that backtracks too long matches nothing
            return found is not None
        # Encoding ourselves lets lone surrogates (valid in JSON strings) through instead of
        # raising; RE2 treats those bytes as invalid UTF-8 that matches nothing but ``\C``.
        return self._regex.search(text.encode("utf-8", "surrogatepass")) is not None


def _options(flags: str) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # the engine never prints; errors come back as RegexError
    options.case_sensitive = "i" not in flags
    options.dot_nl = "s" in flags
    return options


def _backtracking_feature(pattern: str, reason: str) -> str | None:
    """The construct RE2 refused for want of backtracking, or None for any other reason."""
    if "invalid perl operator: (?=" in reason or "invalid perl operator: (?!" in reason:
        return "lookahead ((?=…), (?!…))"
    if "invalid perl operator: (?<" in reason and ("(?<=" in pattern or "(?<!" in pattern):
        return "lookbehind ((?<=…), (?<!…))"
    if "(?P=" in pattern and "invalid perl operator: (?P" in reason:
        return "backreferences ((?P=name))"
    if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
        return "backreferences (\\1)"
    return None


def _hint(pattern: str, reason: str) -> str:
    if reason == "invalid escape sequence: \\Z":
        return " RE2 spells end-of-text \\z."
    if reason.startswith("invalid repetition size"):
        return (
            " RE2 allows counted repetitions up to {1000}, and nested ones whose counts "
            "multiply to at most 1000."
        )
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
        feature = _backtracking_feature(pattern, reason)
        if feature is not None:
            return _backtracking(pattern, flags, feature)
        raise RegexError(
            f"Invalid regular expression {pattern!r}: {reason}.{_hint(pattern, reason)}"
        ) from None
    if "m" in flags:
        # Perl-mode RE2 has no multi-line option, only the inline flag; a valid pattern stays
        # valid behind it, and errors above quote the author's pattern, not ours.
        regex = re2.compile("(?m)" + pattern, options)
    return CompiledRegex(pattern, flags, regex)


def _backtracking(pattern: str, flags: str, feature: str) -> CompiledRegex:
    """The pattern on the time-limited backtracking engine; RegexError when it is broken."""
    import regex as backtracking_engine  # type: ignore[import-untyped]

    options = 0
    if "i" in flags:
        options |= backtracking_engine.IGNORECASE
    if "m" in flags:
        options |= backtracking_engine.MULTILINE
    if "s" in flags:
        options |= backtracking_engine.DOTALL
    if expanded_size(pattern, MAX_BACKTRACKING_PATTERN_SIZE) > MAX_BACKTRACKING_PATTERN_SIZE:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        raise RegexError(
            f"The regular expression {shown!r} uses {feature}, which only the backtracking engine "
            "runs, and it is too large for that engine: with its counted repetitions ({n}) "
            f"multiplied out, it expands past {MAX_BACKTRACKING_PATTERN_SIZE:,} elements "
            "(characters, classes, groups). Use smaller counts, or drop the lookaround so that "
            "RE2 runs it."
        )
    try:
        compiled = backtracking_engine.compile(pattern, options)
    except backtracking_engine.error as error:
        raise RegexError(f"Invalid regular expression {pattern!r}: {error}.") from None
    notice = (
        f"RE2 cannot run {feature} in {pattern!r}; it runs on a backtracking engine instead, "
        f"with a limit of {BACKTRACKING_TIMEOUT_SECONDS:g} s per match (a match that takes "
        "longer counts as no match)."
    )
    return CompiledRegex(pattern, flags, compiled, notice)
