"""How large a pattern becomes once its counted repetitions are expanded, read from its text.

The backtracking engine (the PyPI ``regex`` package) compiles ``x{n}`` into n copies of ``x``,
nested repetitions into the product of their counts: ``(?:(?:a{1000}){1000}){10}`` takes 5 s and
2.9 GB to compile, and ``{1000}`` three levels deep allocates until the process dies. RE2 refuses
such patterns itself; for the fallback engine, this scan measures the expansion before anything
is compiled. It reads the pattern once, without recursion, and over-counts where unsure (a group's
header, a brace in a verbose-mode comment), never under-counts: each atom (a character, an escape,
a class) weighs 1, a group the sum of what it holds, and a counted repetition multiplies the
weight of what it follows by its upper bound.
"""

from __future__ import annotations

import re

__all__ = ["expanded_size"]

# {n}, {n,}, {n,m} and the regex package's {,m}
_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_AFTER_QUANTIFIER = "?+"  # lazy and possessive suffixes
_BRACED_ESCAPES = frozenset("pPxN")  # escapes whose argument is written in braces


def expanded_size(pattern: str, limit: int) -> int:
    """The expanded size of ``pattern``; any figure above ``limit`` is given as ``limit + 1``."""
    cap = limit + 1
    frames: list[list[int]] = [[0, 0]]  # per open group: [total so far, weight of the last item]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        frame = frames[-1]
        if char == "(":
            if pattern.startswith("(?#", i):  # a comment: to its first ')'
                end = pattern.find(")", i)
                i = n if end < 0 else end + 1
                continue
            frames.append([0, 0])
            i += 1
            continue
        if char == ")" and len(frames) > 1:
            inner = frames.pop()[0]
            frame = frames[-1]
            frame[0] = min(frame[0] + inner, cap)
            frame[1] = inner
            i += 1
            continue
        counted = _COUNTED.match(pattern, i) if char == "{" else None
        if counted and (counted.group(1) or counted.group(3)):
            low, comma, high = counted.groups()
            bound = _count(high) if high else _count(low) + (1 if comma else 0)
            grown = min(frame[1] * max(bound, 1), cap)
            frame[0] = min(frame[0] - frame[1] + grown, cap)
            frame[1] = grown
            i = counted.end()
            while i < n and pattern[i] in _AFTER_QUANTIFIER:
                i += 1
            continue
        i = _atom_end(pattern, i)
        frame[0] = min(frame[0] + 1, cap)
        frame[1] = 1
    total = 0
    for frame in frames:  # unclosed groups (the compiler will refuse them anyway)
        total = min(total + frame[0], cap)
    return total


def _count(digits: str) -> int:
    # int() of thousands of digits is slow, and past 4,300 refused; any such count is too large
    return int(digits) if len(digits) <= 9 else 10**9


def _atom_end(pattern: str, i: int) -> int:
    """Where the atom starting at ``i`` ends: an escape with its argument, a whole class."""
    char = pattern[i]
    if char == "\\":
        if pattern[i + 1 : i + 2] in _BRACED_ESCAPES and pattern[i + 2 : i + 3] == "{":
            end = pattern.find("}", i + 2)  # \p{L}, \x{263a}, \N{…}: not a repetition
            return len(pattern) if end < 0 else end + 1
        return min(i + 2, len(pattern))
    if char == "[":
        return _class_end(pattern, i)
    return i + 1


def _class_end(pattern: str, i: int) -> int:
    """The end of the class opening at ``i`` (nested sets, escapes, a leading ']' or '^]')."""
    depth, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            depth += 1
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # a ']' first in a class is a literal
                i += 1
            continue
        if char == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n
