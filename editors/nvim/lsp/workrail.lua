-- Neovim 0.11+ reads this file for `vim.lsp.enable("workrail")` when editors/nvim is on the
-- runtimepath; require("workrail").setup() does the same with options.
local workrail = require("workrail")
return {
  cmd = workrail.defaults.cmd,
  filetypes = workrail.defaults.filetypes,
  settings = workrail.defaults.settings,
  init_options = workrail.defaults.settings,
  root_dir = function(bufnr, on_dir)
    if workrail.is_workflow(bufnr) then
      local found = vim.fs.find(workrail.defaults.root_markers, { path = vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)), upward = true })[1]
      on_dir(found and vim.fs.dirname(found) or vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)))
    end
  end,
}
