"""`workrail mcp …` / `workrail lsp …`: hand the remaining arguments to the server's own main.

The servers are imported only here, so the rest of the CLI never pays for `mcp` or `pygls`.
"""

from __future__ import annotations

import importlib

__all__ = ["forward"]


def forward(module_name: str, argv: list[str]) -> int:
    """Call ``module_name.main(argv)``; its return value (None meaning success) is the exit code."""
    module = importlib.import_module(module_name)
    result = module.main(argv)
    return result if isinstance(result, int) else 0
