"""The refs of built-in output contracts that modules outside `contracts` compare a step's
``contractRef`` with.

Kept apart from `contracts`, whose import builds every contract's schema: `workrail validate`
reads a loop's condition source (`serving.loop_source`) and needs no contract built.
"""

from __future__ import annotations

__all__ = ["LOOP_CONTROL"]

LOOP_CONTROL = "wr.contracts.loop_control"
