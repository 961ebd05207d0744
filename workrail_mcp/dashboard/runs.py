"""The runs page: newest first, paginated, filtered by status and workflow, kept live by polling
a fragment endpoint that answers 204 while nothing changed."""

from __future__ import annotations

import hashlib
import math
from typing import Any
from urllib.parse import urlencode

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from workrail_engine.runs import RUN_STATUSES

__all__ = ["runs_fragment", "runs_page"]

PAGE_SIZE = 50
MAX_PAGE = 1_000_000  # 50 million runs; a larger ?page= is clamped (its offset overflowed SQL)


def _filters(request: Request) -> dict[str, Any]:
    params = request.query_params
    status = params.get("status", "")
    try:
        page = min(max(int(params.get("page", "1")), 1), MAX_PAGE)
    except ValueError:  # not a number (or more digits than Python converts)
        page = 1
    return {
        "status": status if status in RUN_STATUSES else "",
        "workflow": params.get("workflow", "")[:200],
        "page": page,
    }


def _query(filters: dict[str, Any], **change: Any) -> str:
    values = {**filters, **change}
    return urlencode({k: v for k, v in values.items() if v and not (k == "page" and v == 1)})


def _table(request: Request, filters: dict[str, Any]) -> str:
    state = request.app.state
    found = state.history.page(
        status=filters["status"] or None,
        workflow=filters["workflow"] or None,
        offset=(filters["page"] - 1) * PAGE_SIZE,
        limit=PAGE_SIZE,
    )
    pages = max(math.ceil(found.total / PAGE_SIZE), 1)
    return state.pages.html(
        "_runs_table.html",
        runs=found.rows,
        total=found.total,
        page=filters["page"],
        pages=pages,
        previous=_query(filters, page=filters["page"] - 1) if filters["page"] > 1 else None,
        next=_query(filters, page=filters["page"] + 1) if filters["page"] < pages else None,
    )


async def runs_page(request: Request) -> Response:
    state = request.app.state
    filters = _filters(request)
    table, workflows = await anyio.to_thread.run_sync(
        lambda: (_table(request, filters), _workflow_choices(state))
    )
    return state.pages.page(
        request,
        "runs.html",
        nav="runs",
        table=state.pages.markup(table),
        version=_version(table),
        live_url="/live/runs?" + _query(filters),
        statuses=RUN_STATUSES,
        workflows=workflows,
        **filters,
    )


def _workflow_choices(state: Any) -> list[str]:
    """The catalog's workflows and those of the runs seen so far (a run of a file path shows up
    once a page lists it; ``?workflow=ID`` filters by any id)."""
    return sorted(set(state.catalog.ids()) | set(state.history.workflow_ids()))


def _version(html: str) -> str:
    return hashlib.sha256(html.encode()).hexdigest()[:16]


async def runs_fragment(request: Request) -> Response:
    """The table alone; 204 when it is what the page already shows (``v``)."""
    filters = _filters(request)
    table = await anyio.to_thread.run_sync(_table, request, filters)
    version = _version(table)
    if request.query_params.get("v") == version:
        return Response(status_code=204, headers={"x-version": version})
    return HTMLResponse(table, headers={"x-version": version})
