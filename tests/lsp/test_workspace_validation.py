"""`workrail.server.validateWorkspace` (in-process): the project configuration's `strict` and
selection apply as they do to `workrail validate --format json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workrail_lsp.configuration import Settings
from workrail_lsp.workspace_validation import validate_workspace

# Its id differs from its file name: WR601, a warning, and nothing else.
MISNAMED = {
    "id": "other-name",
    "name": "N",
    "version": "1.0.0",
    "steps": [{"id": "one", "title": "One", "prompt": "Do it."}],
}


@pytest.mark.parametrize(
    ("config", "codes", "passed"),
    [
        pytest.param("", ["WR601"], True, id="a-warning-passes"),
        pytest.param("strict = true\n", ["WR601"], False, id="strict-a-warning-fails"),
        pytest.param('strict = true\nignore = ["WR6"]\n', [], True, id="ignored-nothing-fails"),
    ],
)
def test_strict_and_selection_decide_passed(
    tmp_path: Path, config: str, codes: list[str], passed: bool
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "flow.json").write_text(json.dumps(MISNAMED, indent=2))
    (tmp_path / "pyproject.toml").write_text("[tool.workrail]\n" + config)
    result = validate_workspace([tmp_path], Settings())
    (report,) = result["files"]
    assert [d["code"] for d in report["diagnostics"]] == codes
    assert result["summary"]["passed"] is passed
