"""A key for caching what a check found in a parsed JSON/YAML value, by the value's content.

Checks of conditions, criteria and embedded schemas see every type and the order of every
object's keys: ``1``, ``1.0``, ``True`` and ``"1"`` apart. A key must tell apart what they tell
apart, which equality (``True == 1``, dicts equal in any order) and ``json.dumps`` (``{1: x}`` and
``{"1": x}``) do not. `marshal`'s format writes each type and each key in order, and in version 2
(no references between objects) equal values write alike; it is twice as fast as ``repr``.
"""

from __future__ import annotations

import marshal

__all__ = ["content_key"]


def content_key(value: object) -> bytes | None:
    """``value`` as a key; None for a value marshal does not write (a YAML timestamp, another
    mapping type, nesting past its depth), which is then checked without a cache."""
    if type(value) is not dict:
        return None
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None
