"""The stateless next step (what the specs' ``workflow_next`` tool serves).

Progress lives with the agent: ``completedSteps`` (an append-only log of the step ids it finished)
and ``context``. Loop progress rides in ``context["_loops"]``, written by this module and checked on
the way back in, so an agent that edits or drops it gets a clear error instead of a silently
wrong position. The rules, with a worked example, are in docs/navigation.md.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..answers.blockers import blocked_by_artifacts
from ..definition.declared import with_context_defaults, with_parameter_defaults
from ..definition.steps import step_kind, walk_steps
from ..errors import InvalidParams, InvalidRunState, InvalidWorkflow, StepNotFound, closest
from ..evaluation.conditions import evaluate
from ..evaluation.contracts import check_step_artifacts
from ..evaluation.regexes import backtracking_budget
from ..evaluation.rules import require_valid_criteria
from ..evaluation.templates import referenced_step_ids
from .loop_rules import LoopRules
from .step_guidance import completion_guidance, next_action, step_criteria, step_guidance
from .step_prompt import is_delegation, render_step

__all__ = ["LOOPS_KEY", "NextStep", "next_step"]

LOOPS_KEY = "_loops"


@dataclass
class NextStep:
    step: dict[str, Any] | None
    guidance: dict[str, Any]
    is_complete: bool
    context: dict[str, Any]
    skipped: list[str] = field(default_factory=list)
    loop: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    # What to report once the step is done (see `next_action`); None when the workflow is complete.
    next_action: dict[str, Any] | None = None
    blocked: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        result = {
            "step": self.step,
            "guidance": self.guidance,
            "isComplete": self.is_complete,
            "context": self.context,
            "skipped": self.skipped,
        }
        if self.loop is not None:
            result["loop"] = self.loop
        if self.notes:
            result["notes"] = self.notes
        if self.blocked is not None:
            result["blocked"] = self.blocked
        if self.next_action is not None:
            result["nextAction"] = self.next_action
        return result


def next_step(
    workflow: Mapping[str, Any],
    completed_steps: Sequence[str],
    context: Mapping[str, Any] | None = None,
    current_step: str | None = None,
    artifacts: Sequence[Any] | None = None,
    *,
    rendered: bool = True,
) -> NextStep:
    """The next step whose runCondition holds, with guidance; raises StepNotFound / InvalidParams.

    ``artifacts`` are what the agent hands over with the step it last completed (the last entry
    of ``completedSteps``): checked against that step's output contract and assessments, and read
    by a loop that decides from a loop-control artifact. When they fail the check, that step is
    not complete: it comes back with ``blocked`` (issues, suggestions, follow-ups) to redo.
    Every `matches` condition on the way shares one budget of backtracking time.
    ``rendered=False``: the step is found but neither its prompt nor its guidance is rendered
    (the step as defined, guidance empty) — for replay, which compares where a walk goes.
    """
    with backtracking_budget():
        plan = _plan_of(workflow)
        completed = _completed(completed_steps)
        ctx = with_context_defaults(workflow, _with_parameter_defaults(workflow, _context(context)))
        _check_known(plan, completed, current_step)
        blocked = _blocked(plan, completed, artifacts)
        if blocked is not None:
            completed = completed[:-1]
        # Artifacts come with a completed step: before the first one, no loop reads them.
        found = _Walk(plan, completed, ctx, artifacts if completed else None, rendered).run()
    found.blocked = blocked
    return found


def _blocked(plan: _Plan, completed: list[str], artifacts: Any) -> dict[str, Any] | None:
    if not completed:
        return None
    step = plan.by_id[completed[-1]]
    if not step.get("outputContract") and not step.get("assessmentRefs"):
        return None
    handed = list(artifacts) if isinstance(artifacts, list) else []
    blocked = blocked_by_artifacts(plan.workflow, step, handed)
    if blocked is None:
        return None
    check = check_step_artifacts(plan.workflow, step, handed)
    found = {
        "stepId": step["id"],
        "issues": check.issues,
        "suggestions": check.suggestions,
        "followUps": check.followups,
        "blockers": blocked.blockers,
    }
    if blocked.retry is not None:
        found["retry"] = {"artifacts": blocked.retry["artifacts"]}
    return found


# --- inputs -------------------------------------------------------------------------------

_PLANS_KEPT = 32
_plans: OrderedDict[int, _Plan] = OrderedDict()
_plans_lock = threading.Lock()


def _plan_of(workflow: Any) -> _Plan:
    """The plan of ``workflow``, made once per workflow object rather than once per call.

    A catalog serves one compiled definition object until its files change, and a new object
    after (so a reload never finds the old plan); served definitions are read, never written.
    Looked up by identity: each entry holds its workflow, so the id cannot be reused while kept.
    """
    key = id(workflow)
    with _plans_lock:
        plan = _plans.get(key)
        if plan is not None and plan.workflow is workflow:
            _plans.move_to_end(key)
            return plan
    plan = _Plan(workflow)
    with _plans_lock:
        _plans[key] = plan
        while len(_plans) > _PLANS_KEPT:
            _plans.popitem(last=False)
    return plan


class _Plan:
    """The workflow's steps, ids, which top-level steps run only as a loop's body, and the steps
    whose outputs a later step reads."""

    def __init__(self, workflow: Any) -> None:
        if not isinstance(workflow, Mapping) or not isinstance(workflow.get("steps"), list):
            raise InvalidWorkflow("The workflow has no steps array")
        self.workflow = workflow
        self.id = workflow.get("id") if isinstance(workflow.get("id"), str) else None
        self.steps = workflow["steps"]
        _check_shape(self.steps, "/steps")
        self.by_id: dict[str, Mapping[str, Any]] = {}
        for site in walk_steps(workflow):
            if site.id is not None:
                self.by_id.setdefault(site.id, site.step)
        self.owned = {
            step["body"]
            for step in self.steps
            if step_kind(step) == "loop" and isinstance(step.get("body"), str)
        }
        self.read_outputs = frozenset(referenced_step_ids(self.steps))
        self._valid_criteria: set[int] = set()  # ids of criteria objects of this workflow
        self._loop_rules: dict[str, LoopRules] = {}

    def loop_rules(self, loop: Mapping[str, Any]) -> LoopRules:
        """The rules of ``loop`` (a step of this plan's workflow), read once per plan."""
        rules = self._loop_rules.get(loop["id"])
        if rules is None:
            rules = self._loop_rules[loop["id"]] = LoopRules(loop)
        return rules

    def check_criteria(self, step: Mapping[str, Any]) -> None:
        """Raises InvalidCriteria for broken criteria of ``step``, as describing them would; each
        criteria object of the workflow is checked once per plan (the plan holds the workflow,
        so the ids stay its objects')."""
        for _, criteria in step_criteria(step):
            if criteria is not None and id(criteria) not in self._valid_criteria:
                require_valid_criteria(criteria)
                self._valid_criteria.add(id(criteria))

    def body(self, loop: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        body = loop.get("body")
        if isinstance(body, str):
            if body not in self.by_id:
                raise InvalidWorkflow(
                    f"Loop {loop['id']!r} repeats step {body!r}, which does not exist",
                    stepId=loop["id"],
                )
            body = [self.by_id[body]]
        if not isinstance(body, list) or not body:
            raise InvalidWorkflow(f"Loop {loop['id']!r} has no body", stepId=loop["id"])
        if any(step_kind(step) == "loop" for step in body):
            raise InvalidWorkflow(
                f"Loop {loop['id']!r} contains a loop; loops do not nest", stepId=loop["id"]
            )
        return body


def _check_shape(steps: list[Any], pointer: str) -> None:
    """Every step an object with an id, all the way down (the catalog's lint normally ensures it)."""
    for index, step in enumerate(steps):
        where = f"{pointer}/{index}"
        if not isinstance(step, Mapping) or not isinstance(step.get("id"), str):
            raise InvalidWorkflow(f"The step at {where} is not an object with an id", pointer=where)
        for key in ("steps", "body"):
            if isinstance(step.get(key), list) and step_kind(step) in ("parallel", "loop"):
                _check_shape(step[key], f"{where}/{key}")


def _completed(completed_steps: Any) -> list[str]:
    if isinstance(completed_steps, (str, bytes)) or not isinstance(completed_steps, Sequence):
        raise InvalidParams(
            "completedSteps must be an array of step ids",
            details=f"got {type(completed_steps).__name__}",
        )
    wrong = [item for item in completed_steps if not isinstance(item, str)]
    if wrong:
        raise InvalidParams(
            "completedSteps must be an array of step ids (strings)",
            details=f"not a string: {wrong[0]!r}",
        )
    return list(completed_steps)


def _with_parameter_defaults(workflow: Any, ctx: dict[str, Any]) -> dict[str, Any]:
    """The context with ``parameters`` completed by the declared defaults, as a run would start:
    a step shows (and a condition reads) ``path`` = "." rather than an unfilled template."""
    given = ctx.get("parameters", {})
    if isinstance(given, Mapping):
        filled = with_parameter_defaults(workflow, given)
        if filled:
            ctx["parameters"] = filled
    return ctx


def _context(context: Any) -> dict[str, Any]:
    if context is None:
        return {LOOPS_KEY: {}}
    if not isinstance(context, Mapping):
        raise InvalidParams("context must be an object", details=f"got {type(context).__name__}")
    # the result carries a context of its own; never alias the caller's
    ctx: dict[str, Any] = _json_copy(dict(context))
    loops = ctx.setdefault(LOOPS_KEY, {})
    if not isinstance(loops, Mapping) or not all(
        isinstance(state, Mapping) for state in loops.values()
    ):
        raise InvalidParams(
            f"context.{LOOPS_KEY} is the navigator's loop bookkeeping; pass it back exactly as returned"
        )
    ctx[LOOPS_KEY] = {key: dict(state) for key, state in loops.items()}
    return ctx


def _check_known(plan: _Plan, completed: list[str], current_step: Any) -> None:
    known = list(plan.by_id)
    if current_step is not None:
        if not isinstance(current_step, str):
            raise InvalidParams(
                "currentStep must be a step id (a string)",
                details=f"got {type(current_step).__name__}",
            )
        if current_step not in plan.by_id:
            raise StepNotFound(current_step, known, plan.id)
    unknown = list(dict.fromkeys(step_id for step_id in completed if step_id not in plan.by_id))
    if unknown:
        error = StepNotFound(unknown[0], known, plan.id)
        if len(unknown) > 1:
            listed = ", ".join(repr(step_id) for step_id in unknown)
            error.message = f"completedSteps names steps that {plan.id or 'the workflow'!r} does not have: {listed}"
            error.args = (error.message,)
        error.data["unknownSteps"] = [
            {"stepId": step_id, "closest": closest(step_id, known)} for step_id in unknown
        ]
        raise error


# --- the walk -----------------------------------------------------------------------------


class _Walk:
    def __init__(
        self,
        plan: _Plan,
        completed: list[str],
        ctx: dict[str, Any],
        artifacts: Any = None,
        rendered: bool = True,
    ) -> None:
        self.plan = plan
        self.rendered = rendered
        self.artifacts = artifacts
        self.completed = completed
        self.done = set(completed)
        self.ctx = ctx
        self.loops: dict[str, dict[str, Any]] = ctx[LOOPS_KEY]
        self.skipped: list[str] = []
        self.notes: list[str] = []

    def run(self) -> NextStep:
        for position, step in enumerate(self.plan.steps):
            if step["id"] in self.plan.owned:
                continue
            found = (
                self._loop(step, position) if step_kind(step) == "loop" else self._pending(step, 0)
            )
            if found is not None:
                return found if isinstance(found, NextStep) else self._result(found, None)
        return NextStep(
            None,
            completion_guidance(self.plan.workflow),
            True,
            self._context_out(),
            self._skipped(),
            None,
            self.notes,
        )

    def _context_out(self) -> dict[str, Any]:
        if not self.ctx[LOOPS_KEY]:
            return {key: value for key, value in self.ctx.items() if key != LOOPS_KEY}
        return self.ctx

    def _skipped(self) -> list[str]:
        return list(dict.fromkeys(self.skipped))

    def _result(self, step: Mapping[str, Any], loop: dict[str, Any] | None) -> NextStep:
        if self.rendered:
            served, guidance = self._rendered(step, loop)
        else:
            self.plan.check_criteria(step)
            served, guidance = dict(step), {}
        return NextStep(
            served,
            guidance,
            False,
            self._context_out(),
            self._skipped(),
            loop,
            self.notes,
            next_action(step, loop, self.plan.read_outputs),
        )

    def _rendered(
        self, step: Mapping[str, Any], loop: dict[str, Any] | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The step as served (its title and prompt rendered) and its guidance."""
        first = not self.completed
        values = served_values(self.ctx)
        rendered = render_step(self.plan.workflow, step, values, loop)
        self.notes.extend(rendered.notes)
        self.plan.check_criteria(step)
        guidance = step_guidance(
            self.plan.workflow,
            step,
            self.ctx,
            first=first,
            loop=loop,
            rendered=rendered,
            criteria_checked=True,
        )
        served = _json_copy(dict(step))  # the definition is shared: the caller gets its own step
        if step_kind(step) != "command":
            served.update(title=rendered.title, prompt=rendered.prompt)
        return served, guidance

    def _holds(self, condition: Any, owner: str, where: str) -> bool:
        try:
            return evaluate(condition, self.ctx, self.notes)
        except ValueError as error:
            raise InvalidWorkflow(
                f"The {where} of step {owner!r} is invalid: {error}", stepId=owner
            ) from error

    def _pending(self, step: Mapping[str, Any], since: int) -> Mapping[str, Any] | None:
        """``step`` (a group: its members still to do) if it is due, else None (done or skipped)."""
        window = self.done if since == 0 else set(self.completed[since:])
        if step["id"] in window:
            return None
        if not self._holds(step.get("runCondition"), step["id"], "runCondition"):
            self.skipped.append(step["id"])
            return None
        if step_kind(step) != "parallel" or is_delegation(step):
            return step
        remaining = []
        for member in step.get("steps", []):
            if member["id"] in window:
                continue
            if self._holds(member.get("runCondition"), member["id"], "runCondition"):
                remaining.append(member)
            else:
                self.skipped.append(member["id"])
        return {**step, "steps": remaining} if remaining else None

    # --- loops ------------------------------------------------------------------------------

    def _loop(self, loop: Mapping[str, Any], position: int) -> NextStep | None:
        loop_id = loop["id"]
        state = self.loops.get(loop_id)
        if loop_id in self.done or self._finished_later(position):
            return None
        if state is not None:
            self._verify(loop_id, state)
            if state.get("done"):
                return None
        elif not self._holds(loop.get("runCondition"), loop_id, "runCondition"):
            self.skipped.append(loop_id)
            return None
        elif self._lost_and_exhausted(loop):
            return None
        elif not self._continues(loop, 0):
            self._finish(loop, 0)
            return None
        else:
            state = self._enter(loop, 1)
            if any(member["id"] in self.done for member in self.plan.body(loop)):
                self.notes.append(
                    f"context.{LOOPS_KEY}.{loop_id} was not passed back: loop {loop_id!r} starts again at iteration 1. "
                    "Pass back the context returned with the previous step to keep a loop's position."
                )
        body = self.plan.body(loop)
        while True:
            info = self._expose(loop, state)
            for member in body:
                found = self._pending(member, state["start"])
                if found is not None:
                    return self._result(found, info)
            if not self._continues(loop, state["iteration"]):
                self._finish(loop, state["iteration"])
                return None
            state = self._enter(loop, state["iteration"] + 1)

    def _lost_and_exhausted(self, loop: Mapping[str, Any]) -> bool:
        """No bookkeeping although the body already ran maxIterations times: never restart forever.

        A body step is completed at most once per iteration, so a body id logged maxIterations
        times means the loop used all its iterations: it is over, whatever became of its context.
        """
        counts = [self.completed.count(member["id"]) for member in self.plan.body(loop)]
        if not any(counts):
            return False
        limit = self.plan.loop_rules(loop).limit
        if max(counts) >= limit:
            self.notes.append(
                f"context.{LOOPS_KEY}.{loop['id']} was not passed back, but the loop's body already ran {limit} "
                "(maxIterations) times: the loop is treated as finished."
            )
            self._finish(loop, limit)
            return True
        return False

    def _finished_later(self, position: int) -> bool:
        # progress past the loop means the loop is over, even if the agent lost its context
        return any(
            step["id"] in self.done
            for step in self.plan.steps[position + 1 :]
            if step["id"] not in self.plan.owned
        )

    def _check(self, loop_id: str, iteration: Any, start: Any, done: bool) -> str:
        payload = json.dumps([self.plan.id, loop_id, iteration, start, done])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def _verify(self, loop_id: str, state: Mapping[str, Any]) -> None:
        iteration, start, done = (
            state.get("iteration"),
            state.get("start", 0),
            bool(state.get("done")),
        )
        if done:
            iteration = state.get("iterations")
        # Whatever came back is hashed as it is: a missing or edited number fails the check.
        if state.get("check") != self._check(loop_id, iteration, start, done):
            raise InvalidRunState(
                f"context.{LOOPS_KEY}.{loop_id} was changed: "
                "pass back the context returned with the previous step unchanged "
                f"(or remove {LOOPS_KEY}.{loop_id} to restart the loop)",
                loopId=loop_id,
            )
        if not done and start > len(self.completed):
            raise InvalidRunState(
                f"completedSteps has {len(self.completed)} entries but loop {loop_id!r} "
                f"began its iteration {iteration} after "
                f"entry {start}: completedSteps is a log, append to it and never drop entries",
                loopId=loop_id,
            )

    def _continues(self, loop: Mapping[str, Any], done: int) -> bool:
        rules = self.plan.loop_rules(loop)
        return rules.continues(done, self.ctx, self.artifacts, self.notes)

    def _enter(self, loop: Mapping[str, Any], iteration: int) -> dict[str, Any]:
        start = len(self.completed)
        state = {
            "iteration": iteration,
            "start": start,
            "check": self._check(loop["id"], iteration, start, False),
        }
        self.loops[loop["id"]] = state
        return state

    def _expose(self, loop: Mapping[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
        """Put the loop variables in the context and describe the position for the result."""
        rules, iteration = self.plan.loop_rules(loop), state["iteration"]
        info = {
            "id": loop["id"],
            "type": rules.kind,
            "iteration": iteration,
            "index": iteration - 1,
            "maxIterations": rules.limit,
        }
        if rules.kind in ("for", "forEach"):
            info["total"] = rules.total(self.ctx)
        if rules.kind == "forEach":
            info["item"] = rules.item(iteration, self.ctx)
        rules.set_variables(self.ctx, iteration, info.get("item"))
        # informational copies for templates ({{context._loops.ID.item}}); never read back
        self.loops[loop["id"]].update({key: info[key] for key in ("index", "item") if key in info})
        return info

    def _finish(self, loop: Mapping[str, Any], iterations: int) -> None:
        self.plan.loop_rules(loop).clear_variables(self.ctx)
        self.loops[loop["id"]] = {
            "done": True,
            "iterations": iterations,
            "start": 0,
            "check": self._check(loop["id"], iterations, 0, True),
        }


def served_values(ctx: Mapping[str, Any]) -> dict[str, Any]:
    """Template values of a stateless walk: everything lives in the agent's context."""
    params = ctx.get("parameters")
    steps = ctx.get("steps")
    return {
        "parameters": params if isinstance(params, Mapping) else {},
        "context": {k: v for k, v in ctx.items() if k != LOOPS_KEY},
        "steps": steps if isinstance(steps, Mapping) else {},
    }


_SCALARS = (str, int, float, bool, type(None))


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data: dicts and lists made anew, scalars shared (immutable),
    anything else deep-copied. A third of what `copy.deepcopy` costs on a step, which was a
    fifth of a `workflow_next` call (its memo of every node is for cycles JSON cannot have)."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)
