"""WR811 in lint: which files the size check compiles to measure them."""

from __future__ import annotations

import json

import pytest
import yaml

from workrail_engine.text.document import parse_document

_TOKEN = "{{wr.refs.adversarial_challenge_rules}} "
_YAML_HEAD = 'id: escaped\nname: E\nversion: 1.0.0\nsteps:\n- id: a\n  title: A\n  prompt: "'


def test_the_size_check_compiles_only_files_whose_compile_can_add_text(monkeypatch):
    """WR811's check compiles a file only when something in it makes the compile add text: the
    word "features" in a prompt does not (it compiled a quarter of bench/validate.py's files for
    nothing); the workflow's own "features" key does, however the text spells it."""
    import workrail_engine.compile
    from workrail_engine.lint import compiled_size

    compiled: list[str] = []
    real = workrail_engine.compile.compile_workflow

    def counting(workflow, routines=None):
        compiled.append(workflow["id"])
        return real(workflow, routines)

    monkeypatch.setattr(workrail_engine.compile, "compile_workflow", counting)
    steps = [{"id": "a", "title": "A", "prompt": "List the features the change adds."}]
    prose = {"id": "prose", "name": "P", "version": "1.0.0", "steps": steps}
    blocks = [{"id": "b", "title": "B", "promptBlocks": {"goal": "Do it."}}]
    keyed = {"id": "keyed", "name": "K", "version": "1.0.0", "features": [], "steps": blocks}
    # spelled with escapes, neither key is in the text as written: the value has them
    escaped = (
        json.dumps(keyed)
        .replace('"features"', '"feat\\u0075res"')
        .replace('"promptBlocks"', '"promptBl\\u006fcks"')
    )
    documents = [
        parse_document(json.dumps(prose), "prose.json"),
        parse_document(escaped, "keyed.json"),
    ]
    assert compiled_size.compiled_size_diagnostics(documents) == {}
    assert compiled == ["keyed"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_size_check_sees_ref_tokens_written_with_spaces(fmt):
    """The compile step reads ``{{ wr.refs.x }}`` (spaces inside the braces) as a ref token, so
    the size check must compile a file whose only growth is such tokens (it looked for "{{wr."
    alone, and a file that compiles to 2.5 MB of one step passed `workrail validate`)."""
    from workrail_engine.lint import compiled_size

    prompt = "{{ wr.refs.adversarial_challenge_rules }} " * 4_000  # 634 characters each
    workflow = {
        "id": "spaced",
        "name": "S",
        "version": "1.0.0",
        "steps": [{"id": "a", "title": "A", "prompt": prompt}],
    }
    text = yaml.safe_dump(workflow, width=1 << 30) if fmt == "yaml" else json.dumps(workflow)
    document = parse_document(text, f"spaced.{fmt}")
    found = compiled_size.compiled_size_diagnostics([document])["spaced." + fmt]
    assert [(d.code, d.pointer) for d in found] == [("WR811", "/steps/0/prompt")]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # "wr." as a JSON \u escape of "r"
        (
            "escaped.json",
            '{"id": "escaped", "name": "E", "version": "1.0.0", "steps": [{"id": "a", '
            '"title": "A", "prompt": "' + _TOKEN.replace("wr.", "w\\u0072.") * 4_000 + '"}]}',
        ),
        # the same in a YAML double-quoted scalar, with \x
        (
            "escaped.yaml",
            _YAML_HEAD + _TOKEN.replace("wr.", "w\\x72.") * 4_000 + '"\n',
        ),
        # and split by a backslash that joins two lines of a double-quoted scalar
        (
            "joined.yaml",
            _YAML_HEAD + _TOKEN.replace("wr.", "w\\\n    r.") * 4_000 + '"\n',
        ),
    ],
)
def test_the_size_check_sees_marks_spelled_with_escapes(name, text):
    """A token whose letters are escapes is not in the text as written, yet the compile step
    reads the value and expands it: such a file must be compiled to be measured (it passed
    `workrail validate` though it compiles to 2.5 MB in one step)."""
    from workrail_engine.lint import compiled_size

    document = parse_document(text, name)
    assert document.value["steps"][0]["prompt"].startswith(_TOKEN)  # the value has the token
    found = compiled_size.compiled_size_diagnostics([document])[name]
    assert [(d.code, d.pointer) for d in found] == [("WR811", "/steps/0/prompt")]
