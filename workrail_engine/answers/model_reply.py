"""A model's reply read as an answer: its notes, and the context variables the step sets.

A step that declares variables in its ``sets`` asks whoever answers it to send them (the
generated paragraph of its prompt); the agent sends them as the answer's ``context``, a model
has text alone. So the model's request asks for them in one fenced block after the notes,

    ```context
    {"taskSize": "small"}
    ```

and the reply is split here into the notes (the text without the block) and the context (the
block's JSON object), which then go through the agent's answer path and its checks — declared
types, allowed values, required variables — and are sent back with the agent's messages when
they fail. A model may set only the variables its step declares in ``sets``: a block that names
another, or that is not one JSON object, is sent back before the answer path sees it. A step that
declares none takes the whole reply as its notes, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..definition.declared import declared_sets
from ..limits import MAX_ANSWER_CHARS

__all__ = ["CONTEXT_BLOCK", "ModelReply", "context_instruction", "read_reply"]

CONTEXT_BLOCK = "context"  # the info string of the fenced block the model sends its variables in
_FENCE = "```"


@dataclass(frozen=True)
class ModelReply:
    """The reply as an answer: ``notes`` and ``context``; ``problems``: why it is sent back
    before it is checked (empty: it goes to the answer path)."""

    notes: str
    context: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def context_instruction(definition: Mapping[str, Any], step: Mapping[str, Any]) -> str:
    """The part of the model's request that asks for the step's declared ``sets`` in the
    block ("" for a step that declares none)."""
    names = list(declared_sets(definition, step))
    if not names:
        return ""
    return (
        f"Send the context variables this step sets ({', '.join(names)}) at the end of your "
        f"answer, after your notes, as one JSON object in a fenced code block opened with "
        f"```{CONTEXT_BLOCK}:\n```{CONTEXT_BLOCK}\n"
        + json.dumps({name: "…" for name in names}, ensure_ascii=False)
        + "\n```"
    )


def read_reply(definition: Mapping[str, Any], step: Mapping[str, Any], text: str) -> ModelReply:
    """The model's ``text`` to ``step`` as notes and context (see the module's docstring)."""
    names = declared_sets(definition, step)
    if not names or len(text) > MAX_ANSWER_CHARS:
        return ModelReply(text)  # too long: the answer path refuses it as any answer
    found = _last_block(text)
    if found is None:
        return ModelReply(text)  # the answer path says which required variables are missing
    notes, body = found
    try:
        context = json.loads(body)
    except (json.JSONDecodeError, RecursionError) as error:
        return ModelReply(notes, problems=[f"the ```{CONTEXT_BLOCK} block is not JSON: {error}"])
    if not isinstance(context, dict):
        return ModelReply(
            notes, problems=[f"the ```{CONTEXT_BLOCK} block must hold one JSON object"]
        )
    others = sorted(name for name in context if name not in names)
    if others:
        return ModelReply(
            notes,
            problems=[f"this step sets only {', '.join(names)}; leave out {', '.join(others)}"],
        )
    return ModelReply(notes, context)


def _last_block(text: str) -> tuple[str, str] | None:
    """(the text before it, its body) of the ```context block that ends ``text`` (white space
    after it aside); None when the text ends otherwise. Found from the end, in one pass: the
    text is up to `MAX_ANSWER_CHARS` of a model's making."""
    ending = text.rstrip()
    if not ending.endswith("\n" + _FENCE):
        return None
    closing = len(ending) - len(_FENCE)
    opening = ending.rfind(_FENCE + CONTEXT_BLOCK, 0, closing)
    if opening < 0 or (opening > 0 and ending[opening - 1] != "\n"):
        return None
    line_end = ending.find("\n", opening, closing)
    if line_end < 0 or ending[opening + len(_FENCE + CONTEXT_BLOCK) : line_end].strip():
        return None  # not the block's own line (```contextual…)
    return text[:opening].rstrip(), ending[line_end + 1 : closing - 1]
