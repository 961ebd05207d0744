"""`closest`'s scores without rapidfuzz are rapidfuzz's, to the float, and so is its ranking."""

from __future__ import annotations

import random

from rapidfuzz import fuzz, process

from workrail_engine.errors import closest, indel_ratio

_LETTERS = "abcde-_.xyzé😀"


def _word(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(_LETTERS) for _ in range(rng.randint(0, longest)))


def test_indel_ratio_is_rapidfuzz_ratio_to_the_float() -> None:
    rng = random.Random(39)
    pairs = [(_word(rng, 12), _word(rng, 12)) for _ in range(20_000)]
    pairs += [(_word(rng, 150), _word(rng, 150)) for _ in range(500)]  # past 64 bits a row
    pairs += [("", ""), ("", "a"), ("same", "same"), ("ab", "ba")]
    assert [indel_ratio(a, b) for a, b in pairs] == [fuzz.ratio(a, b) for a, b in pairs]


def _rapidfuzz_closest(name: str, names: list[str], n: int, cutoff: float) -> list[str]:
    found = process.extract(name, names, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff)
    return [match[0] for match in sorted(found, key=lambda m: (-m[1], m[0]))[:n]]


def test_closest_ranks_as_rapidfuzz_does_on_either_side_of_the_threshold() -> None:
    rng = random.Random(7)
    for size in (0, 1, 5, 40, 200, 201, 600):  # 200 and fewer are scored without rapidfuzz
        names = [_word(rng, 10) for _ in range(size)] + ["review-plan", "review-plans"]
        for name in ("review-plan", "reveiw-plan", "", "x", _word(rng, 10)):
            for n, cutoff in ((1, 70.0), (3, 50.0)):
                expected = _rapidfuzz_closest(name, names, n, cutoff)
                assert closest(name, names, n, cutoff) == expected, (size, name, n, cutoff)


def test_closest_of_other_values_is_rapidfuzz_s() -> None:
    assert closest(None, ["a"]) == []  # type: ignore[arg-type]
    assert closest("ab", ["ab", None, "ab"]) == ["ab", "ab"]  # type: ignore[list-item]
