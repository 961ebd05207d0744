"""Shared results are serialized once: the spliced response is the same JSON the SDK would write."""

from __future__ import annotations

import json
import os
import threading

import anyio
import mcp_types
import pytest

from tests.mcp.conftest import write_workflow
from tests.mcp.messages import INITIALIZE, INITIALIZED
from workrail_engine.catalog import Catalog, Source
from workrail_mcp import create_server
from workrail_mcp.known_json import KnownJson
from workrail_mcp.stdio import serve_stdio

LISTING = {"workflows": [{"id": f"flow-{n:03d}", "name": f"Flow {n} — é"} for n in range(50)]}


def sdk_line(request_id, result) -> dict:
    message = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    return json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))


def enabled() -> KnownJson:
    known = KnownJson()
    known.enabled = True
    return known


def test_a_copy_of_a_known_result_is_written_from_its_json():
    known = enabled()
    known.remember(LISTING, lambda: json.dumps(LISTING, ensure_ascii=False))
    copied = mcp_types.JSONRPCResponse(
        jsonrpc="2.0", id=7, result=LISTING
    ).result  # the SDK copies the dict
    assert copied is not LISTING
    line = known.response_line(7, copied)
    assert line is not None and b"\n" not in line
    assert json.loads(line) == sdk_line(7, LISTING)


def test_a_tools_call_answer_with_known_parts():
    known = enabled()
    text = json.dumps(LISTING, ensure_ascii=False)
    known.remember(LISTING, lambda: text)
    known.remember(text, lambda: json.dumps(text, ensure_ascii=False))
    wire = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": LISTING,
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "workflowlookup"}},
    }
    assert json.loads(known.response_line("req-1", wire)) == sdk_line("req-1", wire)


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(
            {"workflows": [dict(w) for w in LISTING["workflows"]]}, id="equal-but-other-objects"
        ),
        pytest.param({"workflows": LISTING["workflows"], "extra": 1}, id="other-keys"),
        pytest.param({}, id="empty"),
    ],
)
def test_anything_not_known_is_left_to_the_sdk(result):
    known = enabled()
    known.remember(LISTING, lambda: json.dumps(LISTING))
    assert known.response_line(1, result) is None


def test_nothing_is_kept_unless_enabled():
    known = KnownJson()
    known.remember(LISTING, lambda: pytest.fail("computed while disabled"))
    assert known.response_line(1, LISTING) is None


def test_old_entries_are_dropped():
    known = enabled()
    values = [{"n": [n]} for n in range(known.capacity + 3)]
    for value in values:
        known.remember(value, lambda value=value: json.dumps(value))
    assert known.response_line(1, values[0]) is None
    assert json.loads(known.response_line(1, values[-1]))["result"] == values[-1]


async def test_stdio_answers_a_repeated_listing_without_serializing_it_again(tmp_path, monkeypatch):
    """The real stdio transport, in process: repeated answers are equal, and the SDK serializer
    is not used for them after the first (the answer of a shared catalog view)."""
    for n in range(300):
        write_workflow(
            tmp_path / "wf",
            {
                "id": f"flow-{n:03d}",
                "name": f"Flow {n}",
                "description": "d",
                "steps": [{"id": "only-step", "title": "Only", "prompt": "Do it."}],
            },
        )
    server = create_server(Catalog([Source("project", tmp_path / "wf")], rescan_interval=3600))
    dumped: list[dict] = []
    original = mcp_types.JSONRPCResponse.model_dump_json

    def spy(self, **kwargs):
        dumped.append(self.result)
        return original(self, **kwargs)

    monkeypatch.setattr(mcp_types.JSONRPCResponse, "model_dump_json", spy)
    requests = [
        {**INITIALIZE, "id": 0},
        INITIALIZED,
    ]
    for n in range(1, 7):
        call = {"name": "workflow_list", "arguments": {}}
        requests.append(
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}
            if n % 2
            else {"jsonrpc": "2.0", "id": n, "method": "workflow_list", "params": {}}
        )
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    answers: dict = {}

    def client() -> None:  # one request at a time, as an agent waits for each answer
        with (
            os.fdopen(in_write, "wb", buffering=0) as to_server,
            os.fdopen(out_read, "rb") as from_server,
        ):
            for request in requests:
                to_server.write(json.dumps(request).encode() + b"\n")
                if "id" in request:
                    answer = json.loads(from_server.readline())
                    answers[answer["id"]] = answer["result"]

    talking = threading.Thread(target=client)
    talking.start()
    with (
        os.fdopen(in_read, "rb", buffering=0) as stdin,
        os.fdopen(out_write, "wb", buffering=0) as stdout,
    ):
        assert await serve_stdio(server, stdin=stdin, stdout=stdout) == 0
    await anyio.to_thread.run_sync(talking.join)
    tools_call, direct = [answers[n] for n in (1, 3, 5)], [answers[n] for n in (2, 4, 6)]
    assert len(direct[0]["workflows"]) == 300
    assert all(answer == tools_call[0] for answer in tools_call)
    assert all(answer == direct[0] for answer in direct)
    assert (
        json.loads(tools_call[0]["content"][0]["text"])
        == tools_call[0]["structuredContent"]
        == direct[0]
    )
    listings = [
        r for r in dumped if isinstance(r, dict) and ("workflows" in r or "structuredContent" in r)
    ]
    assert len(listings) <= 2, f"{len(listings)} listings went through the SDK serializer"
