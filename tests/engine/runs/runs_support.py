"""Small builders of test workflows."""

from __future__ import annotations

import sys
from pathlib import Path

PY = sys.executable


def py(code: str) -> list[str]:
    return [PY, "-c", code]


def command(step_id: str, argv: list[str], **extra) -> dict:
    return {"id": step_id, "title": step_id, "run": {"command": argv}, **extra}


def workflow(*steps: dict, **extra) -> dict:
    return {"id": "test-run", "name": "Test run", "steps": list(steps), **extra}


def loop_of_groups(marks: Path, nap_at: str) -> dict:
    """A forEach over x, y, z whose body is a parallel group of members left and right; each member
    marks and prints "NAME ITEM". Member left at item ``nap_at`` first naps 3 s (once: run again
    after a crash, it does not)."""
    code = (
        "import os, sys, time; name, item = sys.argv[1:]; "
        f"marks = {str(marks)!r}; "
        "seen = open(marks).read().splitlines() if os.path.exists(marks) else []; "
        "open(marks, 'a').write(f'{name} {item}\\n'); "
        f"time.sleep(3 if name == 'left' and item == {nap_at!r} and 'left ' + item not in seen else 0); "
        "print(name, item)"
    )
    members = [
        command(name, [sys.executable, "-c", code, name, "{{context.item}}"])
        for name in ("left", "right")
    ]
    return workflow(
        {
            "id": "each",
            "title": "each",
            "type": "loop",
            "loop": {"type": "forEach", "items": ["x", "y", "z"], "itemVar": "item"},
            "body": [{"id": "group", "title": "group", "type": "parallel", "steps": members}],
        }
    )


# what `loop_of_groups` gives, by step key
LOOP_OUTPUTS = {
    f"{name}[{i}]": f"{name} {item}\n"
    for i, item in enumerate("xyz", 1)
    for name in ("left", "right")
}


LOG_LINE = "import sys; line = ' '.join(sys.argv[2:]); open(sys.argv[1], 'a').write(line + '\\n'); print(line)"


def fork_flow(log: Path) -> dict:
    """A run to fork: `first`, a `for` loop of 3 iterations whose body is a parallel group of
    `left` and `right`, `last`, then `noted` when the context variable ``note`` is ``yes``. Each
    step appends a line to ``log`` (`NAME ITERATION`; `last TAG` with the parameter ``tag``), so
    what ran, and with which values, is read back from the file."""

    def logging(step_id: str, *words: str, **extra) -> dict:
        return command(step_id, [PY, "-c", LOG_LINE, str(log), step_id, *words], **extra)

    return workflow(
        logging("first"),
        {
            "id": "each",
            "title": "each",
            "type": "loop",
            "loop": {"type": "for", "count": 3, "iterationVar": "i"},
            "body": [
                {
                    "id": "pair",
                    "title": "pair",
                    "type": "parallel",
                    "steps": [logging(name, "{{context.i}}") for name in ("left", "right")],
                }
            ],
        },
        logging("last", "{{parameters.tag}}"),
        logging("noted", runCondition={"var": "note", "equals": "yes"}),
        id="fork-flow",
        parameters={"type": "object", "properties": {"tag": {"type": "string", "default": "a"}}},
    )


def fork_log_line(key: str) -> str:
    """The line `fork_flow` logs for a step of the loop (``left[2]`` → ``left 2``)."""
    name, _, iteration = key.partition("[")
    return f"{name} {iteration.rstrip(']')}"
