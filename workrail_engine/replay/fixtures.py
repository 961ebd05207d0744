"""Recorded histories as small JSON files a team commits, and read back: `workrail replay
--export DIR` writes them, `workrail replay --from DIR` replays them.

A fixture holds what replay needs and nothing of the machine it came from: strings are masked
with the workflow's declared secrets (read from this process's environment, as a run masks
them) and every absolute path of this machine that replay knows of (the project, the run
store's home, the user's home) is replaced by a placeholder, so the same fixtures replay the same
on any machine. One file per history: ``DIR/<workflow id>/<history id>.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..runs.secrets import SecretSet
from .history import History

__all__ = [
    "MAX_FIXTURE_BYTES",
    "MAX_FIXTURE_FILES",
    "FixtureError",
    "export_histories",
    "load_histories",
    "machine_paths",
]

MAX_FIXTURE_BYTES = 4 << 20  # of one fixture file read back (a history is kilobytes)
MAX_FIXTURE_FILES = 10_000  # fixture files read from one directory
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class FixtureError(Exception):
    """A fixture directory or file that cannot be read: the message names it and says why."""


def machine_paths(*directories: Path | None) -> list[tuple[str, str]]:
    """(absolute path, placeholder) for the project, the run store's home and the user's home —
    longest first, so that a path inside another is replaced whole."""
    named = [
        (directory, placeholder)
        for directory, placeholder in zip(
            directories, ("$PROJECT", "$WORKRAIL_HOME", "$STORE"), strict=False
        )
        if directory is not None
    ]
    named.append((Path.home(), "~"))
    pairs: dict[str, str] = {}
    for directory, placeholder in named:
        for spelled in {str(directory), str(Path(directory).resolve())}:
            if len(spelled) > 1:
                pairs.setdefault(spelled, placeholder)
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def _scrubbed(value: Any, paths: Sequence[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for path, placeholder in paths:
            if path in value:
                value = value.replace(path, placeholder)
        return value
    if isinstance(value, Mapping):
        return {_scrubbed(k, paths): _scrubbed(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, paths) for v in value]
    return value


def _file_name(text: str) -> str:
    name = _UNSAFE_NAME.sub("_", text).lstrip(".")
    return name or "_"


def export_histories(
    histories: Iterable[History],
    directory: Path,
    masks: Mapping[str, SecretSet],
    paths: Sequence[tuple[str, str]],
) -> list[Path]:
    """Write each history (masked with its workflow's ``masks``, ``paths`` replaced); the files
    written. Each is written whole or not at all (a temporary file renamed)."""
    written = []
    for history in histories:
        data = _scrubbed(history.to_dict(), paths)
        mask = masks.get(history.workflow_id)
        if mask is not None:
            data = mask.mask(data)
        folder = directory / _file_name(history.workflow_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (_file_name(history.id) + ".json")
        temporary = target.with_suffix(".json.tmp")
        temporary.write_text(
            json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8"
        )
        os.replace(temporary, target)
        written.append(target)
    return written


def load_histories(directory: Path) -> list[History]:
    """Every fixture under ``directory`` (``*.json``, sorted by path); `FixtureError` naming the
    file for one that is too large, not JSON, or not a fixture."""
    if not directory.is_dir():
        raise FixtureError(f"{directory}: no such directory of replay fixtures")
    files = sorted(p for p in directory.rglob("*.json") if p.is_file())
    if len(files) > MAX_FIXTURE_FILES:
        raise FixtureError(
            f"{directory}: {len(files):,} fixture files; at most {MAX_FIXTURE_FILES:,} are read"
            " — replay a subdirectory at a time"
        )
    histories = []
    for path in files:
        size = path.stat().st_size
        if size > MAX_FIXTURE_BYTES:
            raise FixtureError(
                f"{path}: {size:,} bytes; a replay fixture is at most {MAX_FIXTURE_BYTES:,}"
            )
        try:
            histories.append(History.from_dict(json.loads(path.read_text("utf-8"))))
        except (ValueError, UnicodeDecodeError) as error:
            raise FixtureError(f"{path}: {error}") from None
    return histories
