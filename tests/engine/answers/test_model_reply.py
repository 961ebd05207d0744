"""A model's reply split into notes and the context block its step asks for (`model_reply`)."""

from __future__ import annotations

import pytest

from workrail_engine.answers.model_reply import ModelReply, context_instruction, read_reply

WORKFLOW = {
    "context": {
        "size": {"type": "string", "enum": ["small", "large"]},
        "risky": {"type": "boolean", "default": False},
    }
}
SIZES = {"id": "triage", "sets": ["size", "risky", "undeclared"]}
PLAIN = {"id": "write"}
BLOCK = "Sized.\n\n```context\n{body}\n```"


@pytest.mark.parametrize(
    ("step", "text", "expected"),
    [
        pytest.param(
            SIZES, BLOCK.format(body='{"size": "large"}'), ModelReply("Sized.", {"size": "large"}),
            id="notes-and-context",
        ),
        pytest.param(
            SIZES, BLOCK.format(body='{"size": "small", "risky": true}') + "\n  \n",
            ModelReply("Sized.", {"size": "small", "risky": True}),
            id="white-space-after-the-block",
        ),
        pytest.param(SIZES, "Sized, no block.", ModelReply("Sized, no block."), id="no-block"),
        pytest.param(
            SIZES, BLOCK.format(body='{"size": "large"}') + "\nand more",
            ModelReply(BLOCK.format(body='{"size": "large"}') + "\nand more"),
            id="text-after-the-block-is-notes",
        ),
        pytest.param(
            SIZES, "Sized.\n```contextual\n{}\n```", ModelReply("Sized.\n```contextual\n{}\n```"),
            id="another-info-string",
        ),
        pytest.param(
            SIZES, BLOCK.format(body='{"size": "large", "approved": true}'),
            ModelReply("Sized.", problems=["this step sets only size, risky; leave out approved"]),
            id="a-variable-the-step-does-not-set",
        ),
        pytest.param(
            SIZES, BLOCK.format(body='["large"]'),
            ModelReply("Sized.", problems=["the ```context block must hold one JSON object"]),
            id="not-an-object",
        ),
        pytest.param(
            PLAIN, BLOCK.format(body='{"size": "large"}'),
            ModelReply(BLOCK.format(body='{"size": "large"}')),
            id="a-step-that-sets-nothing-takes-it-all-as-notes",
        ),
    ],
)  # fmt: skip
def test_read_reply(step, text, expected):
    assert read_reply(WORKFLOW, step, text) == expected


def test_a_block_that_is_no_json_or_nested_too_deep_is_sent_back_not_raised():
    for body in ("{size: large}", "[" * 100_000):
        reply = read_reply(WORKFLOW, SIZES, BLOCK.format(body=body))
        assert reply.context == {} and reply.problems[0].startswith(
            "the ```context block is not JSON"
        )


def test_the_request_asks_for_the_declared_variables_alone():
    asked = context_instruction(WORKFLOW, SIZES)
    assert "(size, risky)" in asked and asked.endswith(
        '```context\n{"size": "…", "risky": "…"}\n```'
    )
    assert context_instruction(WORKFLOW, PLAIN) == ""
