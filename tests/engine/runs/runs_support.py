"""Small builders of test workflows."""

from __future__ import annotations

import sys

PY = sys.executable


def py(code: str) -> list[str]:
    return [PY, "-c", code]


def command(step_id: str, argv: list[str], **extra) -> dict:
    return {"id": step_id, "title": step_id, "run": {"command": argv}, **extra}


def workflow(*steps: dict, **extra) -> dict:
    return {"id": "test-run", "name": "Test run", "steps": list(steps), **extra}
