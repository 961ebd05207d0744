"""Which repository URLs are accepted, and how the environment (WorkRail's and upstream's
variables) and a configuration file declare repositories."""

from __future__ import annotations

import pytest

from workrail_engine.sources.declared import (
    DeclarationError,
    environment_sources,
    parse_repo_entries,
)
from workrail_engine.sources.git import Git, token_for
from workrail_engine.sources.urls import UrlRefused, cache_name, check_url


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/flows.git",
        "ssh://git@github.com/acme/flows.git",
        "git@github.com:acme/flows.git",
        "git://example.org/flows.git",
        "file:///srv/git/flows.git",
        "http://127.0.0.1:8080/flows.git",
    ],
)
def test_the_allowed_transports(url: str) -> None:
    assert check_url(url, "here") == url


@pytest.mark.parametrize(
    "url, why",
    [
        ("ext::sh -c touch% /tmp/x", "transport helper"),
        ("fd::3", "transport helper"),
        ("http://example.org/flows.git", "loopback"),
        ("ftp://example.org/flows.git", "'ftp'"),
        ("https://user:secret@example.org/flows.git", "put the token in the environment"),
        ("/srv/git/flows.git", "file:///"),
        ("--upload-pack=touch /tmp/x", "starts with '-'"),
    ],
)
def test_the_refused_urls_say_why(url: str, why: str) -> None:
    with pytest.raises(UrlRefused) as refused:
        check_url(url, "config.toml")
    assert why in str(refused.value) and "config.toml" in str(refused.value)
    assert "secret" not in str(refused.value)


def test_upstreams_variables_are_read() -> None:
    found = environment_sources(
        {
            "WORKFLOW_GIT_REPOS": '[{"repositoryUrl": "https://a.example/x.git", "branch": "dev", "syncInterval": 5}]',
            "WORKFLOW_GIT_REPO_URL": "https://b.example/y.git",
            "WORKFLOW_GIT_REPO_BRANCH": "main",
            "WORKFLOW_GIT_SYNC_INTERVAL": "2",
            "WORKRAIL_WORKFLOW_REPOS": "https://c.example/z.git#v1, git@d.example:w.git",
        }
    )
    assert [(s.url, s.rev, s.sync_interval, s.name) for s in found] == [
        ("https://c.example/z.git", "v1", None, "z"),
        ("git@d.example:w.git", None, None, "w"),
        ("https://a.example/x.git", "dev", 300.0, "x"),
        ("https://b.example/y.git", "main", 120.0, "y"),
    ]


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"url": "https://a.example/x.git", "rev": "--all"}, "'rev'"),
        ({"url": "https://a.example/x.git", "path": "../outside"}, "'path'"),
        ({"url": "https://a.example/x.git", "branch": "main"}, "unknown key 'branch'"),
        ({"rev": "main"}, "needs a 'url'"),
    ],
)
def test_a_bad_entry_is_named(entry: dict[str, str], message: str) -> None:
    with pytest.raises((DeclarationError, UrlRefused)) as refused:
        parse_repo_entries([entry], "pyproject.toml")
    assert message in str(refused.value) and "pyproject.toml" in str(refused.value)


def test_the_token_goes_by_host_and_never_into_an_argument() -> None:
    env = {"GITHUB_TOKEN": "gh-secret", "GIT_GIT_ACME_COM_TOKEN": "acme-secret", "GIT_TOKEN": "any"}
    assert token_for("https://github.com/a/b.git", env) == ("GITHUB_TOKEN", "gh-secret")
    assert token_for("https://git.acme.com/a/b.git", env) == (
        "GIT_GIT_ACME_COM_TOKEN",
        "acme-secret",
    )
    assert token_for("https://gitlab.com/a/b.git", env) == ("GIT_TOKEN", "any")
    assert token_for("git@github.com:a/b.git", env) is None  # ssh uses its keys
    git = Git("https://github.com/a/b.git", env)
    assert git._env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraHeader"
    assert git.redact("fatal: gh-secret rejected") == "fatal: *** rejected"


def test_cache_names_are_stable_and_distinct() -> None:
    one = cache_name("https://github.com/acme/flows.git")
    assert one == cache_name("https://github.com/acme/flows.git")
    assert one != cache_name("https://gitlab.com/acme/flows.git")
    assert one.startswith("github.com-acme-flows.git-") and "/" not in one
