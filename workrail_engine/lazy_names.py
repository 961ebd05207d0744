"""A package's names, each loaded from its module on first use (PEP 562).

A front end that reads one module of a package (the MCP server's start reads `runs.resolve`)
then pays only for that module, not for everything the package's ``__init__`` names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["names_loaded_on_first_use"]


def names_loaded_on_first_use(package: str, module_of: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that gives each name of ``module_of`` from its module of ``package``."""

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
