"""Bindings: the project's values for a workflow's extension points."""

from __future__ import annotations

from workrail_engine.compile.bindings import project_bindings


def test_project_bindings_file_per_workflow_or_flat(tmp_path) -> None:
    (tmp_path / ".workrail").mkdir()
    file = tmp_path / ".workrail" / "bindings.json"
    file.write_text('{"w": {"reviewer": "ours"}, "other": {"reviewer": "theirs"}}')
    assert project_bindings(tmp_path, "w") == {"reviewer": "ours"}
    file.write_text('{"reviewer": "flat"}')
    assert project_bindings(tmp_path, "anything") == {"reviewer": "flat"}
    file.write_text("not json")
    assert project_bindings(tmp_path, "w") == {}
