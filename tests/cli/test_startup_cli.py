"""The CLI starts fast because it imports the engine, servers and formats only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BUNDLED = Path(__file__).resolve().parents[2] / "workflows"
HEAVY = [
    "jsonschema_rs",
    "yaml",
    "re2",
    "rich",
    "mcp",
    "pygls",
    "workrail_engine.lint",
    "workrail_engine.catalog",
    "workrail_mcp",
    "workrail_lsp",
    "dbos",
    "sqlalchemy",
    "workrail_engine.cli.formatters.text",
]


def loaded_after(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def validated_json(path: Path, names: list[str]) -> tuple[str, list[str]]:
    """`workrail validate --format json PATH` in a process of its own: what it printed, and
    which of ``names`` it loaded."""
    code = (
        "import sys, json\nfrom workrail_engine.cli import cli\n"
        f"try:\n    cli.main(['validate', '--format', 'json', {str(path)!r}], standalone_mode=False)\n"
        "except SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {names!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    *report, loaded = done.stdout.strip().splitlines()
    return "\n".join(report), json.loads(loaded)


def test_importing_the_cli_loads_nothing_heavy() -> None:
    assert loaded_after("import workrail_engine.cli") == []


def test_help_loads_nothing_heavy() -> None:
    code = "from workrail_engine.cli import cli\ntry:\n    cli.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass"
    assert loaded_after(code) == []


def test_json_validation_does_not_load_the_text_format() -> None:
    code = (
        "from workrail_engine.cli import cli\n"
        f"try:\n    cli.main(['validate', '--format', 'json', {str(BUNDLED)!r}], standalone_mode=False)\n"
        "except SystemExit:\n    pass"
    )
    loaded = loaded_after(code)
    assert "workrail_engine.lint" in loaded, "the probe did validate"
    assert (
        "workrail_engine.cli.formatters.text" not in loaded
        and "mcp" not in loaded
        and "pygls" not in loaded
    )


def test_checking_without_fixing_loads_neither_the_writer_nor_the_editor_model() -> None:
    """`workrail validate` of a JSON file needs no temporary files (--fix), no diff (--diff), no
    tolerant tree (the language server's) and no hashing (the Git sources', only for a configuration
    that declares repositories: hashlib loads OpenSSL): 1,000 files' run pays ~5 % of its time to
    start."""
    names = [
        "tempfile",
        "difflib",
        "workrail_engine.text.tolerant_document",
        "workrail_engine.text.tolerant_tree",
        "hashlib",
    ]
    _, loaded = validated_json(BUNDLED / "coding-task.json", [*names, "workrail_engine.lint"])
    assert loaded == ["workrail_engine.lint"]  # linted, loaded none of the others


def test_checking_pauses_the_cycle_collector_and_then_restores_it() -> None:
    """Every checked document lives until the report is written, so the cyclic collector's full
    collections walked them all again (~5 % of 1,000 files' run): it is off while files are
    checked, and on again for whoever called the command in process."""
    code = (
        "import gc, json\nimport workrail_engine.cli.validate as validate\n"
        "seen = []\nreal = validate.lint_files\n"
        "def watched(*args, **kwargs):\n"
        "    seen.append(gc.isenabled())\n"
        "    return real(*args, **kwargs)\n"
        "validate.lint_files = watched\n"
        "from workrail_engine.cli import cli\n"
        f"try:\n    cli.main(['validate', '--format', 'json', {str(BUNDLED / 'coding-task.json')!r}], standalone_mode=False)\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps([seen, gc.isenabled()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[False], True]


def test_checking_a_workflow_does_not_build_the_contracts(tmp_path: Path) -> None:
    """The loop checks compare a contract's ref without building the contracts (a suggestion
    made too: the checks of a file with a finding)."""
    flow = tmp_path / "typo.json"
    step = {"id": "first", "title": "First", "promt": "Do it."}
    flow.write_text(
        json.dumps({"id": "typo-flow", "name": "T", "version": "1.0.0", "steps": [step]})
    )
    names = ["workrail_engine.evaluation.contracts", "workrail_engine.lint"]
    report, loaded = validated_json(flow, names)
    assert "did you mean 'prompt'?" in report  # the suggestion was made
    assert loaded == ["workrail_engine.lint"]
