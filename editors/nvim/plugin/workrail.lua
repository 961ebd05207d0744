-- Nothing starts on load: call require("workrail").setup() (lazy.nvim: `opts = {}`), or on
-- Neovim 0.11+ simply vim.lsp.enable("workrail").
if vim.g.loaded_workrail then
  return
end
vim.g.loaded_workrail = true
