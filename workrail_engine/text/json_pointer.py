"""JSON pointers (RFC 6901): the one escaping of reference tokens every module uses."""

from __future__ import annotations

__all__ = ["escape_token", "pointer_join", "unescape_token"]


def escape_token(token: str | int) -> str:
    """``a/b~c`` → ``a~1b~0c`` ("~" first, so an escaped "/" is not escaped again)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def pointer_join(pointer: str, *tokens: str | int) -> str:
    """``pointer`` extended by ``tokens`` as reference tokens."""
    return pointer + "".join("/" + escape_token(token) for token in tokens)
