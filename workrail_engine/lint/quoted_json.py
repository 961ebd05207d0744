"""WR409: a validation rule's ``message`` that quotes a JSON snippet.

The message is what an agent reads when its output fails the rule. Quoted JSON in it —
``Output must include "{\\"state\\": \\"init\\"}"`` — reads as a string to return: agents copy it
literally and answer with a JSON-encoded string (quotes escaped) instead of the object. Upstream
WorkRail warns on the same thing.

The rule, chosen to flag only real JSON: at a ``{`` or ``[`` right after a double or single quote
(spaces between allowed), the text from there must parse as a JSON object with at least one key
or an array with at least one element — as written, or once its ``\\"`` are read as ``"`` (the
escaped form). ``"{name}"``, ``'[optional]'``, ``"{}"`` are placeholders or nothing, not flagged;
nor is unquoted JSON (``Return {"decision": "stop"}`` shows the object itself) or JSON in a
markdown code span (agents read backticks as code, not as a string).
"""

from __future__ import annotations

import json
import re

__all__ = [
    "MAX_QUOTED_JSON_CHARS",
    "MAX_QUOTED_OPENINGS",
    "QUOTED_JSON_IN_MESSAGE",
    "quoted_json_snippet",
]

QUOTED_JSON_IN_MESSAGE = "WR409"
# A message's snippet is a line's worth of JSON. Both bounds keep a hostile message (megabytes of
# quotes and brackets) linear: each opening is parsed within its window only (the parser's error
# on a near miss counts the lines before it), and only the first openings are tried.
MAX_QUOTED_JSON_CHARS = 2000  # of the text parsed from each opening
MAX_QUOTED_OPENINGS = 100  # tried per message (and per form, as written and unescaped)

# A quote, optional spaces, then the bracket that may open a JSON value (group 1: its index).
_QUOTED_OPENING = re.compile(r"""["']\s*([\[{])""")
_DECODER = json.JSONDecoder()


def quoted_json_snippet(message: str) -> str | None:
    """The first quoted JSON object or array in ``message`` (as parsed, compact), else None."""
    if "{" not in message and "[" not in message:
        # No opening: most messages. Two scans in C, where the pattern's search tests each
        # character against its class of quotes.
        return None
    texts = [message]
    if '\\"' in message:
        texts.append(message.replace('\\"', '"'))
    for text in texts:
        for tried, opening in enumerate(_QUOTED_OPENING.finditer(text)):
            if tried == MAX_QUOTED_OPENINGS:
                break
            start = opening.start(1)
            value = _json_at(text[start : start + MAX_QUOTED_JSON_CHARS])
            if isinstance(value, (dict, list)) and value:
                return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return None


def _json_at(text: str) -> object:
    """The JSON value ``text`` starts with, or None where it starts with none."""
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):  # not JSON; or brackets nested past the parser's stack
        return None
    return value
