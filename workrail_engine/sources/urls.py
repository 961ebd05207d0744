"""Which repository URLs are read, and what a URL is called on disk.

Only ``https``, ``ssh`` (``ssh://`` and the scp-like ``user@host:path``), ``git`` and ``file`` are
accepted. ``http`` is accepted for a loopback host only (a Git server on this machine): over any
other network a token would travel in clear text. Everything else is refused before Git sees it:
a transport helper (``ext::sh -c …`` runs a command, ``fd::`` reads descriptors), another scheme,
a bare path, a URL starting with ``-`` (read as an option), and a URL carrying a password (tokens
come from the environment, never from a file that is committed).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

__all__ = ["UrlRefused", "cache_name", "check_url", "display_url", "host_of", "scheme_of"]

ALLOWED_SCHEMES = ("https", "ssh", "git", "file")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# user@host:path (scp-like ssh); the host is a name or an address, the path no "//" start.
_SCP = re.compile(r"^(?:[A-Za-z0-9._~-]+@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):(?!//)(?!:)\S+$")


class UrlRefused(ValueError):
    """A repository URL WorkRail will not hand to Git."""


def scheme_of(url: str) -> str:
    found = _SCHEME.match(url)
    return found.group(1).lower() if found else "ssh"


def host_of(url: str) -> str:
    if _SCHEME.match(url):
        return (urlsplit(url).hostname or "").lower()
    found = _SCP.match(url)
    return found.group(1).strip("[]").lower() if found else ""


def check_url(url: str, where: str) -> str:
    """``url`` when WorkRail may fetch it; else :class:`UrlRefused` saying why and what to do."""
    refused = _why_refused(url)
    if refused:
        raise UrlRefused(f"{where}: repository URL {display_url(url)!r} refused: {refused}")
    return url


def _why_refused(url: str) -> str | None:
    found = _SCHEME.match(url)
    if found is None and "::" in url.split("/")[0]:
        return (
            "a transport helper (such as ext:: or fd::) can run commands; "
            "use https, ssh, git or file"
        )
    if not url or url.startswith("-") or any(c.isspace() or ord(c) < 32 for c in url):
        return "it is empty, starts with '-' or holds spaces or control characters"
    if found is None:
        if _SCP.match(url) and not url.startswith(("/", ".", "~")):
            return None
        return "not a URL; a local repository is written file:///absolute/path"
    scheme = found.group(1).lower()
    parts = urlsplit(url)
    if scheme == "http":
        if (parts.hostname or "") in LOOPBACK_HOSTS:
            return None
        return "plain http is accepted for a loopback host only; use https"
    if scheme not in ALLOWED_SCHEMES:
        return f"the {scheme!r} scheme is not one of {', '.join(ALLOWED_SCHEMES)}"
    if parts.password is not None:
        return (
            "it holds a password or token; put the token in the environment "
            "(WORKRAIL_GIT_TOKEN, GITHUB_TOKEN, …) instead"
        )
    if scheme != "file" and not parts.hostname:
        return "it names no host"
    return None


def display_url(url: str) -> str:
    """``url`` with any password replaced, for messages (a refused URL may hold one)."""
    found = _SCHEME.match(url)
    if found is None:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{netloc}").geturl()


def cache_name(url: str) -> str:
    """A folder name for ``url`` that is stable, readable and never collides: the URL's last
    words and 12 hex digits of its SHA-256."""
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", re.sub(r"^[A-Za-z0-9+.-]*://", "", url)).strip("-.")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return f"{tail[-60:].lstrip('-.') or 'repo'}-{digest}"
