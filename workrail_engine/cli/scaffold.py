"""`workrail init NAME`: write a small, valid workflow to start from.

The file is created atomically and never replaces an existing one: it is written to a temporary
file in the target directory, then hard-linked into place (linking fails if the name is taken,
so two concurrent `init`s cannot both win), then the temporary name is removed. ``mkstemp``
creates the file 0600; it is given the mode any new file would get (0666 less the umask) first.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from workrail_engine.cli.console import Console

__all__ = [
    "INIT_NAME_RULE",
    "check_name",
    "create_exclusively",
    "current_umask",
    "run_init",
    "starter_workflow",
]


# The names `init` writes: the plain kebab-case form of a workflow id. Ids with '_' or a namespace
# ('team.release') are valid in a file written by hand, as upstream writes them; a new file starts
# plain, so that its name, id and title ("Release checklist") all read the same.
_INIT_NAME = re.compile(r"[a-z0-9-]+")
INIT_NAME_RULE = "lower-case letters, digits and '-', 3-64 characters"


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name a new workflow, with the name to use instead; None when it can."""
    from workrail_engine.definition.ids import ID_MAX_LENGTH, ID_MIN_LENGTH

    if ID_MIN_LENGTH <= len(name) <= ID_MAX_LENGTH and _INIT_NAME.fullmatch(name):
        return None
    problem = f"{name!r} is not a name for a new workflow: use {INIT_NAME_RULE}"
    suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:ID_MAX_LENGTH].strip("-")
    if len(suggestion) >= ID_MIN_LENGTH and suggestion != name:
        return f"{problem} (did you mean {suggestion!r}?)"
    return f"{problem} (e.g. 'release-checklist')"


def starter_workflow(name: str) -> dict[str, Any]:
    from workrail_engine.schema import SCHEMA_ID

    title = name.replace("-", " ").strip().capitalize()
    return {
        "$schema": SCHEMA_ID,
        "id": name,
        "name": title,
        "description": f"{title}: describe what this workflow accomplishes.",
        "version": "0.1.0",
        "category": "development",
        "preconditions": ["The task is described clearly enough to start."],
        "steps": [
            {
                "id": "understand",
                "title": "Understand the task",
                "prompt": "Read the task and the relevant code. Summarise what has to change and why.",
            },
            {
                "id": "plan",
                "title": "Plan the change",
                "prompt": "Based on {{steps.understand.output}}, list the changes step by step.",
                "requireConfirmation": True,
            },
            {
                "id": "implement",
                "title": "Implement and verify",
                "prompt": "Make the changes of the plan, then run the tests and report the result.",
                "validationCriteria": {
                    "type": "length",
                    "min": 20,
                    "message": "Report what was changed and how it was verified.",
                },
            },
        ],
    }


def current_umask() -> int:
    """The process's umask, read without changing it where Linux shows it in /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # Elsewhere reading it means setting it: briefly to the strictest common mask, so a file
    # another thread might create meanwhile is never more open than intended.
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def create_exclusively(target: Path, content: str) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temp, target)  # raises FileExistsError instead of replacing
    finally:
        os.unlink(temp)


def run_init(name: str, directory: Path, console: Console) -> int:
    target = directory / f"{name}.json"
    if target.exists():
        console.error(f"{target} already exists; not overwriting it")
        return 1
    directory.mkdir(
        exist_ok=True
    )  # only the default ./workflows; the command line checks --dir exists
    content = json.dumps(starter_workflow(name), indent=2, ensure_ascii=False) + "\n"
    try:
        create_exclusively(target, content)
    except FileExistsError:
        console.error(f"{target} already exists; not overwriting it")
        return 1
    console.out(f"Created {target}")
    console.out(f"Check it with: workrail validate {target}")
    return 0
