"""WorkRail language server: a thin adapter from LSP (pygls) to workrail_engine."""
