"""Running the ``git`` executable on a repository we do not trust.

Every call is an argument list (never a shell) with the same hardening, so that no repository and
no stray configuration can run a command or reach beyond what was asked:

- configuration: the system and global files are not read (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``): a person's ``core.hooksPath``, ``init.templateDir`` or
  credential helper does not apply; the environment passed is a short list, not ours whole;
- ``-c`` options: hooks off (``core.hooksPath=/dev/null``), ``core.fsmonitor`` off, LFS filters
  emptied (and ``GIT_LFS_SKIP_SMUDGE``), no submodule recursion, no credential helper, received
  objects checked (``transfer.fsckObjects``: a tree naming ``..`` or ``.git`` is refused), and
  every transport refused but https, ssh, git and file (and http, which `urls` allows for a
  loopback host only);
- no prompt ever (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode): a missing credential fails at once;
- a time-out per call (``GIT_TIMEOUT_SECONDS``); the whole process group is killed past it.

A token is taken from the environment only and handed to Git as an ``http.<url>.extraHeader``
through ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``: never in an argument list
(which ``ps`` shows), a URL or a file; it is sent to that URL's host only, and removed from every
error message (as written and as its Basic-auth form).
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .urls import host_of, scheme_of

__all__ = [
    "GIT_TIMEOUT_SECONDS",
    "Git",
    "GitError",
    "GitMissing",
    "token_for",
]

GIT_TIMEOUT_SECONDS = 300.0
"""The longest one Git call (a clone, a fetch) may take before its processes are killed."""
MAX_GIT_ERROR_CHARS = 2000
"""How much of Git's error output a message quotes (its end, where the reason is)."""

HARDENING = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.askPass=",
    "credential.helper=",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.clean=",
    "filter.lfs.required=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "transfer.fsckObjects=true",
    "protocol.allow=never",
    "protocol.https.allow=always",
    "protocol.http.allow=always",
    "protocol.ssh.allow=always",
    "protocol.git.allow=always",
    "protocol.file.allow=always",
    "uploadpack.packObjectsHook=",
)
# Passed through from our environment: what finds git and ssh, and ssh's agent.
_KEPT_VARIABLES = ("PATH", "HOME", "SYSTEMROOT", "TMPDIR", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND")
_PROVIDER_TOKENS = (
    ("github", "GITHUB_TOKEN"),
    ("gitlab", "GITLAB_TOKEN"),
    ("bitbucket", "BITBUCKET_TOKEN"),
)
# The user name a token goes with in Basic authentication, per provider.
_TOKEN_USERS = (("bitbucket", "x-token-auth"), ("gitlab", "oauth2"))


class GitError(RuntimeError):
    """A Git call that failed; its message never holds a token."""


class GitMissing(GitError):
    """No ``git`` executable on PATH."""


MISSING_GIT = (
    "workflow repositories are read with the `git` executable, which is not on PATH: install Git "
    "(apt install git, dnf install git, brew install git, or https://git-scm.com/downloads), or "
    "remove the workflow-repos sources"
)


def token_for(url: str, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(variable name, token) for ``url`` from the environment, in this order:
    ``WORKRAIL_GIT_TOKEN``, ``GIT_<HOST>_TOKEN`` (the host upper-cased, other characters as
    ``_``), the provider's (``GITHUB_TOKEN``, ``GITLAB_TOKEN``, ``BITBUCKET_TOKEN``), ``GIT_TOKEN``,
    ``WORKFLOW_GIT_AUTH_TOKEN``. Only http(s) URLs take one (ssh uses its keys)."""
    if scheme_of(url) not in ("https", "http"):
        return None
    env = os.environ if environ is None else environ
    host = host_of(url)
    names = ["WORKRAIL_GIT_TOKEN", f"GIT_{re.sub(r'[^A-Z0-9]', '_', host.upper())}_TOKEN"]
    names += [name for provider, name in _PROVIDER_TOKENS if provider in host]
    names += ["GIT_TOKEN", "WORKFLOW_GIT_AUTH_TOKEN"]
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return name, value
    return None


def _authorization(url: str, token: str) -> str:
    host = host_of(url)
    user = next((u for provider, u in _TOKEN_USERS if provider in host), "x-access-token")
    return "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode("ascii")


def _header_scope(url: str) -> str:
    """``scheme://host[:port]/``: the ``http.<url>.*`` key that sends the header there only."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rsplit('@', 1)[-1]}/"


@dataclass
class Git:
    """Git calls for one repository URL (its token, if any, looked up once)."""

    url: str
    environ: Mapping[str, str] | None = None
    timeout: float = GIT_TIMEOUT_SECONDS
    _secrets: list[str] = field(default_factory=list)
    _env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        source = os.environ if self.environ is None else self.environ
        env = {name: source[name] for name in _KEPT_VARIABLES if name in source}
        env.update(
            LC_ALL="C",
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_LFS_SKIP_SMUDGE="1",
            GIT_ASKPASS="",
            SSH_ASKPASS="",
        )
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        found = token_for(self.url, source)
        if found is not None:
            token = found[1]
            header = _authorization(self.url, token)
            env.update(
                GIT_CONFIG_COUNT="1",
                GIT_CONFIG_KEY_0=f"http.{_header_scope(self.url)}.extraHeader",
                GIT_CONFIG_VALUE_0=f"Authorization: {header}",
            )
            self._secrets = [token, header.split(" ", 1)[1]]
        self._env = env

    @property
    def has_token(self) -> bool:
        return bool(self._secrets)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def run(
        self, args: Sequence[str], *, git_dir: str | None = None, stdin: bytes | None = None
    ) -> bytes:
        """``git [hardening] [--git-dir] ARGS``'s standard output; GitError on failure."""
        argv = _argv(args, git_dir)
        try:
            process = subprocess.Popen(
                argv,
                env=self._env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # one group: a time-out kills git-remote-https and ssh too
            )
        except FileNotFoundError:
            raise GitMissing(MISSING_GIT) from None
        try:
            out, err = process.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise GitError(
                f"git {args[0]} of {self.url} took more than {self.timeout:g} s "
                "(GIT_TIMEOUT_SECONDS): stopped"
            ) from None
        if process.returncode != 0:
            detail = self.redact(err.decode("utf-8", "replace")).strip()[-MAX_GIT_ERROR_CHARS:]
            raise GitError(f"git {args[0]} of {self.url} failed: {detail or 'no message'}")
        return out

    def popen(self, args: Sequence[str], *, git_dir: str) -> subprocess.Popen[bytes]:
        """A long-lived call (``cat-file --batch``) with the same hardening and environment."""
        argv = _argv(args, git_dir)
        try:
            return subprocess.Popen(
                argv,
                env=self._env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise GitMissing(MISSING_GIT) from None


def _argv(args: Sequence[str], git_dir: str | None) -> list[str]:
    argv = ["git"]
    for option in HARDENING:
        argv += ["-c", option]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    return argv + list(args)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        process.kill()
    process.communicate()
