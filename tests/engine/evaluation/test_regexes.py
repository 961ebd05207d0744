"""Linear-time regexes (RE2); lookaround and backreferences on a time-limited fallback; clear
errors for the rest."""

from __future__ import annotations

import time

import pytest

from workrail_engine.evaluation.regexes import (
    BACKTRACKING_TIMEOUT_SECONDS,
    CompiledRegex,
    RegexError,
    compile_regex,
)


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "found"),
    [
        pytest.param("auth", "", "JWT authentication", True, id="substring"),
        pytest.param("AUTH", "", "authentication", False, id="case-sensitive-by-default"),
        pytest.param("AUTH", "i", "authentication", True, id="flag-i"),
        pytest.param("^b$", "", "a\nb\nc", False, id="anchors-whole-text-by-default"),
        pytest.param("^b$", "m", "a\nb\nc", True, id="flag-m"),
        pytest.param("a.b", "", "a\nb", False, id="dot-excludes-newline"),
        pytest.param("a.b", "s", "a\nb", True, id="flag-s"),
        pytest.param("A.B$", "ims", "x\na\nB\ny", True, id="all-flags"),
        pytest.param(r"\d{3}-\d{4}", "", "call 555-1234", True, id="perl-classes"),
        pytest.param(r"(?P<word>\w+)!", "", "hey!", True, id="named-group"),
        pytest.param(r"^\p{Greek}+$", "", "αβγ", True, id="unicode-class"),
        pytest.param("x", "", "\ud800x", True, id="lone-surrogate-in-text"),
    ],
)
def test_search(pattern: str, flags: str, text: str, found: bool) -> None:
    assert compile_regex(pattern, flags).search(text) is found


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        pytest.param(r"foo(?=bar", "missing )", id="broken-lookahead"),
        pytest.param(r"end\Z", r"spells end-of-text \z", id="backslash-Z"),
        pytest.param(r"a{1001}", "up to {1000}", id="repetition-too-large"),
        pytest.param(r"a(", "missing )", id="unbalanced-paren"),
        pytest.param(r"[z-a]", "invalid character class range", id="bad-range"),
        pytest.param(r"a**", "bad repetition operator", id="double-star"),
    ],
)
def test_invalid_patterns_say_why(pattern: str, expected: str) -> None:
    with pytest.raises(RegexError) as caught:
        compile_regex(pattern)
    assert expected in caught.value.message
    assert repr(pattern) in caught.value.message  # quotes the author's pattern, not an internal one


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param("g", "'g'", id="js-global-flag"),
        pytest.param("ix", "'x'", id="one-unknown-among-known"),
        pytest.param(5, "must be a string", id="not-a-string"),
    ],
)
def test_unknown_flags(flags, expected: str) -> None:
    with pytest.raises(RegexError) as caught:
        compile_regex("a", flags)
    assert expected in caught.value.message


def test_pattern_must_be_a_string() -> None:
    with pytest.raises(RegexError, match="must be a string"):
        compile_regex(["a"])  # type: ignore[arg-type]


def test_regex_error_is_a_value_error() -> None:
    # callers that only know "bad input" (condition evaluation) can catch ValueError
    with pytest.raises(ValueError):
        compile_regex("(")


def test_multiline_errors_quote_the_authors_pattern() -> None:
    with pytest.raises(RegexError) as caught:
        compile_regex("a(", "m")
    assert "(?m)" not in caught.value.message


def test_compiled_regex_is_cached_and_reports_its_source() -> None:
    first = compile_regex("ab+", "i")
    assert isinstance(first, CompiledRegex)
    assert (first.pattern, first.flags) == ("ab+", "i")
    assert compile_regex("ab+", "i") is first


def test_catastrophic_pattern_runs_in_linear_time() -> None:
    # The requirement is a time bound (docs/conditions-and-rules.md), so the test measures it. Python's
    # backtracking `re` needs on the order of 2**50000 steps here and would never finish.
    hostile = "a" * 50_000 + "b"
    regex = compile_regex("(a+)+$")
    started = time.perf_counter()
    found = regex.search(hostile)
    elapsed = time.perf_counter() - started
    assert found is False
    assert elapsed < 0.1, f"took {elapsed * 1000:.1f} ms"
    assert regex.search("a" * 50_000) is True  # the same pattern still matches what it should


@pytest.mark.parametrize(
    ("pattern", "flags", "matching", "other", "feature"),
    [
        pytest.param(r"(a)\1", "", "xaa", "xab", "backreferences", id="backreference"),
        pytest.param(r"(?P<n>a)(?P=n)", "", "aa", "ab", "backreferences", id="named-backreference"),
        pytest.param(r"foo(?=bar)", "", "foobar", "foobaz", "lookahead", id="lookahead"),
        pytest.param(
            r"^(?!.*TODO).*done", "", "all done", "TODO done", "lookahead", id="negative-lookahead"
        ),
        pytest.param(r"(?<=a)b", "", "ab", "cb", "lookbehind", id="lookbehind"),
        pytest.param(r"(?<!a)b", "", "cb", "ab", "lookbehind", id="negative-lookbehind"),
        pytest.param(r"^(?=.*x).*y$", "im", "q\nXY", "q\ny", "lookahead", id="flags-apply"),
    ],
)
def test_patterns_re2_cannot_run_fall_back_with_a_notice(pattern, flags, matching, other, feature):
    compiled = compile_regex(pattern, flags)
    assert compiled.backtracking
    assert feature in compiled.notice and repr(pattern) in compiled.notice
    assert compiled.search(matching) is True
    assert compiled.search(other) is False


def test_patterns_re2_runs_stay_on_re2():
    assert compile_regex(r"\bdone\b").notice is None


def test_a_hostile_fallback_pattern_is_stopped_by_its_time_limit():
    # Exponential backtracking that the lookahead forces onto the fallback engine: without the
    # limit this search would take longer than the universe has existed.
    hostile = compile_regex(r"^(a|a)+(?=b)")
    assert hostile.backtracking
    started = time.perf_counter()
    assert hostile.search("a" * 60 + "!") is False
    elapsed = time.perf_counter() - started
    # The engine checks its clock periodically; on a loaded machine it overshoots a few times.
    assert elapsed < 40 * BACKTRACKING_TIMEOUT_SECONDS, f"took {elapsed:.2f} s"
    assert hostile.search("aab") is True


# -- bounds on the backtracking fallback (docs/security.md)-----------------------------------------


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        pytest.param("a{1000}", 1000, id="counted"),
        pytest.param("(a|b){3}", 9, id="group-times-count"),
        pytest.param("a{,5}", 5, id="upper-bound-only"),
        pytest.param("a{2,}", 3, id="open-ended"),
        pytest.param(r"\d{3}", 3, id="escape-then-count"),
        pytest.param(r"\p{L}{5}", 5, id="braced-escape-is-one-atom"),
        pytest.param("[a{1000}]", 1, id="braces-in-a-class"),
        pytest.param("[]{99}]", 1, id="leading-bracket-in-a-class"),
        pytest.param(r"\{1000}", 6, id="escaped-brace-is-literal"),
        pytest.param("(?#{1000000})a", 1, id="comment"),
        pytest.param("x{2}{3}", 6, id="stacked-counts-multiply"),
        pytest.param("(?:(?:a{1000}){1000}){1000}", 10_001, id="nested-past-the-limit"),
        pytest.param("a{99999999999999999999}", 10_001, id="huge-count"),
        pytest.param("(?=a)a{" + "9" * 5000 + "}", 10_001, id="count-of-5000-digits"),
    ],
)
def test_the_expanded_size_is_read_from_the_pattern_text(pattern: str, size: int) -> None:
    from workrail_engine.evaluation._regex_size import expanded_size

    assert expanded_size(pattern, 10_000) == size


def test_a_fallback_pattern_that_would_expand_too_far_is_refused_before_compiling() -> None:
    from workrail_engine.evaluation.regexes import MAX_BACKTRACKING_PATTERN_SIZE

    with pytest.raises(RegexError) as refused:
        compile_regex("(?!x)(?:(?:a{1000}){1000}){1000}")
    assert f"expands past {MAX_BACKTRACKING_PATTERN_SIZE:,} elements" in refused.value.message
    # the same counts that RE2 runs itself are fine, and a real lookahead pattern too
    assert not compile_regex("a{1000}").backtracking
    assert compile_regex("^(?!.*TODO).{0,2000}$").backtracking


def test_one_calls_fallback_matches_share_a_budget() -> None:
    """A spent budget makes a fallback match count as no match without running; a budget
    opened inside another does not renew it; RE2 patterns are not affected."""
    from workrail_engine.evaluation.regexes import backtracking_budget

    lookahead, linear = compile_regex("(?=a)a"), compile_regex("a")
    assert lookahead.search("a")
    with backtracking_budget(0.0):
        assert not lookahead.search("a")
        with backtracking_budget(10.0):
            assert not lookahead.search("a")
        assert linear.search("a")
    with backtracking_budget(10.0):
        assert lookahead.search("a")
