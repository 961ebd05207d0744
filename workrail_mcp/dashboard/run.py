"""One run's page: a Gantt timeline of its steps and attempts, each step's status, duration, output
and stderr tail, skipped steps with their condition, the guidance a waiting step gives; where it
was forked from and its forks; kept live by polling, a cancel button while it is in flight, and
"Run again from here" on each step it recorded (`RunService.fork`)."""

from __future__ import annotations

import hashlib
import time
from typing import Any
from urllib.parse import quote, urlencode

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from workrail_engine.errors import (
    EngineError,
    InvalidParams,
    InvalidRunState,
    RunNotFound,
    SecurityViolation,
    StorageError,
)
from workrail_engine.runs import ACTIVE
from workrail_engine.runs.fork import lineage_links
from workrail_engine.runs.run_status import IN_FLIGHT

__all__ = ["cancel_run", "fork_run", "run_fragment", "run_page", "timeline"]

SCALE = 1000.0  # the timeline's width in SVG user units (the SVG stretches to the page)
# A step in these has no result to keep yet, so a run cannot be forked from it
UNRECORDED = ("pending", "running")


def timeline(view: dict[str, Any]) -> dict[str, Any]:
    """Bars for every attempt, placed on one time axis from the run's start to its end (or now).

    A step's attempts sit on its own row, one bar each (a retry is a second bar, a failed
    attempt is marked failed); the members of a parallel group are consecutive rows under the
    group's name, so their bars stack and overlap in time as they ran. A fork's kept steps ran
    in its parent, before the fork started: the axis starts at the first of them, their bars
    are marked kept, and ``fork_x`` places the fork's own start on it.
    """
    starts = [a["start"] for s in view["steps"] for a in s["attempts"] if a.get("start")]
    start = min([view["started_at"], *starts])
    ends = [a["end"] for s in view["steps"] for a in s["attempts"] if a.get("end") is not None]
    # To the last attempt's end: a run that waited for the agent for an hour still shows its
    # command steps at a readable scale.
    end = max(ends) if ends else (view["ended_at"] or time.time())
    span = max(end - start, 1e-3)
    rows = []
    previous_group = None
    for step in view["steps"]:
        bars = []
        for attempt in step["attempts"]:
            if attempt.get("start") is None:
                continue
            x = max((attempt["start"] - start) / span * SCALE, 0.0)
            width = max((attempt["end"] - attempt["start"]) / span * SCALE, 2.0)
            label = f"attempt {attempt['attempt']}: {attempt['status']}"
            bars.append(
                {
                    "x": round(min(x, SCALE - 2), 1),
                    "width": round(min(width, SCALE - x), 1),
                    "status": attempt["status"],
                    "label": label + (", kept from the parent run" if step.get("kept") else ""),
                }
            )
        rows.append(
            {
                **step,
                "bars": bars,
                "group_start": step["group"] is not None and step["group"] != previous_group,
                "forkable": step["status"] not in UNRECORDED,
            }
        )
        previous_group = step["group"]
    forked = view.get("forked_from") is not None
    fork_x = round(min((view["started_at"] - start) / span, 1.0) * SCALE, 1) if forked else None
    return {"rows": rows, "span": span, "fork_x": fork_x}


TICK = 5.0  # seconds: how often an unchanged run in flight is drawn again (its duration grows)


def _marker(request: Request, run_id: str) -> str:
    """Changes when the run does (a cheap read of its status, state and journal counts), and
    every `TICK` seconds while it is in flight."""
    found = request.app.state.history.version(run_id)
    status = found[0][0] if found[0] else None
    tick = int(time.time() // TICK) if status in IN_FLIGHT else 0
    return hashlib.sha256(repr((found, tick)).encode()).hexdigest()[:16]


def _fragment(request: Request, run_id: str) -> tuple[str, dict[str, Any]] | None:
    state = request.app.state
    view = state.history.run(run_id)
    if view is None:
        return None
    view["duration"] = round(view["duration"]) if view["status"] in ACTIVE else view["duration"]
    view["lineage"] = lineage_links(view)
    html = state.pages.html(
        "_run_body.html",
        run=view,
        timeline=timeline(view),
        final=view["status"] not in ACTIVE,
        # a session forks by its tokens (docs/sessions.md), not from here
        can_fork=state.access.allow_commands and not view.get("session"),
        csrf=state.access.csrf_token(request),
    )
    return html, view


async def run_page(request: Request) -> Response:
    state = request.app.state
    run_id = request.path_params["run_id"]
    found = await anyio.to_thread.run_sync(_fragment, request, run_id)
    if found is None:
        return state.pages.page(request, "missing.html", code=404, nav="runs", what=f"run {run_id}")
    html, view = found
    return state.pages.page(
        request,
        "run.html",
        nav="runs",
        run=view,
        body=state.pages.markup(html),
        version=await anyio.to_thread.run_sync(_marker, request, run_id),
        live_url=f"/live/runs/{run_id}",
        active=view["status"] in ACTIVE,
        notice=state.access.issued_notice(
            f"/runs/{run_id}", request.query_params.get("notice"), request.query_params.get("n")
        )[:200],
    )


async def run_fragment(request: Request) -> Response:
    """The run's body, unless the page's ``v`` is still current (204): a poll of a run that has
    not changed reads two small rows, not its steps' outputs."""
    run_id = request.path_params["run_id"]

    def answer() -> Response:
        version = _marker(request, run_id)
        if request.query_params.get("v") == version:
            return Response(status_code=204, headers={"x-version": version})
        found = _fragment(request, run_id)
        if found is None:
            return Response("no such run", status_code=404)
        return HTMLResponse(found[0], headers={"x-version": version})

    return await anyio.to_thread.run_sync(answer)


async def cancel_run(request: Request) -> Response:
    state = request.app.state
    run_id = request.path_params["run_id"]
    _, refused = await state.access.checked_form(request)
    if refused is not None:
        return refused
    try:
        result = await anyio.to_thread.run_sync(
            state.service.cancel, run_id, "cancelled from the dashboard"
        )
        notice = result.get("message") or "cancelled"
    except EngineError as error:
        notice = error.message
    page = f"/runs/{run_id}"
    query = urlencode({"notice": notice, "n": state.access.notice_mark(page, notice)})
    return RedirectResponse(f"{quote(page)}?{query}", status_code=303)


# The answer to a fork the run store refuses; anything else it refuses is the request's fault (an
# unknown step, a session's id).
_REFUSAL_STATUS: dict[type[EngineError], int] = {
    RunNotFound: 404,
    SecurityViolation: 403,
    InvalidRunState: 409,
    StorageError: 503,
}


async def fork_run(request: Request) -> Response:
    """ "Run again from here": a new run that keeps what this one recorded before the form's
    ``step`` and runs from it on (`RunService.fork`); its page, or a page saying why not."""
    state = request.app.state
    run_id = request.path_params["run_id"]
    form, refused = await state.access.checked_form(request, starts_run=True)
    if refused is not None:
        return refused
    step = form.get("step")
    try:
        if not isinstance(step, str) or not step:
            raise InvalidParams("say which step to run again from (the form's step field)")
        fork_id = await anyio.to_thread.run_sync(state.service.fork, run_id, step)
    except EngineError as error:
        return state.pages.page(
            request,
            "refused.html",
            code=_REFUSAL_STATUS.get(type(error), 400),
            nav="runs",
            problem=error.message,
            back=quote(f"/runs/{run_id}"),
        )
    return RedirectResponse(f"/runs/{quote(fork_id)}", status_code=303)
