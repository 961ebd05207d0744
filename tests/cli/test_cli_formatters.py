"""Every output format over the same reports: positions, counts, escaping, structure."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.cli.formatters import FORMATS, Formatter, formatter_class
from workrail_engine.cli.formatters.github import GithubFormatter
from workrail_engine.cli.formatters.json_format import indented_json
from workrail_engine.cli.formatters.sarif import SarifFormatter
from workrail_engine.cli.formatters.text import TextFormatter, summary_line
from workrail_engine.diagnostics import Diagnostic, Fix, Related, Severity, Span, TextEdit
from workrail_engine.lint.report import FileReport, Summary
from workrail_engine.text.document import parse_document

TEXT = '{\n  "id": "démo-flow",\n  "name": 5,\n  "steps": []\n}\n'


def span_of(fragment: str) -> Span:
    start = TEXT.index(fragment)
    return Span(start, start + len(fragment))


def make_reports() -> list[FileReport]:
    doc = parse_document(TEXT, "wf/démo.json")
    error = Diagnostic(
        "WR101", Severity.ERROR, "name: 5 is not of type 'string'", "/name", span_of("5")
    )
    warning = Diagnostic(
        "WR601",
        Severity.WARNING,
        "id 'démo-flow' differs from the file name, with a comma, a colon: and 100%",
        "/id",
        span_of('"démo-flow"'),
        related=(Related("the file is named here", Span(0, 1)),),
        fixes=(Fix("Rename the id", (TextEdit(span_of('"démo-flow"'), '"démo"'),)),),
    )
    clean = parse_document('{"id": "ok"}', "wf/ok.json")
    return [FileReport("wf/démo.json", doc, [warning, error]), FileReport("wf/ok.json", clean, [])]


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_names_both_codes_and_positions(name: str) -> None:
    reports = make_reports()
    cls = formatter_class(name)
    assert issubclass(cls, Formatter) and cls.name == name
    output = cls(color=False).render(reports, Summary.of(reports))
    assert "WR101" in output and "WR601" in output, output
    assert "\x1b[" not in output, "colour only when asked for"


def test_text_format_shows_position_frame_and_summary() -> None:
    reports = make_reports()
    output = TextFormatter().render(reports, Summary.of(reports))
    lines = output.splitlines()
    head = lines.index("wf/démo.json:3:11: WR101 name: 5 is not of type 'string'")
    assert lines[head + 1 : head + 4] == ["  |", '3 |   "name": 5,', "  |           ^ error"]
    warning = lines.index(
        "wf/démo.json:2:9: WR601 id 'démo-flow' differs from the file name, with a comma, a colon: and 100%"
    )
    assert lines[warning + 2 : warning + 4] == [
        '2 |   "id": "démo-flow",',
        "  |         ^^^^^^^^^^^ warning",
    ]
    assert "  = note: the file is named here (wf/démo.json:1:1)" in lines
    assert "  = help: Rename the id" in lines
    assert lines[-2:] == [
        "Found 1 error and 1 warning in 1 file (2 files checked)",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]


def test_text_colour_when_asked() -> None:
    reports = make_reports()
    output = TextFormatter(color=True).render(reports, Summary.of(reports))
    assert "\x1b[31m" in output  # the error's code and carets in red


def test_json_format_is_complete_and_one_based() -> None:
    reports = make_reports()
    data = json.loads(formatter_class("json")().render(reports, Summary.of(reports)))
    assert data["summary"] == {
        "filesChecked": 2,
        "filesWithProblems": 1,
        "errors": 1,
        "warnings": 1,
        "infos": 0,
        "passed": False,
        "fixable": 0,
        "unsafeFixable": 1,  # the WR601's "Rename the id"
    }
    assert [f["path"] for f in data["files"]] == ["wf/démo.json", "wf/ok.json"]
    error = data["files"][0]["diagnostics"][1]
    assert (error["code"], error["pointer"], error["line"], error["column"]) == (
        "WR101",
        "/name",
        3,
        11,
    )
    assert (error["endLine"], error["endColumn"]) == (3, 12)
    assert error["span"] == {"start": TEXT.index("5"), "end": TEXT.index("5") + 1}


def test_github_annotations_are_escaped() -> None:
    reports = make_reports()
    lines = GithubFormatter().render(reports, Summary.of(reports)).splitlines()
    assert lines == [
        "::warning file=wf/démo.json,line=2,col=9,endLine=2,endColumn=20,title=WR601::"
        "id 'démo-flow' differs from the file name, with a comma, a colon: and 100%25",
        "::error file=wf/démo.json,line=3,col=11,endLine=3,endColumn=12,title=WR101::name: 5 is not of type 'string'",
    ]


def test_github_properties_escape_commas_and_colons() -> None:
    doc = parse_document("{}", "a,b:c.json")
    d = Diagnostic("WR000", Severity.ERROR, "two\nlines", "", Span(0, 1))
    out = GithubFormatter().render([FileReport("a,b:c.json", doc, [d])], Summary(1, 1, 1, 0, 0))
    assert (
        out
        == "::error file=a%2Cb%3Ac.json,line=1,col=1,endLine=1,endColumn=2,title=WR000::two%0Alines\n"
    )


def test_sarif_log_shape() -> None:
    reports = make_reports()
    log = json.loads(SarifFormatter().render(reports, Summary.of(reports)))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "workrail"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["WR601", "WR101"]
    assert run["columnKind"] == "unicodeCodePoints"
    warning, error = run["results"]
    assert (error["ruleId"], error["ruleIndex"], error["level"]) == ("WR101", 1, "error")
    assert warning["level"] == "warning"
    location = error["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "wf/d%C3%A9mo.json"
    assert location["region"] == {
        "startLine": 3,
        "startColumn": 11,
        "endLine": 3,
        "endColumn": 12,
        "charOffset": TEXT.index("5"),
        "charLength": 1,
    }
    assert warning["relatedLocations"][0]["message"]["text"] == "the file is named here"
    assert [a["location"]["uri"] for a in run["artifacts"]] == ["wf/d%C3%A9mo.json", "wf/ok.json"]


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("a b/100%.json", "a%20b/100%25.json"),
        ("/abs/x.json", "file:///abs/x.json"),
        ("./w/x.json", "w/x.json"),
    ],
)
def test_sarif_artifact_uris(path: str, uri: str) -> None:
    from workrail_engine.cli.formatters.sarif import artifact_uri

    assert artifact_uri(path) == uri


@pytest.mark.parametrize(
    ("summary", "line", "exit_code"),
    [
        pytest.param(Summary(5, 0, 0, 0, 0), "All 5 files passed", 0, id="clean"),
        pytest.param(Summary(1, 0, 0, 0, 0), "1 file passed", 0, id="one-file"),
        pytest.param(
            Summary(5, 2, 3, 1, 0),
            "Found 3 errors and 1 warning in 2 files (5 files checked)",
            1,
            id="mixed",
        ),
        pytest.param(
            Summary(5, 1, 0, 2, 0),
            "Found 2 warnings in 1 file (5 files checked)",
            0,
            id="warnings-pass",
        ),
        pytest.param(
            Summary(5, 1, 0, 2, 0, strict=True),
            "Found 2 warnings in 1 file (5 files checked)",
            1,
            id="warnings-fail-when-strict",
        ),
        pytest.param(Summary(0, 0, 0, 0, 0), "No workflow files found", 0, id="nothing"),
    ],
)
def test_summary_line_and_exit_code(summary: Summary, line: str, exit_code: int) -> None:
    assert summary_line(summary) == line
    assert summary.exit_code == exit_code


def test_validate_offers_exactly_the_registered_formats() -> None:
    from workrail_engine.cli.app import validate

    option = next(p for p in validate.params if p.name == "fmt")
    assert tuple(option.type.choices) == FORMATS


class _Unencodable:
    def __str__(self) -> str:
        return 'written by str()\u2028 "quoted"'


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.just(Severity.ERROR),
    st.builds(_Unencodable),
)
_KEYS = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_json_format_writes_what_json_dumps_writes(value: object) -> None:
    """The JSON format's own encoder (faster than the standard library's with an indent) writes
    every value exactly as ``json.dumps(indent=2, ensure_ascii=False, default=str)`` does."""
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False, default=str)
