"""Documents: strict JSON and YAML, spans of pointers, syntax errors with positions, bad files."""

from __future__ import annotations

import json

import pytest
import yaml

from workrail_engine.limits import MAX_NESTING
from workrail_engine.text.document import LineIndex, parse_document, read_document


def _at(doc, span):
    return doc.text[span.start : span.end]


SAMPLE = '{\n  "id": "demo",\n  "steps": [\n    {"id": "a", "title": "Ünïcode ✓", "n": [1, 2.5, null]},\n    {"id": "b"}\n  ]\n}\n'


@pytest.mark.parametrize(
    ("pointer", "value_text", "key_text"),
    [
        pytest.param("/id", '"demo"', '"id"', id="top-level"),
        pytest.param("/steps/0/title", '"Ünïcode ✓"', '"title"', id="non-ascii"),
        pytest.param("/steps/0/n/1", "2.5", None, id="array-item"),
        pytest.param("/steps/1", '{"id": "b"}', None, id="object-in-array"),
        pytest.param("", SAMPLE.rstrip("\n"), None, id="root"),
    ],
)
def test_json_spans(pointer, value_text, key_text):
    doc = parse_document(SAMPLE)
    assert _at(doc, doc.value_span(pointer)) == value_text
    key = doc.key_span(pointer)
    assert (key and _at(doc, key)) == key_text


def test_missing_pointer_falls_back_to_nearest_ancestor():
    doc = parse_document(SAMPLE)
    assert doc.value_span("/steps/7") is None
    assert _at(doc, doc.span("/steps/7/id")) == _at(doc, doc.value_span("/steps"))


def test_repeated_lookups_in_one_container_agree():
    text = json.dumps({"steps": [{"id": f"s{i:03d}"} for i in range(300)]})
    doc = parse_document(text)
    for i in (250, 3, 299, 0, 250):
        assert _at(doc, doc.value_span(f"/steps/{i}/id")) == f'"s{i:03d}"'


def test_pointer_escapes():
    doc = parse_document('{"a/b": {"c~d": 1}}')
    assert _at(doc, doc.value_span("/a~1b/c~0d")) == "1"


@pytest.mark.parametrize(
    ("text", "code", "message_part", "at"),
    [
        pytest.param("", "WR006", "empty", 0, id="empty"),
        pytest.param("   \n", "WR006", "empty", 0, id="blank"),
        pytest.param('{"a": 1,}', "WR001", "Trailing comma", 7, id="trailing-comma"),
        pytest.param('{"a": 1, // no\n}', "WR001", "Comments", 9, id="comment"),
        pytest.param('{"a": NaN}', "WR001", "NaN is not valid JSON", 6, id="nan"),
        pytest.param('{"a": -Infinity}', "WR001", "-Infinity is not valid JSON", 6, id="infinity"),
        pytest.param('{"a" 1}', "WR001", "Expected ':'", 5, id="missing-colon"),
        pytest.param('{"a": 1} {}', "WR001", "after the end", 9, id="extra-data"),
        pytest.param('{"a": "x', "WR001", "Unterminated string", 6, id="unterminated"),
        pytest.param("[" * 10_000 + "]" * 10_000, "WR005", "deeper than", MAX_NESTING, id="deep"),
    ],
)
def test_json_syntax_errors(text, code, message_part, at):
    doc = parse_document(text)
    assert doc.value is None
    [error] = doc.syntax_errors
    assert (error.code, error.span.start) == (code, at)
    assert message_part in error.message


@pytest.mark.parametrize(
    "value",
    [
        "!!int abc",
        "!!bool ys",
        "!!float x",
        "!!timestamp 2020-99-99",
    ],
)
@pytest.mark.parametrize("anchored", [False, True], ids=["tree", "with-anchor"])
def test_a_yaml_value_that_does_not_fit_its_tag_is_a_problem_at_the_value(value, anchored):
    """PyYAML raises a bare ValueError, KeyError… there, which ended `workrail validate` with a
    traceback; both builds (a plain tree, and one with anchors) report it at the value."""
    head = "id: x\na: &x 1\n" if anchored else "id: x\n"
    text = f"{head}name: {value}\n"
    doc = parse_document(text, "flow.yaml")
    assert doc.value is None
    [error] = doc.syntax_errors
    assert error.code == "WR001"
    assert "does not fit its tag !!" in error.message
    assert error.span.start == text.index(value)


def test_duplicate_keys_reported_on_both_with_a_fix():
    text = '{"id": "x", "steps": [], "id": "y"}'
    doc = parse_document(text)
    assert doc.value == {"id": "y", "steps": []}
    [dup] = doc.syntax_errors
    assert dup.code == "WR002" and dup.pointer == "/id"
    assert dup.span.start == text.rindex('"id"')
    assert dup.related[0].span.start == text.index('"id"')
    [edit] = dup.fixes[0].edits
    fixed = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    assert json.loads(fixed) == {"id": "x", "steps": []}


def test_yaml_values_spans_and_errors():
    text = "id: demo\nsteps:\n  - id: a\n    title: Ünï\n"
    doc = parse_document(text, "demo.yaml")
    assert doc.format == "yaml"
    assert doc.value == {"id": "demo", "steps": [{"id": "a", "title": "Ünï"}]}
    assert _at(doc, doc.value_span("/steps/0/title")) == "Ünï"
    assert _at(doc, doc.key_span("/steps/0/title")) == "title"
    broken = parse_document("id: [1\n", "x.yml")
    [error] = broken.syntax_errors
    assert error.code == "WR001" and broken.line_index.position(error.span.start)[0] == 1


def test_yaml_duplicate_keys():
    doc = parse_document("id: a\nname: n\nid: b\n", "x.yaml")
    [dup] = doc.syntax_errors
    assert dup.code == "WR002" and doc.line_index.position(dup.span.start) == (2, 0)


@pytest.mark.parametrize(
    ("data", "code", "message_part"),
    [
        pytest.param(b"", "WR006", "empty", id="empty"),
        pytest.param(
            b'{"id": "caf\xe9"}', "WR003", "Not UTF-8: byte 0xe9 at line 1, column 12", id="latin-1"
        ),
        pytest.param(b"\x7fELF\x00\x00\x01", "WR003", "Binary", id="binary"),
        pytest.param(b" " * (6 * 1024 * 1024), "WR004", "too large", id="10mb"),
    ],
)
def test_read_document_never_raises(tmp_path, data, code, message_part):
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    doc = read_document(path)
    assert [e.code for e in doc.syntax_errors] == [code]
    assert message_part in doc.syntax_errors[0].message


def test_read_missing_file_and_directory(tmp_path):
    assert read_document(tmp_path / "nope.json").syntax_errors[0].code == "WR003"
    assert read_document(tmp_path).syntax_errors[0].code == "WR003"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_line_index_round_trips_in_every_encoding(encoding):
    text = "ab\r\nç😀x\ny"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        line, column = index.position(offset, encoding)
        if text[offset - 1 : offset] in ("\r",):  # between \r and \n is not a position
            continue
        assert index.offset(line, column, encoding) == offset
    assert index.position(text.index("x"), "utf-16") == (1, 3)
    assert index.position(text.index("x"), "utf-8") == (1, 6)
    assert index.position(text.index("x"), "utf-32") == (1, 2)


@pytest.mark.parametrize(
    "text",
    ["", "\n", "\n\n", "a", "a\n", "a\nb", '{\n  "x": 1\n}\n', "a\r\nb\rc\n", "\r", "é\n😀\nz"],
)
def test_line_starts_follow_every_line_break(text):
    """Texts without \\r take a faster path than the regex over \\r\\n, \\r and \\n."""
    expected = [0] + [
        i + 1
        for i, c in enumerate(text)
        if c == "\n" or (c == "\r" and text[i + 1 : i + 2] != "\n")
    ]
    assert LineIndex(text).starts == expected


def test_syntax_error_after_a_duplicate_key_is_reported():
    doc = parse_document('{"a": 1, "a": 2, "b": [1 2]}')
    assert doc.value is None
    assert [e.code for e in doc.syntax_errors] == ["WR001"]


@pytest.mark.parametrize(
    ("text", "on"),
    [
        pytest.param('{"id": "\\ud800x", "steps": []}', '"\\ud800x"', id="escaped-high"),
        pytest.param('{"id": "a", "name": "\\udfff"}', '"\\udfff"', id="escaped-low"),
        pytest.param('{"id": "a", "name": "x\ud800y"}', '"x\ud800y"', id="raw-from-a-utf16-client"),
        pytest.param('{"\\ud83d": 1}', None, id="key"),
    ],
)
def test_unpaired_surrogates_are_syntax_errors(text, on):
    doc = parse_document(text)
    assert doc.value is None
    [error] = doc.syntax_errors
    assert error.code == "WR001" and "surrogate" in error.message
    if on is not None:
        assert doc.text[error.span.start : error.span.end] == on


def test_a_lone_surrogate_in_yaml_is_a_syntax_error_at_it():
    """An editor's buffer can hold one (LSP text arrives as JSON with "\\ud800"); libyaml
    cannot even read such text, so it is refused before, where it is."""
    text = "id: a\nname: x\ud800y\n"
    doc = parse_document(text, "flow.yaml")
    assert doc.value is None
    [error] = doc.syntax_errors
    assert error.code == "WR001" and "surrogate" in error.message
    assert doc.text[error.span.start : error.span.end] == "\ud800"


def test_paired_surrogate_escapes_are_fine():
    doc = parse_document('{"name": "\\ud83d\\ude00 and \\\\ud800 as text"}')
    assert doc.value == {"name": "😀 and \\ud800 as text"}


@pytest.mark.parametrize(
    ("text", "path"), [('\ufeff{"name": "x"}', "a.json"), ("\ufeffname: x\n", "a.yaml")]
)
def test_a_byte_order_mark_is_accepted_with_a_warning(text, path):
    doc = parse_document(text, path)
    assert doc.value == {"name": "x"}
    assert [(e.code, e.severity.value) for e in doc.syntax_errors] == [("WR007", "warning")]
    assert doc.text[doc.value_span("/name").start : doc.value_span("/name").end].strip('"') == "x"


@pytest.mark.parametrize(
    ("text", "message", "on"),
    [
        pytest.param("{\n  'id': 1}", "double quotes", "'", id="single-quotes"),
        pytest.param(
            '{\n  "id": "abc,\n  "x": 1\n}', "Unterminated string", '"abc,', id="missing-quote"
        ),
        pytest.param(
            '{\n  "steps": [\n    {"a": 1}\n',
            "'[' opened on line 2 is never closed",
            "[",
            id="unclosed",
        ),
        pytest.param(
            '{\n  "a": 1\n  "b": 2\n}', "Missing ',' after this value", "1", id="missing-comma"
        ),
    ],
)
def test_json_syntax_messages_say_what_to_do(text, message, on):
    [error] = parse_document(text).syntax_errors
    assert message in error.message
    assert text[error.span.start : error.span.end] == on


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("id: a\n\tname: b\n", "Tabs are not allowed", id="tab"),
        pytest.param("id: a\n---\nid: b\n", "one YAML document", id="two-documents"),
    ],
)
def test_yaml_syntax_messages_say_what_to_do(text, message):
    [error] = parse_document(text, "x.yaml").syntax_errors
    assert message in error.message


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [1, 2.5, true, null, ~, 2001-12-14, '3']\nc: {on: yes, 'off': no}\n1: x\n'1': y\n",
        "a: 1\na: 2\n",
        "<<: {a: 1}\nb: 2\n",
        "x: !!set {a, b}\n",
        "s: &s [1]\nt: *s\n",
        "steps:\n  - id: a\n    prompt: |\n      Use A & B\n",
        # every implicit type of YAML 1.1, written plainly, quoted and tagged (the engine
        # resolves plain scalars itself: see _yaml_text._Composer)
        "a: [yes, No, on, OFF, y, n, true, False, ~, null, Null, '', 1_000, 0x1F, 0o17, 017,"
        " 0b101, +12, -3, 1:20, 1.5e+3, .inf, -.Inf, .NaN, 2001-12-14, 2001-12-14t21:59:43.10-05:00]\n"
        "b: ['yes', \"1\", !!str 12, ! 12, !!int '12', !!float 1, !!bool yes, !!null '']\n",
        "title: t\nnull_ish: null\nnote: no\ntype: prompt\nfalse_start: fa\n",
        "1: a\n01: b\n",
        "1: a\n'1': b\n",
        "yes: 1\n'yes': 2\n",
        "a: {b: 1, b: 2}\n",
        "a: !!binary aGVsbG8=\nb: !!omap [c: 1]\n",
    ],
)
def test_yaml_values_are_pyyamls_whichever_way_they_are_built(text):
    """A tree without anchors is built by the engine's own walk; the value is PyYAML's."""
    doc = parse_document(text, "w.yaml")
    assert _typed(doc.value) == _typed(yaml.safe_load(text))
    # every member written with a string key is placed
    assert all(doc.value_span(f"/{k}") is not None for k in doc.value if isinstance(k, str))


def _typed(value):
    """``value`` with every leaf's type beside it (``1 == True`` and ``1 == 1.0`` in Python)."""
    if isinstance(value, dict):
        return {"dict": [(_typed(k), _typed(v)) for k, v in value.items()]}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, set):
        return {"set": sorted(map(repr, value))}
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("id: x\nsteps:\n  - id: a\n    n: [1, [2, {c: d}]]\n  - b\n", id="nested"),
        pytest.param("a/b: 1\nc~d: {e~1: 2}\n'': {x: [y]}\n", id="escaped-and-empty-keys"),
        pytest.param("1: a\nyes: b\nk: [x]\n", id="keys-that-are-not-strings"),
        pytest.param("k: 1\nk: 2\nm: {n: 1, n: [2]}\n", id="repeated-keys"),
        pytest.param("\ufeffa: {b: [c]}\n", id="byte-order-mark"),
        pytest.param("- a\n- {b: c}\n", id="a-list"),
        pytest.param("just text\n", id="a-scalar"),
    ],
)
def test_a_yaml_pointer_is_placed_where_the_recorded_spans_place_it(text):
    """Spans are recorded only when all are asked for (the editor's tolerant tree); a check
    placing a finding follows the pointer down the node tree instead, with the same result."""
    recorded = parse_document(text, "w.yaml")
    spans = recorded._yaml.spans  # every node's, recorded in one walk
    probes = [*spans, *(p + "/0" for p in spans), *(p + "/zz" for p in spans)]
    probes += ["x", "/", "//", "/0", "/00", "/-1", "/1", "/k/01", "/m/n/9"]
    for pointer in probes:
        followed = parse_document(text, "w.yaml")  # nothing recorded yet
        assert followed._yaml.locate(pointer) == spans.get(pointer), pointer
        assert followed.value_span(pointer) == recorded.value_span(pointer), pointer
        assert followed.key_span(pointer) == recorded.key_span(pointer), pointer
