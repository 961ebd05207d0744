-- WorkRail workflow files in Neovim: starts `workrail-lsp` for workflow files only.
--
-- Neovim 0.11+: registered with vim.lsp.config / vim.lsp.enable.
-- Older (0.8-0.10: vim.lsp.start; 0.7: vim.lsp.start_client): a FileType autocommand.
local M = {}

M.defaults = {
  -- The server command; `{ "python3", "-m", "workrail_lsp" }` works too.
  cmd = { "workrail-lsp" },
  filetypes = { "json", "jsonc", "yaml" },
  -- Sent as initializationOptions and answered to workspace/configuration (section "workrail"):
  -- workflowGlobs = { "**/*.workflow.json", ... }, extraWorkflowDirs = { "~/my-workflows" }
  settings = { workrail = {} },
  root_markers = { ".workrail", "workflows", ".git" },
  -- Lua patterns (matched against the full path) of files that are workflows, besides `$schema`.
  patterns = { "%.workflow%.json$", "%.workflow%.ya?ml$", "/workflows/.+%.json$", "/workflows/.+%.ya?ml$" },
  -- Register through a FileType autocommand even on 0.11+ (what older Neovim always does).
  use_autocmd = false,
}

local function has_workrail_schema(bufnr)
  local head = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, 20, false), "\n")
  return head:find('"%$schema"%s*:%s*"[^"]*workflow%.schema%.json"') ~= nil
end

--- Whether the buffer holds a workflow file (its path, or a `$schema` naming the WorkRail schema).
function M.is_workflow(bufnr, patterns)
  local path = vim.api.nvim_buf_get_name(bufnr)
  for _, pattern in ipairs(patterns or M.defaults.patterns) do
    if path:find(pattern) then
      return true
    end
  end
  return has_workrail_schema(bufnr)
end

local function find_root(path, markers)
  local found = vim.fs.find(markers, { path = vim.fs.dirname(path), upward = true })[1]
  return found and vim.fs.dirname(found) or vim.fs.dirname(path)
end

local function server_config(opts)
  return {
    name = "workrail",
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    settings = opts.settings,
    init_options = opts.settings,
  }
end

local function start_for(bufnr, opts)
  if not M.is_workflow(bufnr, opts.patterns) then
    return
  end
  local config = server_config(opts)
  config.root_dir = find_root(vim.api.nvim_buf_get_name(bufnr), opts.root_markers)
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = bufnr })
  else -- Neovim 0.7
    M._client_id = M._client_id or vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, M._client_id)
  end
end

local function add_commands()
  vim.api.nvim_create_user_command("WorkrailValidateWorkspace", function()
    for _, client in ipairs((vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = "workrail" })) do
      local params = { command = "workrail.server.validateWorkspace" }
      local function report(err, result)
        if err then
          vim.notify("WorkRail: " .. err.message, vim.log.levels.ERROR)
        else
          local totals = result.summary
          vim.notify(("WorkRail: %d workflow files, %d errors, %d warnings"):format(totals.filesChecked, totals.errors, totals.warnings))
        end
      end
      if vim.fn.has("nvim-0.11") == 1 then
        client:request("workspace/executeCommand", params, report)
      else
        client.request("workspace/executeCommand", params, report)
      end
    end
  end, { desc = "Check every workflow file of the workspace" })
end

--- Register the server. `opts` overrides M.defaults (cmd, filetypes, settings, root_markers, patterns).
function M.setup(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  add_commands()
  if vim.fn.has("nvim-0.11") == 1 and vim.lsp.config and not opts.use_autocmd then
    local config = server_config(opts)
    config.root_dir = function(bufnr, on_dir)
      if M.is_workflow(bufnr, opts.patterns) then
        on_dir(find_root(vim.api.nvim_buf_get_name(bufnr), opts.root_markers))
      end
    end
    vim.lsp.config("workrail", config)
    vim.lsp.enable("workrail")
    return
  end
  vim.api.nvim_create_autocmd("FileType", {
    pattern = opts.filetypes,
    group = vim.api.nvim_create_augroup("workrail_lsp", { clear = true }),
    callback = function(args)
      start_for(args.buf, opts)
    end,
  })
end

return M
