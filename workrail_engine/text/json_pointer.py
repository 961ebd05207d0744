"""JSON pointers (RFC 6901): the one escaping of reference tokens every module uses."""

from __future__ import annotations

__all__ = ["escape_token", "pointer_join", "unescape_token"]


def escape_token(token: str | int) -> str:
    """``a/b~c`` → ``a~1b~0c`` ("~" first, so an escaped "/" is not escaped again)."""
    text = token if type(token) is str else str(token)
    if "~" not in text and "/" not in text:  # most keys: no new string
        return text
    return text.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def pointer_join(pointer: str, *tokens: str | int) -> str:
    """``pointer`` extended by ``tokens`` as reference tokens."""
    # A loop, not a join over a generator: linting joins tens of thousands of pointers of one
    # or two tokens, most of them needing no escape, and the generator was most of their cost.
    for token in tokens:
        if type(token) is int or (type(token) is str and "~" not in token and "/" not in token):
            pointer = f"{pointer}/{token}"
        else:
            pointer = f"{pointer}/{escape_token(token)}"
    return pointer
