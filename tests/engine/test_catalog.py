"""The catalog: layered sources, shadowing, invalid files, and changes noticed without a restart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workrail_engine.catalog import Catalog, Source, bundled_directory, default_sources
from workrail_engine.errors import WorkflowNotFound


def write(directory: Path, workflow_id: str, name: str = "W", **extra) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{workflow_id}.json"
    body = {
        "id": workflow_id,
        "name": name,
        "steps": [{"id": "one", "title": "One", "prompt": "Do it."}],
        **extra,
    }
    path.write_text(json.dumps(body))
    return path


@pytest.fixture
def layers(tmp_path):
    dirs = {kind: tmp_path / kind for kind in ("bundled", "user", "project")}
    return dirs, Catalog([Source(kind, d) for kind, d in dirs.items()], rescan_interval=0)


def test_later_source_wins_and_shadowing_is_reported(layers):
    dirs, catalog = layers
    write(dirs["bundled"], "review", name="Bundled")
    winner = write(dirs["project"], "review", name="Project")
    write(dirs["user"], "solo")
    assert catalog.get("review").definition["name"] == "Project"
    assert catalog.get("review").source.kind == "project"
    [shadow] = catalog.shadowed()
    assert shadow.workflow_id == "review" and shadow.winner == winner
    assert shadow.hidden == (dirs["bundled"] / "review.json",)
    assert catalog.ids() == ["review", "solo"]


def test_invalid_files_are_left_out_and_reported(layers):
    dirs, catalog = layers
    write(dirs["user"], "good")
    dirs["user"].joinpath("broken.json").write_text('{"id": "broken",')
    dirs["user"].joinpath("bad-schema.json").write_text(
        '{"id": "bad-schema", "name": "x", "steps": [{"id": "s1x", "title": "T"}]}'
    )
    assert catalog.ids() == ["good"]
    invalid = {f.path.name: [d.code for d in f.diagnostics] for f in catalog.invalid_files()}
    assert invalid == {"bad-schema.json": ["WR103"], "broken.json": ["WR001"]}


def test_not_found_names_the_closest_ids(layers):
    dirs, catalog = layers
    write(dirs["user"], "coding-task")
    with pytest.raises(WorkflowNotFound) as caught:
        catalog.get("codng-task")
    assert caught.value.code == -32001
    assert caught.value.data["closest"] == ["coding-task"]


def test_added_changed_and_removed_files_are_noticed(layers):
    dirs, catalog = layers
    path = write(dirs["user"], "first")
    assert catalog.ids() == ["first"]
    generation = catalog.generation
    write(dirs["user"], "second")
    assert catalog.ids() == ["first", "second"]
    write(dirs["user"], "first", name="Renamed", description="now longer")
    assert catalog.get("first").definition["name"] == "Renamed"
    path.unlink()
    assert catalog.ids() == ["second"]
    assert catalog.generation > generation


def test_unchanged_files_are_not_read_again(layers, monkeypatch):
    dirs, catalog = layers
    write(dirs["user"], "a")
    write(dirs["user"], "b")
    catalog.ids()
    reads = []
    import workrail_engine.catalog as module

    original = module.lint_path
    monkeypatch.setattr(module, "lint_path", lambda p: reads.append(Path(p).name) or original(p))
    write(dirs["user"], "b", name="Changed", description="size differs")
    catalog.ids()
    assert reads == ["b.json"]


def test_rescan_interval_throttles_directory_scans(tmp_path):
    catalog = Catalog([Source("user", tmp_path)], rescan_interval=3600)
    assert catalog.ids() == []
    write(tmp_path, "late")
    assert catalog.ids() == []  # not due yet
    catalog.refresh(force=True)
    assert catalog.ids() == ["late"]


def test_default_sources_order(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(
        "WORKRAIL_WORKFLOW_PATH", os.pathsep.join([str(tmp_path / "e1"), str(tmp_path / "e2")])
    )
    sources = default_sources(tmp_path / "proj", [tmp_path / "extra"])
    assert [(s.kind, s.directory) for s in sources] == [
        ("bundled", bundled_directory()),
        ("user", tmp_path / "home" / "workflows"),
        ("env", tmp_path / "e1"),
        ("env", tmp_path / "e2"),
        ("project", tmp_path / "proj" / "workflows"),
        ("project", tmp_path / "proj" / ".workrail" / "workflows"),
        ("extra", tmp_path / "extra"),
    ]


def test_project_dirs_can_be_replaced(tmp_path):
    catalog = Catalog.default(tmp_path / "a", rescan_interval=0)
    write(tmp_path / "b" / "workflows", "from-b")
    assert "from-b" not in catalog.ids()
    catalog.set_project_dirs([tmp_path / "b"])
    assert "from-b" in catalog.ids()
    assert catalog.writable_directory() == tmp_path / "b" / "workflows"


def test_bundled_workflows_all_load():
    catalog = Catalog([Source("bundled", bundled_directory())])
    assert catalog.invalid_files() == []
    assert "ai-task-implementation" in catalog.ids()


def test_background_rescans_never_make_a_lookup_wait(tmp_path):
    import threading
    import time

    write(tmp_path, "first")
    catalog = Catalog([Source("user", tmp_path)], rescan_interval=0, background=True)
    assert catalog.ids() == ["first"]  # the first scan is synchronous
    write(tmp_path, "second")
    release = threading.Event()
    import workrail_engine.catalog as module

    original = module._list_directory

    def slow_listing(source):
        release.wait(5)
        return original(source)

    module._list_directory = slow_listing
    try:
        started = time.monotonic()
        assert catalog.ids() == ["first"]  # answered from the snapshot while the scan waits
        assert time.monotonic() - started < 1
        release.set()
        deadline = time.monotonic() + 5
        while "second" not in catalog.ids() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "second" in catalog.ids()
    finally:
        module._list_directory = original


def test_directories_are_searched_recursively_skipping_examples(layers):
    dirs, catalog = layers
    write(dirs["project"], "wr.discovery")
    write(dirs["project"] / "routines", "wr.routine-ideation")
    write(dirs["project"] / "internal" / "deeper", "wr.gate-eval")
    write(dirs["project"] / "examples", "example-only")
    write(dirs["project"] / "examples" / "loops", "loop-example")
    write(dirs["project"] / ".hidden", "hidden-one")
    assert catalog.ids() == ["wr.discovery", "wr.gate-eval", "wr.routine-ideation"]
    assert catalog.get("wr.routine-ideation").path == (
        dirs["project"] / "routines" / "wr.routine-ideation.json"
    )


def test_a_directory_link_loop_does_not_hang_the_scan(layers):
    dirs, catalog = layers
    write(dirs["project"] / "routines", "ideation")
    (dirs["project"] / "routines" / "back-up").symlink_to(dirs["project"], target_is_directory=True)
    assert catalog.ids() == ["ideation"]


def test_a_new_file_in_a_subfolder_is_noticed(layers):
    dirs, catalog = layers
    write(dirs["project"], "top")
    assert catalog.ids() == ["top"]
    write(dirs["project"] / "routines", "routine-late")
    assert catalog.ids() == ["routine-late", "top"]


def test_asking_for_an_invalid_files_id_explains_why(layers):
    from workrail_engine.errors import InvalidWorkflow

    dirs, catalog = layers
    dirs["project"].mkdir(parents=True)
    dirs["project"].joinpath("half-done.json").write_text(
        '{"id": "half-done", "name": "x", "steps": [{"id": "s1x", "title": "T"}]}'
    )
    with pytest.raises(InvalidWorkflow) as caught:
        catalog.get("half-done")
    error = caught.value
    assert error.code == -32002
    assert error.data["workflowId"] == "half-done"
    assert error.data["path"].endswith("half-done.json")
    assert [d["code"] for d in error.data["diagnostics"]] == ["WR103"]
    assert "WR103" in error.message
    with pytest.raises(WorkflowNotFound):  # an id no file has stays "not found"
        catalog.get("nobody-has-it")


@pytest.mark.parametrize(
    ("name", "text", "code"),
    [
        ("cut-short.json", '{"id": "cut-short", "steps": [', "WR001"),
        ("too-deep.json", '{"id": "too-deep", "x": ' + "[" * 70 + "]" * 70 + "}", "WR005"),
        ("no-id.yaml", "name: x\nsteps: []\n", "WR103"),
    ],
)
def test_an_invalid_file_that_names_no_id_answers_for_its_file_name(layers, name, text, code):
    """A file whose id cannot be read (it does not parse, or has none) is still asked for by its
    file name: the answer is its diagnostics (-32002), not "not found"."""
    from workrail_engine.errors import InvalidWorkflow

    dirs, catalog = layers
    dirs["project"].mkdir(parents=True)
    dirs["project"].joinpath(name).write_text(text)
    with pytest.raises(InvalidWorkflow) as caught:
        catalog.get(name.split(".")[0])
    assert caught.value.code == -32002
    assert caught.value.data["path"].endswith(name)
    assert code in [d["code"] for d in caught.value.data["diagnostics"]]


def test_each_invalid_file_is_reported_when_read_and_again_when_changed(tmp_path):
    reported = []
    directory = tmp_path / "project"
    catalog = Catalog(
        [Source("project", directory)],
        rescan_interval=0,
        report_invalid=lambda invalid: reported.append(
            (invalid.path.name, invalid.diagnostics[0].code)
        ),
    )
    write(directory, "good")
    broken = directory / "broken.json"
    broken.write_text('{"id": "broken",')
    catalog.ids()
    assert reported == [("broken.json", "WR001")]
    catalog.ids()
    catalog.ids()
    assert reported == [("broken.json", "WR001")]  # unchanged: not again
    broken.write_text(
        '{"id": "broken", "name": 3, "steps": [{"id": "one", "title": "T", "prompt": "p"}]}'
    )
    os.utime(broken, ns=(1, 1))  # a different stamp even on a coarse clock
    catalog.ids()
    assert reported == [("broken.json", "WR001"), ("broken.json", "WR101")]
