"""Every diagnostic code has a rule name (what --statistics, JSON and SARIF print), and the codes
named are exactly those docs/diagnostics.md describes."""

from __future__ import annotations

import re
from pathlib import Path

from workrail_engine.lint.rule_names import RULE_NAMES, rule_name

DOC = Path(__file__).parents[3] / "docs" / "diagnostics.md"


def test_the_named_codes_are_the_documented_codes() -> None:
    documented = re.findall(r"^\| (WR\d{3}) \|", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    assert sorted(RULE_NAMES) == sorted(documented)


def test_names_are_kebab_case_and_distinct() -> None:
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in RULE_NAMES.values())
    assert len(set(RULE_NAMES.values())) == len(RULE_NAMES)
    assert rule_name("WR999") == "WR999"  # an unknown code is printed as itself, never an error
