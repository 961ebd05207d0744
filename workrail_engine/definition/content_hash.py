"""The content hash that names a compiled workflow: sessions pin it, runs and answers record it,
replay compares it with the file as it is now."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["workflow_hash"]


def workflow_hash(definition: Mapping[str, Any]) -> str:
    """``sha256:`` and the hex digest of the canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(definition, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
