"""`workrail format` through the console script: write, --check, --diff, standard input."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixable_texts import YAML_TEXT, YAML_UNINDENTED
from test_fix_cli import run

UGLY_JSON = '{"id":"ugly","name":"U","version":"1.0.0","steps":[{"id":"one","title":"One","prompt":"p","retry":{"maxAttempts":2.0}}],"tags":[]}'
PRETTY_JSON = """\
{
  "id": "ugly",
  "name": "U",
  "version": "1.0.0",
  "steps": [
    {
      "id": "one",
      "title": "One",
      "prompt": "p",
      "retry": {
        "maxAttempts": 2.0
      }
    }
  ],
  "tags": []
}
"""
UNINDENTED_YAML = YAML_UNINDENTED


@pytest.fixture
def project(tmp_path: Path) -> Path:
    flows = tmp_path / "workflows"
    flows.mkdir()
    (flows / "ugly.json").write_text(UGLY_JSON)
    (flows / "yaml-flow.yaml").write_text(UNINDENTED_YAML)
    (flows / "done.json").write_text(PRETTY_JSON.replace('"ugly"', '"done"'))
    return tmp_path


def test_check_changes_nothing_and_exits_1(project: Path) -> None:
    result = run(project, "format", "--check", expect=1)
    assert result.stdout == (
        "Would reformat: workflows/ugly.json\nWould reformat: workflows/yaml-flow.yaml\n"
        "2 files would be reformatted, 1 file already formatted\n"
    )
    assert (project / "workflows" / "ugly.json").read_text() == UGLY_JSON


def test_format_writes_json_and_yaml_keeping_comments(project: Path) -> None:
    result = run(project, "format", expect=0)
    assert result.stdout == "2 files reformatted, 1 file left unchanged\n"
    assert (project / "workflows" / "ugly.json").read_text() == PRETTY_JSON
    assert (project / "workflows" / "yaml-flow.yaml").read_text() == YAML_TEXT
    assert run(project, "format", "--check", expect=0).stdout == "3 files already formatted\n"


def test_diff_prints_what_would_change(project: Path) -> None:
    result = run(project, "format", "--diff", "workflows/yaml-flow.yaml", expect=1)
    assert result.stdout.startswith("--- workflows/yaml-flow.yaml\n+++ workflows/yaml-flow.yaml\n")
    assert "\n-- id: one\n" in result.stdout and "\n+  - id: one\n" in result.stdout
    assert result.stderr == "1 file would be reformatted\n"


def test_stdin_to_stdout_with_the_file_type_from_its_name(project: Path) -> None:
    result = run(
        project, "format", "-", "--stdin-filename", "a.yml", stdin=UNINDENTED_YAML, expect=0
    )
    assert result.stdout == YAML_TEXT
    assert run(project, "format", "-", stdin=UGLY_JSON, expect=0).stdout == PRETTY_JSON
    # --stdin-filename without PATHS reads standard input too (ruff's habit)
    named = run(project, "format", "--stdin-filename", "b.json", stdin=UGLY_JSON, expect=0)
    assert named.stdout == PRETTY_JSON
    assert run(project, "format", "--check", "-", stdin=PRETTY_JSON, expect=0).stdout == ""


def test_a_file_that_does_not_parse_is_left_alone_and_exits_2(project: Path) -> None:
    broken = project / "workflows" / "broken.json"
    broken.write_text('{"id": "broken",')
    result = run(project, "format", expect=2)
    assert "workflows/broken.json: not formatted: it does not parse" in result.stderr
    assert broken.read_text() == '{"id": "broken",'
    assert (project / "workflows" / "ugly.json").read_text() == PRETTY_JSON  # the others are done


def test_a_symlinked_file_is_formatted_through_the_link(project: Path) -> None:
    target = project / "real.json"
    target.write_text(UGLY_JSON)
    link = project / "workflows" / "linked.json"
    link.symlink_to(target)
    run(project, "format", "workflows/linked.json", expect=0)
    assert link.is_symlink() and target.read_text() == PRETTY_JSON


FLOW_SEQUENCE_COMMENT = "id: tagged\ntags: [\n  ops, # the on-call rota reads this\n  release\n]\n"
FLOW_MAPPING_COMMENT = "id: meta\nmeta: {\n  owner: ops, # who to ask\n  tier: 1\n}\n"


@pytest.mark.parametrize("text", [FLOW_SEQUENCE_COMMENT, FLOW_MAPPING_COMMENT])
def test_a_comment_the_yaml_layout_would_drop_leaves_the_file_alone(
    project: Path, text: str
) -> None:
    path = project / "workflows" / "commented.yaml"
    path.write_text(text)
    result = run(project, "format", "workflows/commented.yaml", expect=2)
    assert path.read_text() == text
    assert (
        "workflows/commented.yaml: not formatted: the layout would drop the comment on line 3 (#"
        in (result.stderr)
    )


def test_comments_after_the_document_end_marker_are_kept(project: Path) -> None:
    path = project / "workflows" / "ended.yaml"
    path.write_text(UNINDENTED_YAML + "...  # end of the workflow\n\n# Reviewed by ops.\n")
    run(project, "format", "workflows/ended.yaml", expect=0)
    assert path.read_text() == YAML_TEXT + "...  # end of the workflow\n\n# Reviewed by ops.\n"
