"""`workrail list`, `show`, `next` and `schema` against the real catalog and navigator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_runs_cli import workrail
from tests.context_answers import REQUEST, names_asked
from workrail_engine.catalog import bundled_directory
from workrail_engine.cli.navigate import context_arguments, parse_completed, parse_context
from workrail_engine.schema import load_schema

BRANCHING = {
    "id": "branching",
    "name": "Branching",
    "category": "testing",
    "steps": [
        {"id": "first", "title": "First", "prompt": "Start."},
        {
            "id": "deep-dive",
            "title": "Deep dive",
            "prompt": "Go deep.",
            "runCondition": {"var": "mode", "equals": "full"},
        },
        {"id": "wrap-up", "title": "Wrap up", "prompt": "Finish.", "modelHint": "small-model"},
    ],
}


@pytest.fixture
def project(tmp_path: Path, workflows) -> Path:
    root = tmp_path / "proj"
    workflows.write(root / "workflows", "branching.json", BRANCHING)
    shadow = workflows.good("coding-task")
    shadow["name"] = "Our own coding task"
    workflows.write(root / "workflows", "coding-task.json", shadow)
    workflows.write(root / "workflows", "broken.json", '{"id": "broken", ')
    return root


def test_list_shows_every_source_with_shadowing_and_invalid_files_on_stderr(
    invoke, project: Path
) -> None:
    result = invoke(["--project", str(project), "list"])
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["ID", "NAME", "CATEGORY", "VERSION", "SOURCE"]
    by_id = {row[0]: row for row in rows[1:]}
    assert {"ai-task-implementation", "mr-review", "branching", "coding-task"} <= set(by_id)
    assert by_id["mr-review"][-1] == "bundled"
    assert by_id["branching"][-1] == "project"
    assert (
        by_id["coding-task"][1:4] == ["Our", "own", "coding"]
        and by_id["coding-task"][-1] == "project"
    )
    assert "broken" not in by_id
    assert "broken.json: left out of the catalog" in result.stderr
    assert "'coding-task'" in result.stderr and "shadows" in result.stderr


def test_list_category_and_json(invoke, project: Path) -> None:
    result = invoke(
        ["--project", str(project), "list", "--category", "testing", "--format", "json"]
    )
    (only,) = json.loads(result.stdout)
    assert only["id"] == "branching" and only["source"] == "project"
    assert Path(only["path"]) == project / "workflows" / "branching.json"
    assert set(only) >= {"id", "name", "description", "category", "version", "source", "path"}


def test_extra_workflow_directories_win(invoke, workflows, tmp_path: Path, project: Path) -> None:
    extra = tmp_path / "extra"
    workflows.write(extra, "branching.json", {**BRANCHING, "name": "Extra branching"})
    result = invoke(
        ["--project", str(project), "--workflows", str(extra), "list", "--format", "json"]
    )
    entry = next(e for e in json.loads(result.stdout) if e["id"] == "branching")
    assert (entry["name"], entry["source"]) == ("Extra branching", "extra")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["list", "--format", "json"], id="list"),
        pytest.param(["show", "branching", "--format", "json"], id="show"),
        pytest.param(["next", "branching", "--format", "json"], id="next"),
        pytest.param(["validate", "--format", "json"], id="validate"),
    ],
)
def test_catalog_options_after_the_command(invoke, project: Path, command: list[str]) -> None:
    before = invoke(["--project", str(project), *command], expect=None)
    after = invoke([*command, "--project", str(project)], expect=None)
    assert (after.exit_code, after.stdout) == (before.exit_code, before.stdout), after.output
    assert after.exit_code in (0, 1) and after.stdout.strip(), after.output


def test_workflows_after_the_command_adds_to_the_global_ones(
    invoke, workflows, tmp_path: Path, project: Path
) -> None:
    one = workflows.write(tmp_path / "one", "one-flow.json", workflows.good("one-flow")).parent
    two = workflows.write(tmp_path / "two", "two-flow.json", workflows.good("two-flow")).parent
    result = invoke(
        [
            "--workflows",
            str(one),
            "list",
            "--format",
            "json",
            "--project",
            str(project),
            "--workflows",
            str(two),
        ]
    )
    ids = {e["id"] for e in json.loads(result.stdout)}
    assert {"one-flow", "two-flow", "branching"} <= ids


def test_show_text_and_json(invoke, project: Path) -> None:
    text = invoke(["--project", str(project), "show", "branching"]).stdout
    assert text.startswith("Branching (branching)\n")
    assert '  - deep-dive [prompt] Deep dive (only when mode is "full")' in text
    data = json.loads(
        invoke(["--project", str(project), "show", "branching", "--format", "json"]).stdout
    )
    assert data == BRANCHING


def test_show_lists_parameters_secrets_and_nested_steps(invoke) -> None:
    text = invoke(["show", "python-quality-gate"]).stdout
    assert "Secrets:\n  - PYPI_TOKEN" in text
    assert '  - path (string, default "."): ' in text
    assert "  - checks [parallel] " in text and "\n    - lint [command] " in text


def test_unknown_workflow_is_an_error_with_the_closest_ids(invoke, project: Path) -> None:
    result = invoke(["--project", str(project), "show", "codng-task"], expect=1)
    assert result.stderr.startswith("error: Workflow not found: 'codng-task'"), result.stderr
    assert "coding-task" in result.stderr
    assert "Traceback" not in result.output


def test_next_follows_run_conditions(invoke, project: Path) -> None:
    base = ["--project", str(project), "next", "branching"]
    first = invoke(base).stdout
    assert first.startswith("Next step: first — First\n"), first
    quick = invoke([*base, "--completed", "first", "--context", "mode=quick"]).stdout
    assert quick.startswith("Next step: wrap-up — Wrap up\n"), quick
    assert "Model hint: small-model" in quick
    assert "deep-dive" in quick  # listed as skipped
    full = json.loads(
        invoke([*base, "--completed", "first", "--context", "mode=full", "--format", "json"]).stdout
    )
    assert full["step"]["id"] == "deep-dive" and full["isComplete"] is False
    done = invoke([*base, "--completed", "first,deep-dive", "--completed", "wrap-up"]).stdout
    assert done.strip() == "Workflow complete: no steps left."


LOOPING = {
    "id": "looping",
    "name": "Looping",
    "steps": [
        {"id": "start", "title": "Start", "prompt": "Begin."},
        {
            "id": "passes",
            "type": "loop",
            "title": "Passes",
            "loop": {"type": "forEach", "items": ["a b", "it's"], "itemVar": "item"},
            "body": [{"id": "polish", "title": "Polish", "prompt": "Polish {{context.item}}."}],
        },
        {"id": "finish", "title": "Finish", "prompt": "Done."},
    ],
}


def test_next_ends_with_the_command_to_run_next_and_following_it_finishes(
    invoke, workflows, tmp_path: Path
) -> None:
    import shlex

    extra = workflows.write(tmp_path / "extra", "looping.json", LOOPING).parent
    argv = ["next", "looping", "--workflows", str(extra)]
    visited = []
    for _ in range(10):
        out = invoke(argv).stdout.rstrip()
        if out == "Workflow complete: no steps left.":
            break
        visited.append(out.splitlines()[0])
        last = out.splitlines()[-1]
        assert last.startswith("Next: workrail next looping "), out
        assert "completedSteps" not in out and "workflow_next" not in out, (
            "no MCP instructions in the CLI"
        )
        command = shlex.split(last.removeprefix("Next: "))
        assert command[:2] == ["workrail", "next"]
        argv = command[1:]
    assert visited == [
        "Next step: start — Start",
        "Next step: polish — Polish",
        "Next step: polish — Polish",
        "Next step: finish — Finish",
    ]


def test_next_command_line_is_printed_with_an_empty_context(invoke, project: Path) -> None:
    out = invoke(["--project", str(project), "next", "branching"]).stdout
    assert (
        out.rstrip().splitlines()[-1]
        == f"Next: workrail next branching --project {project} --completed first"
    )


def test_next_says_how_to_pass_an_output_a_later_step_reads(invoke, tmp_path: Path) -> None:
    out = invoke(["--project", str(tmp_path), "next", "coding-task"]).stdout.splitlines()
    assert out[-2] == (
        "When this step is done, run (a later step reads it) with "
        "--context steps.analyze-task.output=… (your output):"
    )
    answer = "The parser lives in cli.py."
    argv = ["next", "coding-task", "--completed", "analyze-task"]
    shown = invoke([*argv, "--context", f"steps.analyze-task.output={answer}"]).stdout
    assert answer in shown and "[unset:" not in shown


def test_next_command_quotes_for_a_posix_shell() -> None:
    from workrail_engine.cli.navigate import next_command

    line = next_command("flow", ["a", "b"], {"name": "it's", "n": 2}, ["--project", "my dir"])
    assert (
        line
        == "workrail next flow --project 'my dir' --completed a,b --context 'name=it'\"'\"'s' --context n=2"
    )


def test_next_with_an_unknown_completed_step(invoke, project: Path) -> None:
    result = invoke(
        ["--project", str(project), "next", "branching", "--completed", "frist"], expect=1
    )
    assert "error: Step not found: 'frist'" in result.stderr and "first" in result.stderr


def test_next_rejects_malformed_context(invoke, project: Path) -> None:
    result = invoke(
        ["--project", str(project), "next", "branching", "--context", "novalue"], expect=2
    )
    assert "KEY=VALUE" in result.stderr


@pytest.mark.parametrize(
    ("items", "context"),
    [
        pytest.param(["n=3"], {"n": 3}, id="number"),
        pytest.param(["ok=true", "none=null"], {"ok": True, "none": None}, id="json-literals"),
        pytest.param(["name=Ada Lovelace"], {"name": "Ada Lovelace"}, id="plain-string"),
        pytest.param(['s="3"'], {"s": "3"}, id="quoted-json-string"),
        pytest.param(['tags=["a","b"]'], {"tags": ["a", "b"]}, id="array"),
        pytest.param(["a.b=1", "a.c=x"], {"a": {"b": 1, "c": "x"}}, id="dotted-keys-nest"),
        pytest.param(["eq=a=b"], {"eq": "a=b"}, id="value-with-equals"),
        pytest.param(["empty="], {"empty": ""}, id="empty-value"),
    ],
)
def test_parse_context(items: list[str], context: dict) -> None:
    assert parse_context(items) == context


@pytest.mark.parametrize("items", [["novalue"], ["=1"], ["a=1", "a.b=2"]])
def test_parse_context_errors(items: list[str]) -> None:
    with pytest.raises(ValueError):
        parse_context(items)


def test_context_round_trips_through_context_arguments() -> None:
    import shlex

    context = {
        "_loops": {"l": {"iteration": 1}},
        "name": "it's",
        "n": 2,
        "id": "TASK-1",
        "s": "3",
        "t": "true",
    }
    arguments = context_arguments(context)
    assert "--context id=TASK-1 " in arguments  # plain strings stay plain
    argv = shlex.split(arguments)
    assert parse_context(argv[1::2]) == context


def test_parse_completed() -> None:
    assert parse_completed(["a,b", " c ", "", "d,,"]) == ["a", "b", "c", "d"]


def test_schema_prints_the_schema(invoke) -> None:
    assert json.loads(invoke(["schema"]).stdout) == load_schema()


def test_an_identical_copy_of_a_workflow_is_not_reported_as_shadowing(
    invoke, tmp_path: Path
) -> None:
    import shutil

    from workrail_engine.catalog import bundled_directory

    copies = tmp_path / "workflows"
    copies.mkdir()
    shutil.copy(bundled_directory() / "coding-task.json", copies / "coding-task.json")
    changed = (
        (bundled_directory() / "mr-review.json").read_bytes().replace(b'"name"', b'"name" ', 1)
    )
    (copies / "mr-review.json").write_bytes(changed)
    result = invoke(["--project", str(tmp_path), "list"])
    assert "'coding-task'" not in result.stderr, result.stderr
    assert f"workflow 'mr-review' from {copies / 'mr-review.json'} shadows" in result.stderr, (
        result.stderr
    )


def _first_step_that_sets(workflow: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """The steps before the first top-level step with `sets`, and that step."""
    for index, step in enumerate(workflow["steps"]):
        if step.get("sets"):
            return [s["id"] for s in workflow["steps"][:index]], step
    return None


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(bundled_directory().glob("*.json")) if p.stem != "python-quality-gate"],
    ids=lambda p: p.stem,
)
def test_each_bundled_workflow_asks_for_its_declared_context(tmp_path: Path, path: Path) -> None:
    """`workrail next` (the real process) serves the first step that sets context variables
    with the generated request: each variable, its description, its allowed values."""
    workflow = json.loads(path.read_text(encoding="utf-8"))
    found = _first_step_that_sets(workflow)
    assert found is not None, path.stem
    before, step = found
    argv = ["next", "--format", "json", path.stem]
    served = workrail(
        tmp_path, tmp_path, *argv, *(["--completed", ",".join(before)] * bool(before))
    )
    assert served.returncode == 0, served.stderr
    prompt = json.loads(served.stdout)["step"]["prompt"]
    assert names_asked(prompt) == step["sets"]
    lines = prompt.split(REQUEST, 1)[1].split("\n\n", 1)[0].splitlines()
    for line, name in zip(lines, step["sets"], strict=True):
        schema = workflow["context"][name]
        assert f"({schema['description']})" in line, line
        for value in schema.get("enum", []):
            assert json.dumps(value) in line, line
