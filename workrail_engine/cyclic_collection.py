"""CPython's cyclic garbage collector kept away from work that builds many long-lived objects.

Both `workrail validate` (every document checked stays alive until its report is written) and
`workrail-mcp`'s start (the SDK's protocol models, our modules and tools, kept for the life of the
process) build objects that its passes walk again and again and find next to nothing to free:
~5 % of `workrail validate`'s instructions on 1,000 files, a full pass of 50–90 ms landing on the
MCP server's first requests (docs/benchmarks.md). Reference counting frees everything else as
usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cyclic_collection_paused"]


@contextmanager
def cyclic_collection_paused(*, freeze_after: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block; on leaving it, the collector as it was before.

    ``freeze_after``: what the block built is moved out of the collector's reach for good
    (`gc.freeze`) when the block ends without error — for objects kept for the life of the
    process; the few in reference cycles among them are then never collected.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze_after:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
