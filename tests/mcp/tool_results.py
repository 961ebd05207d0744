"""Reading what a tool call answered, for the tests that call tools through the SDK's client."""

from __future__ import annotations

import json
from typing import Any


def error_of(result: Any) -> dict[str, Any]:
    """The error of a failed tool call: JSON text alone, no structured content beside it."""
    assert result.is_error, result
    assert result.structured_content is None
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    return error
