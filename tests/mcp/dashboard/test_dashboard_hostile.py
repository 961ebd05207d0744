"""Hostile visitors of the real dashboard (`workrail dashboard`): huge bodies, a flood of
sign-in guesses, cookies that outlive a sign-out or a restart, forged notices, absurd page
numbers, parameters nested past the limit, and a catalog of files with thousands of errors."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.mcp.dashboard.conftest import APPENDS, cli_run, env_for, served, workrail
from workrail_engine.limits import MAX_FINDINGS_PER_FILE
from workrail_engine.runs.history import RunHistory
from workrail_mcp.dashboard.app import MAX_FORM_BYTES
from workrail_mcp.dashboard.invalid_files import MAX_FILES_SHOWN, MAX_PROBLEMS_SHOWN
from workrail_mcp.dashboard.security import SIGNIN_FAILURES

pytestmark = pytest.mark.slow

TOKEN = "hostile-dashboard-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

NESTED = {
    "id": "nested-params",
    "name": "Nested parameters",
    "description": "A parameter that takes any JSON",
    "version": "1.0.0",
    "parameters": {"type": "object", "properties": {"blob": {"description": "any JSON"}}},
    "steps": [{"id": "say", "title": "Say", "run": {"command": ["echo", "hi"]}}],
}
QUICK = {
    "id": "quick",
    "name": "Quick",
    "description": "One command",
    "version": "1.0.0",
    "steps": [{"id": "one", "title": "One", "run": {"command": ["echo", "one"]}}],
}
ERRORS_IN_ONE_FILE = 3000


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile-dash")
    flows = root / "workflows"
    flows.mkdir()
    for flow in (NESTED, QUICK, APPENDS):
        (flows / f"{flow['id']}.json").write_text(json.dumps(flow))
    # one file with thousands of errors (steps without title or prompt), one sparse 1 GiB file,
    # and more invalid files than a page lists
    many = {"id": "many-errors", "name": "Many", "steps": [{"id": 5}] * ERRORS_IN_ONE_FILE}
    (flows / "many-errors.json").write_text(json.dumps(many, indent=1))
    with open(flows / "huge.json", "wb") as sparse:
        sparse.truncate(1 << 30)
    for n in range(MAX_FILES_SHOWN + 5):
        (flows / f"zz-broken-{n:03}.json").write_text("{not json")
    return root


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile-home")


def _locked_dashboard(hostile_project: Path, hostile_home: Path, *options: str):
    return served(
        workrail("dashboard", "--port", "0", *options),
        hostile_project,
        env_for(hostile_home, WORKRAIL_HTTP_TOKEN=TOKEN),
        r"listening on (http://\S+/)",
    )


@pytest.fixture
def locked(hostile_project, hostile_home):
    """A dashboard with a token, started afresh for the test (sign-in failures are counted per
    process: a test that locks an address out has a process of its own)."""
    with _locked_dashboard(hostile_project, hostile_home) as url:
        yield url


@pytest.fixture(scope="module")
def kept_locked(hostile_project, hostile_home):
    """The same dashboard kept for the tests that sign in with the bearer header (or fail at
    most once by the form): none can lock another out, and each start costs ~1.5 s of CPU."""
    with _locked_dashboard(hostile_project, hostile_home) as url:
        yield url


@pytest.fixture(scope="module")
def locked_running_commands(hostile_project, hostile_home):
    """A dashboard with a token that may start runs (``--allow-commands``)."""
    with _locked_dashboard(hostile_project, hostile_home, "--allow-commands") as url:
        yield url


def client_from(address: str, base: str, **options) -> httpx2.Client:
    return httpx2.Client(
        base_url=base,
        transport=httpx2.HTTPTransport(local_address=address),
        timeout=30,
        follow_redirects=False,
        **options,
    )


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)


def test_bodies_past_the_cap_are_refused_before_parsing(kept_locked):
    """`POST /signin` parsed any body before any check (four 900 MB posts: 4 GB)."""
    big = b"token=" + b"a" * (MAX_FORM_BYTES + 1)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with client_from("127.0.0.1", kept_locked) as client:
        assert client.post("/signin", content=big, headers=form).status_code == 413
        assert client.post("/signout", content=big, headers=form).status_code == 413

        def chunks():
            for _ in range(4):
                yield b"a" * (MAX_FORM_BYTES // 2)

        # no Content-Length (chunked): refused once it passes the cap
        assert client.post("/signin", content=chunks(), headers=form).status_code == 413
        signed = client.post("/workflows/quick/dry-run", content=big, headers={**form, **AUTH})
        assert signed.status_code == 413
        # within the cap, the form is still read (a wrong token: 401, the sign-in page)
        assert client.post("/signin", data={"token": "nope"}).status_code == 401
    # a 900 MB Content-Length is refused at once, before a byte of the body is sent
    host, _, port = urlsplit(kept_locked).netloc.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(
            f"POST /signin HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: 900000000\r\n\r\n".encode()
        )
        assert raw.recv(4096).startswith(b"HTTP/1.1 413")


def test_sign_in_guesses_are_limited_per_address(locked):
    """Parallel guesses all waited the same 0.5 s (326 guesses/s); now an address gets
    SIGNIN_FAILURES wrong tries a minute, then 429 even for the right token."""

    def guess(n: int) -> int:
        with client_from("127.0.0.1", locked) as client:
            return client.post("/signin", data={"token": f"guess-{n}"}).status_code

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(guess, range(SIGNIN_FAILURES + 10)))
    # checked and counted together: parallel guesses cannot slip past the count
    assert answers.count(401) == SIGNIN_FAILURES and answers.count(429) == 10, answers
    with client_from("127.0.0.1", locked) as client:
        locked_out = client.post("/signin", data={"token": TOKEN})
        assert locked_out.status_code == 429 and "retry-after" in locked_out.headers
        assert "workrail_session" not in locked_out.cookies
    with client_from("127.0.0.2", locked) as other:  # another address is not locked out
        assert other.post("/signin", data={"token": TOKEN}).status_code == 303


def signed_in_cookie(base: str) -> str:
    with client_from("127.0.0.1", base) as client:
        answer = client.post("/signin", data={"token": TOKEN, "next": "/runs"})
        assert answer.status_code == 303
        return answer.cookies["workrail_session"]


def with_cookie(base: str, cookie: str, path: str = "/runs") -> int:
    with client_from("127.0.0.1", base, cookies={"workrail_session": cookie}) as client:
        return client.get(path).status_code


def test_the_session_cookie_is_revoked_by_signing_out_and_by_a_restart(
    hostile_project, hostile_home
):
    env = env_for(hostile_home, WORKRAIL_HTTP_TOKEN=TOKEN)
    with served(
        workrail("dashboard", "--port", "0"), hostile_project, env, r"listening on (http://\S+/)"
    ) as base:
        first, second = signed_in_cookie(base), signed_in_cookie(base)
        assert first != second  # a new value per sign-in, not HMAC(token, constant)
        assert TOKEN not in first
        assert with_cookie(base, first) == 200 and with_cookie(base, second) == 200
        with client_from("127.0.0.1", base, cookies={"workrail_session": first}) as client:
            csrf = csrf_of(client.get("/runs").text)
            assert client.post("/signout", data={"csrf": csrf}).status_code == 303
        assert with_cookie(base, first) == 401  # signed out: that value is dead
        assert with_cookie(base, second) == 200  # another sign-in is not
    with served(
        workrail("dashboard", "--port", "0"), hostile_project, env, r"listening on (http://\S+/)"
    ) as restarted:
        assert with_cookie(restarted, second) == 401  # a restart signs everyone out


def test_only_notices_the_server_issued_are_shown(hostile_project, hostile_home, kept_locked):
    run_id = cli_run(hostile_project, hostile_home, "quick")
    with client_from("127.0.0.1", kept_locked, headers=AUTH) as client:
        forged = client.get(f"/runs/{run_id}", params={"notice": "Your token expired, mail it"})
        assert forged.status_code == 200 and "mail it" not in forged.text
        csrf = csrf_of(forged.text)
        cancelled = client.post(f"/runs/{run_id}/cancel", data={"csrf": csrf})
        assert cancelled.status_code == 303
        issued = client.get(cancelled.headers["location"])
        notice = dict(
            httpx2.QueryParams(urlsplit(cancelled.headers["location"]).query).multi_items()
        )["notice"]
        assert notice and notice in issued.text
        # the same notice moved to another run's page is not shown there
        other = cli_run(hostile_project, hostile_home, "quick")
        moved = client.get(cancelled.headers["location"].replace(run_id, other))
        assert moved.status_code == 200 and notice not in moved.text


def test_page_numbers_are_clamped(kept_locked):
    with client_from("127.0.0.1", kept_locked, headers=AUTH) as client:
        for page in ("9" * 20, "-5", "1e9", "9" * 5000, "0x10"):
            assert client.get("/runs", params={"page": page}).status_code == 200, page
            assert client.get("/live/runs", params={"page": page}).status_code in (200, 204)


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_parameters_nested_past_the_limit_are_refused(kept_locked):
    """The form skipped the 64-level limit: 100 levels were planned (and ran), 900 gave a 500."""
    with client_from("127.0.0.1", kept_locked, headers=AUTH) as client:
        csrf = csrf_of(client.get("/workflows/nested-params").text)
        for levels in (100, 900, 100_000):
            answer = client.post(
                "/workflows/nested-params/dry-run",
                data={"csrf": csrf, "param-blob": nested(levels)},
            )
            assert answer.status_code == 400, (levels, answer.status_code)
            assert "nested deeper than 64 levels" in answer.text
        fine = client.post(
            "/workflows/nested-params/dry-run", data={"csrf": csrf, "param-blob": nested(60)}
        )
        assert fine.status_code == 200 and "nothing was executed" in fine.text


def test_the_invalid_files_list_is_bounded(kept_locked):
    """A file with thousands of errors was re-read once per error (7–9 s and 11 MB of HTML for
    60,000); a 1 GiB sparse file was read whole on every load."""
    with client_from("127.0.0.1", kept_locked, headers=AUTH) as client:
        page = client.get("/workflows")
    assert page.status_code == 200
    html = page.text
    assert len(html) < 200_000, len(html)
    listed = re.findall(r"<li><code>([^<]*):\d+</code> <strong>(WR\d+)</strong>", html)
    many = [code for path, code in listed if path.endswith("many-errors.json")]
    assert len(many) == MAX_PROBLEMS_SHOWN, len(many)
    # The catalog keeps 1,000 findings of a file and one WR009 for the rest (limits.py), so the
    # page shows MAX_PROBLEMS_SHOWN of those and counts what it leaves out of them.
    more = re.search(r"and (\d+) more errors", html)
    assert more and int(more.group(1)) == MAX_FINDINGS_PER_FILE + 1 - MAX_PROBLEMS_SHOWN, more
    total = 2 + MAX_FILES_SHOWN + 5  # many-errors.json, huge.json, the broken ones
    assert f"Invalid files ({total})" in html
    assert html[html.index('id="invalid"') :].count('<span class="source">') == MAX_FILES_SHOWN


def test_pages_past_the_first_of_an_empty_store_are_empty_pages(hostile_project, tmp_path):
    """`/runs?page=2` on a store with no runs yet answered 500: the count of runs read the first
    row of an answer that has none where the store (or its tables) is not there yet."""
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    with (
        served(
            workrail("dashboard", "--port", "0"),
            hostile_project,
            env_for(empty_home, WORKRAIL_HTTP_TOKEN=TOKEN),
            r"listening on (http://\S+/)",
        ) as base,
        client_from("127.0.0.1", base, headers=AUTH) as client,
    ):
        for store in ("no store file", "a store without tables"):
            if store == "a store without tables":
                sqlite3.connect(empty_home / "runs.sqlite").close()
            for page in ("2", "3", "1000000"):
                answer = client.get("/runs", params={"page": page})
                assert answer.status_code == 200, (store, page, answer.text[-2000:])
                assert "No runs yet" in answer.text, (store, page)
                live = client.get("/live/runs", params={"page": page})
                assert live.status_code == 200, (store, page)


def _runs_of(home: Path, workflow: str) -> set[str]:
    return {row.run_id for row in RunHistory(home=home / "runs").page(workflow=workflow).rows}


def test_run_again_from_here_needs_the_sign_in_and_the_csrf_token(
    hostile_project, hostile_home, locked_running_commands, tmp_path
):
    """Forking a run is a state change: refused without the sign-in, without this session's
    CSRF token and from another site, with no run started; with both it starts one."""
    log = tmp_path / "log"
    parent = cli_run(hostile_project, hostile_home, "appends", f"log={log}")
    fork = f"/runs/{parent}/fork"
    before = _runs_of(hostile_home, "appends")
    with client_from("127.0.0.1", locked_running_commands) as stranger:
        assert stranger.post(fork, data={"step": "second", "csrf": "x"}).status_code == 401
    cookie = signed_in_cookie(locked_running_commands)
    with client_from(
        "127.0.0.1", locked_running_commands, cookies={"workrail_session": cookie}
    ) as client:
        csrf = csrf_of(client.get(f"/runs/{parent}").text)
        for data, headers in (
            ({"step": "second"}, {}),
            ({"step": "second", "csrf": "0" * 64}, {}),
            ({"step": "second", "csrf": csrf}, {"Sec-Fetch-Site": "cross-site"}),
        ):
            refused = client.post(fork, data=data, headers=headers)
            assert refused.status_code == 403, (data, headers, refused.status_code)
        assert _runs_of(hostile_home, "appends") == before
        started = client.post(fork, data={"step": "second", "csrf": csrf})
        assert started.status_code == 303, started.text[-2000:]
        new_run = started.headers["location"].rsplit("/", 1)[1]
    assert _runs_of(hostile_home, "appends") == before | {new_run}


def test_run_again_from_here_refusals_are_pages_with_the_reason(
    hostile_project, hostile_home, locked_running_commands, kept_locked, tmp_path
):
    parent = cli_run(hostile_project, hostile_home, "appends", f"log={tmp_path / 'log'}")
    before = _runs_of(hostile_home, "appends")
    with client_from("127.0.0.1", locked_running_commands, headers=AUTH) as client:
        csrf = csrf_of(client.get(f"/runs/{parent}").text)
        unknown_step = client.post(f"/runs/{parent}/fork", data={"step": "fourth", "csrf": csrf})
        assert unknown_step.status_code == 400
        assert "no step &#39;fourth&#39;" in unknown_step.text
        assert "first, second, third" in unknown_step.text  # the steps to choose from
        assert f'href="/runs/{parent}"' in unknown_step.text
        no_step = client.post(f"/runs/{parent}/fork", data={"csrf": csrf})
        assert no_step.status_code == 400 and "which step" in no_step.text
        unknown_run = client.post("/runs/wf-000000000000/fork", data={"step": "x", "csrf": csrf})
        assert unknown_run.status_code == 404 and "wf-000000000000" in unknown_run.text
    # a server without --allow-commands starts no run, forked or not
    with client_from("127.0.0.1", kept_locked, headers=AUTH) as client:
        csrf = csrf_of(client.get(f"/runs/{parent}").text)
        refused = client.post(f"/runs/{parent}/fork", data={"step": "second", "csrf": csrf})
        assert refused.status_code == 403
        assert "needs a server started with --allow-commands" in refused.text
        assert "Run again from here" not in client.get(f"/runs/{parent}").text
    assert _runs_of(hostile_home, "appends") == before
