"""A workflow's steps as an SVG diagram, laid out here on the server (no script, nothing fetched).

Top to bottom: steps in sequence joined by arrows, the condition of a conditional step written in
words on the arrow into it; a parallel group as a frame with its members side by side; a loop as
a frame with its body inside, its kind, condition and bound in the header and an arrow back up.
Agent (prompt) steps and command steps have different shapes and classes. Every step is a link
to its entry in the side panel (``#step-<id>``), so the diagram is keyboard-navigable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from workrail_engine.definition.steps import step_kind
from workrail_engine.errors import InvalidWorkflow
from workrail_engine.evaluation.conditions import describe
from workrail_engine.serving.loop_rules import LoopRules

__all__ = ["condition_words", "loop_words", "workflow_svg"]

WIDTH = 640
BOX = 54  # height of a step
EDGE = 44  # vertical room for an arrow and its label
HEADER = 26  # a frame's title line
PAD = 10
CHAR = 6.6  # average width of a 12 px character, for cutting labels to fit


def condition_words(condition: Any) -> str | None:
    if not isinstance(condition, Mapping):
        return None
    try:
        return describe(condition)
    except (ValueError, KeyError, TypeError, StopIteration):
        return "a condition that is not valid"


def loop_words(step: Mapping[str, Any]) -> str:
    """A loop's kind, what it repeats on and its bound, as the engine reads them."""
    spec = step.get("loop") if isinstance(step.get("loop"), Mapping) else {}
    kind = spec.get("type", "loop")
    parts = [str(kind)]
    if kind in ("while", "until") and spec.get("condition") is not None:
        parts.append(condition_words(spec.get("condition")) or "")
    elif kind == "for":
        parts.append(f"{spec.get('count')} times")
    elif kind == "forEach":
        items = spec.get("items")
        parts.append(f"item of {items}" if isinstance(items, str) else "item")
    parts.append(_bound_words(step))
    return " · ".join(p for p in parts if p)


def _bound_words(step: Mapping[str, Any]) -> str:
    """The iterations the engine allows the loop: its ``maxIterations``, else the engine's
    default."""
    try:
        return f"at most {LoopRules(step).limit} iterations"
    except (InvalidWorkflow, KeyError):  # drawn anyway: the page says what is wrong elsewhere
        return "an iteration bound that is not valid"


def _cut(text: str, width: float) -> str:
    room = max(int(width / CHAR), 4)
    return text if len(text) <= room else text[: room - 1] + "…"


@dataclass
class _Canvas:
    parts: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.parts.append(text)


def _leaf(canvas: _Canvas, step: Mapping[str, Any], x: float, y: float, w: float) -> float:
    kind = "command" if step_kind(step) == "command" else "agent"
    step_id = str(step.get("id", "?"))
    title = str(step.get("title") or step_id)
    label = "command" if kind == "command" else "agent"
    tip = f"{title} ({label} step {step_id})"
    canvas.add(
        f'<a href="#step-{escape(step_id)}" class="node kind-{kind}" data-step="{escape(step_id)}">'
        f"<title>{escape(tip)}</title>"
    )
    radius = 4 if kind == "command" else 16  # commands square-ish, agent steps rounded
    canvas.add(
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BOX}" rx="{radius}" class="box"/>'
    )
    canvas.add(
        f'<text x="{x + 10:.1f}" y="{y + 22:.1f}" class="title">{escape(_cut(title, w - 20))}</text>'
    )
    canvas.add(
        f'<text x="{x + 10:.1f}" y="{y + 41:.1f}" class="sub">'
        f"{escape(_cut(f'{label} · {step_id}', w - 20))}</text>"
    )
    canvas.add("</a>")
    return BOX


def _frame(
    canvas: _Canvas, cls: str, x: float, y: float, w: float, h: float, title: str, step_id: str
) -> None:
    canvas.add(
        f'<a href="#step-{escape(step_id)}" class="frame {cls}" data-step="{escape(step_id)}">'
        f"<title>{escape(title)}</title>"
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8" class="frame-box"/>'
        f'<text x="{x + 10:.1f}" y="{y + 17:.1f}" class="frame-title">{escape(_cut(title, w - 20))}</text>'
        "</a>"
    )


def _height(step: Mapping[str, Any], width: float, by_id: Mapping[str, Any]) -> float:
    kind = step_kind(step)
    if kind == "parallel":
        members = [m for m in step.get("steps") or [] if isinstance(m, Mapping)]
        rows = _rows(members)
        inner = (width - 2 * PAD - 8 * (min(len(members), 4) - 1)) / max(min(len(members), 4), 1)
        return (
            HEADER
            + sum(max(_height(m, inner, by_id) for m in row) for row in rows)
            + PAD * len(rows)
            + PAD
        )
    if kind == "loop":
        body = _body(step, by_id)
        return HEADER + _sequence_height(body, width - 2 * PAD - 24, by_id) + 2 * PAD
    return BOX


def _rows(members: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    return [list(members[i : i + 4]) for i in range(0, len(members), 4)] or [[]]


def _body(step: Mapping[str, Any], by_id: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    body = step.get("body")
    if isinstance(body, str):
        return [by_id[body]] if body in by_id else []
    return [s for s in body or [] if isinstance(s, Mapping)]


def _sequence_height(steps: Sequence[Mapping[str, Any]], width: float, by_id: Any) -> float:
    return sum(_height(s, width, by_id) for s in steps) + EDGE * max(len(steps) - 1, 0)


def _draw(
    canvas: _Canvas, step: Mapping[str, Any], x: float, y: float, w: float, by_id: Any
) -> float:
    kind = step_kind(step)
    step_id = str(step.get("id", "?"))
    if kind == "parallel":
        members = [m for m in step.get("steps") or [] if isinstance(m, Mapping)]
        height = _height(step, w, by_id)
        limit = step.get("parallelLimit")
        title = "parallel" + (f" · at most {limit} at once" if limit else "") + f" · {step_id}"
        _frame(canvas, "parallel", x, y, w, height, title, step_id)
        top = y + HEADER
        for row in _rows(members):
            count = max(len(row), 1)
            inner = (w - 2 * PAD - 8 * (min(len(members), 4) - 1)) / max(min(len(members), 4), 1)
            left = x + PAD + (w - 2 * PAD - (inner * count + 8 * (count - 1))) / 2
            tallest = 0.0
            for index, member in enumerate(row):
                mx = left + index * (inner + 8)
                tallest = max(tallest, _draw(canvas, member, mx, top, inner, by_id))
                words = condition_words(member.get("runCondition"))
                if words:
                    canvas.add(
                        f'<text x="{mx + 4:.1f}" y="{top - 3:.1f}" class="cond">'
                        f"{escape(_cut('if ' + words, inner))}</text>"
                    )
            top += tallest + PAD
        return height
    if kind == "loop":
        body = _body(step, by_id)
        height = _height(step, w, by_id)
        _frame(canvas, "loop", x, y, w, height, f"loop · {loop_words(step)} · {step_id}", step_id)
        inner_w = w - 2 * PAD - 24
        _sequence(canvas, body, x + PAD, y + HEADER + PAD, inner_w, by_id)
        # the way back to the top of the body, on the right
        right, low, high = x + w - PAD - 6, y + height - PAD - 4, y + HEADER + PAD + 4
        canvas.add(
            f'<path d="M {x + PAD + inner_w:.1f} {low:.1f} H {right:.1f} V {high:.1f}'
            f' H {x + PAD + inner_w + 4:.1f}" class="edge back" marker-end="url(#arrow)"/>'
        )
        return height
    return _leaf(canvas, step, x, y, w)


def _sequence(
    canvas: _Canvas, steps: Sequence[Mapping[str, Any]], x: float, y: float, w: float, by_id: Any
) -> float:
    top = y
    for index, step in enumerate(steps):
        if index:
            words = condition_words(step.get("runCondition"))
            middle = x + w / 2
            canvas.add(
                f'<line x1="{middle:.1f}" y1="{top:.1f}" x2="{middle:.1f}" y2="{top + EDGE - 2:.1f}"'
                ' class="edge" marker-end="url(#arrow)"/>'
            )
            if words:
                canvas.add(
                    f'<text x="{middle + 8:.1f}" y="{top + EDGE / 2 + 4:.1f}" class="cond">'
                    f"{escape(_cut('only if ' + words, w / 2 - 12))}<title>{escape('only if ' + words)}</title></text>"
                )
            top += EDGE
        elif step.get("runCondition") is not None:
            words = condition_words(step.get("runCondition")) or ""
            canvas.add(
                f'<text x="{x + w / 2 + 8:.1f}" y="{top - 8:.1f}" class="cond">'
                f"{escape(_cut('only if ' + words, w / 2 - 12))}<title>{escape('only if ' + words)}</title></text>"
            )
        top += _draw(canvas, step, x, top, w, by_id)
    return top - y


def workflow_svg(workflow: Mapping[str, Any]) -> str:
    """The whole diagram, as markup to put in a page (every text escaped)."""
    steps = [s for s in workflow.get("steps") or [] if isinstance(s, Mapping)]
    by_id = {s["id"]: s for s in steps if isinstance(s.get("id"), str)}
    owned = {s["body"] for s in steps if step_kind(s) == "loop" and isinstance(s.get("body"), str)}
    shown = [s for s in steps if s.get("id") not in owned]
    width = WIDTH - 40
    canvas = _Canvas()
    top = 34.0
    canvas.add(
        f'<circle cx="{WIDTH / 2}" cy="14" r="8" class="terminal"/>'
        f'<line x1="{WIDTH / 2}" y1="22" x2="{WIDTH / 2}" y2="{top - 2}" class="edge" marker-end="url(#arrow)"/>'
    )
    height = _sequence(canvas, shown, 20, top, width, by_id)
    end = top + height
    canvas.add(
        f'<line x1="{WIDTH / 2}" y1="{end:.1f}" x2="{WIDTH / 2}" y2="{end + 22:.1f}" class="edge" marker-end="url(#arrow)"/>'
        f'<circle cx="{WIDTH / 2}" cy="{end + 32:.1f}" r="8" class="terminal end"/>'
    )
    total = end + 46
    name = escape(str(workflow.get("name") or workflow.get("id") or "workflow"))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="diagram" viewBox="0 0 {WIDTH} {total:.0f}"'
        f' role="img" aria-label="Steps of {name}">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7"'
        ' markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/>'
        "</marker></defs>" + "".join(canvas.parts) + "</svg>"
    )
