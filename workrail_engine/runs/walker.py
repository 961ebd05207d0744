"""The walk through a workflow's steps during a run, with every side effect behind `Effects`.

The walk is deterministic given what its effects return (the durable layer replays it after a
crash, and the checkpointed effects return what they returned the first time), so it reads no
clock and no randomness of its own. Decisions: ``runCondition`` over parameters, context and
earlier outputs; loops, by the rules `workflow_next` follows too (`serving.loop_rules`);
parallel groups; ``onFailure`` abort | continue | retry; retries with exponential backoff capped
by the run's deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from ..definition.declared import with_context_defaults
from ..definition.steps import step_kind
from ..errors import EngineError
from ..evaluation.conditions import evaluate
from ..evaluation.templates import referenced_step_ids, render_for_agent
from ..serving.loop_rules import LoopRules
from ..serving.step_guidance import step_guidance
from ..serving.step_prompt import is_delegation, render_step
from .commands import retry_policy
from .fork import KeptPrefix, Switches
from .run_results import step_result

__all__ = ["Effects", "RunWalker", "condition_context", "run_with_retries", "waiting_view"]


class Effects(Protocol):
    def attempt(
        self,
        key: str,
        step: dict[str, Any],
        values: dict[str, Any],
        attempt: int,
        deadline: float | None,
    ) -> dict[str, Any]: ...
    def parallel(
        self,
        members: list[tuple[str, dict[str, Any], dict[str, Any]]],
        limit: int,
        deadline: float | None,
    ) -> list[dict[str, Any]]: ...
    def wait(
        self, key: str, waiting: dict[str, Any], deadline: float | None
    ) -> dict[str, Any] | None: ...
    def sleep_until(self, moment: float) -> None: ...
    def record(self, result: dict[str, Any]) -> None: ...
    def state(self, state: dict[str, Any]) -> None: ...


def condition_context(values: Mapping[str, Any]) -> dict[str, Any]:
    """What a condition's ``var`` can name: parameters and context by bare name, or qualified."""
    return {
        **values["parameters"],
        **values["context"],
        **{k: values[k] for k in ("parameters", "context", "steps")},
    }


class StepPlan(NamedTuple):
    """What a step's definition alone decides for the walk (found once per step of a run)."""

    kind: str
    retry: tuple[int, float, float]  # `retry_policy`
    reads: set[str]  # the ids of the steps whose outputs its command and criteria read


def step_plan(step: Mapping[str, Any]) -> StepPlan:
    criteria = step.get("validationCriteria")  # (most steps have none: not walked)
    read = step.get("run") if criteria is None else [step.get("run"), criteria]
    return StepPlan(step_kind(step), retry_policy(step), referenced_step_ids(read))


def needed_values(
    step: Mapping[str, Any], values: Mapping[str, Any], plan: StepPlan | None = None
) -> dict[str, Any]:
    """The values an attempt needs: every earlier output would make each stored attempt input
    grow with the run (quadratic for a long run); only the outputs it reads are passed."""
    wanted = (plan or step_plan(step)).reads
    if not wanted:  # (most command steps read no output: no comprehension run for them)
        return {**values, "steps": {}}
    steps = values["steps"]
    return {**values, "steps": {k: steps[k] for k in wanted if k in steps}}


def run_with_retries(
    effects: Effects,
    key: str,
    step: dict[str, Any],
    values: dict[str, Any],
    deadline: float | None,
    plan: StepPlan | None = None,
) -> dict[str, Any]:
    """Attempts until one succeeds or the policy (or the deadline) says stop; a step result."""
    plan = plan or step_plan(step)
    max_attempts, delay, backoff = plan.retry
    values = needed_values(step, values, plan)
    total = 0.0
    attempt = 1
    while True:
        # the outcome as recorded: the journal writes it with the result, so it is left as is
        outcome = effects.attempt(key, step, values, attempt, deadline)
        total += outcome.get("duration", 0.0)
        error = outcome.get("error")
        final = outcome["status"] != "failed" or outcome.get("deadline") or attempt >= max_attempts
        wait = delay * backoff ** (attempt - 1)
        if not final and deadline is not None and outcome["finished_at"] + wait >= deadline:
            error = f"{error}; no time left for another attempt before the run's deadline"
            final = True
        if final:
            return step_result(
                key,
                outcome["status"],
                outcome.get("output"),
                total,
                step_id=step["id"],
                attempts=attempt,
                error=error,
                deadline=outcome.get("deadline"),
                validation=outcome.get("validation"),
            )
        effects.sleep_until(outcome["finished_at"] + wait)
        attempt += 1


def waiting_view(
    key: str,
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    first: bool,
    loop: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a paused run shows the agent: the step as served, rendered by the same function as a
    stateless next step (``step_prompt.render_step``), and its guidance as the navigator writes
    it (role, preconditions and clarifications on the first prompt, guidance, metaGuidance,
    criteria); templates see parameters, context and earlier outputs, never secrets."""
    rendered = render_step(workflow, step, values, loop)
    context = condition_context(values)
    shown: dict[str, Any] = {
        k: step[k]
        for k in ("id", "type", "agentRole", "askForFiles", "requireConfirmation", "outputContract")
        if k in step
    }
    if step.get("guidance"):
        shown["guidance"] = [render_for_agent(str(g), values, context) for g in step["guidance"]]
    view: dict[str, Any] = {
        "step_key": key,
        "step": {**shown, "title": rendered.title, "prompt": rendered.prompt},
        "guidance": step_guidance(
            workflow, step, context, first=first, loop=None, rendered=rendered
        ),
    }
    if rendered.notes:
        view["notes"] = rendered.notes
    return view


class RunWalker:
    def __init__(
        self,
        workflow: Mapping[str, Any],
        parameters: dict[str, Any],
        context: dict[str, Any],
        effects: Effects,
        *,
        deadline: float | None,
        parallel_limit: int | None,
        masked_secrets: dict[str, str],
        kept: KeptPrefix | None = None,
        switches: Switches | None = None,
    ) -> None:
        """``kept``: a fork's kept steps (fork.py): replayed, not run, until the walk reaches a step
        it does not keep. ``switches``: a fork's (`fork.fork_walk`): where its parameters and
        context take over."""
        self.workflow = workflow
        self.kept = kept
        self.switches = switches
        self.plans: dict[int, StepPlan] = {}  # by id() of a step of ``workflow``: see `_plan`
        self.loop_rules: dict[int, LoopRules] = {}  # the same, for its loop steps
        self.effects = effects
        self.deadline = deadline
        self.parallel_limit = parallel_limit
        self.values: dict[str, Any] = {
            "parameters": parameters,
            "context": with_context_defaults(workflow, context),
            "steps": {},
            "secrets": masked_secrets,
        }
        self.by_id: dict[str, dict[str, Any]] = {
            s["id"]: s for s in workflow["steps"] if isinstance(s, dict) and "id" in s
        }
        self.owned = {
            s["body"]
            for s in workflow["steps"]
            if step_kind(s) == "loop" and isinstance(s.get("body"), str)
        }
        # What the agent handed over with the answer just given; a command or a parallel
        # group that finishes after it clears them, as `workflow_next` reads only the
        # artifacts handed over in the same call (a loop decided by them reads none).
        self.artifacts: list[Any] = []
        self.failed: list[str] = []  # steps that failed under onFailure: continue
        # the loop being walked, for the prompt of its body's steps (the final-pass notice)
        self.loop_position: dict[str, Any] | None = None
        # the iteration of each loop being walked, outermost first: part of every step's key
        self.iterations: list[int] = []
        self.asked = False  # whether the agent was asked for a step yet (preconditions go first)
        self.error: str | None = None  # set when the run must stop

    # --- the walk ----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        # No "running" state at the start: a run without a state event reads as running.
        for step in self.workflow["steps"]:
            if self.error is not None:
                break
            if step["id"] in self.owned:
                continue
            self._step(step)
        if self.error is not None:
            return {"status": "failed", "error_message": self.error}
        if self.failed:
            return {
                "status": "partial",
                "error_message": f"steps failed (onFailure: continue): {', '.join(self.failed)}",
            }
        return {"status": "success", "error_message": None}

    def _plan(self, step: dict[str, Any]) -> StepPlan:
        """The step's plan, found once per step of the run (the workflow's step dicts live as
        long as the walk, so their ids name them; a loop's body asks at every iteration)."""
        plan = self.plans.get(id(step))
        if plan is None:
            plan = self.plans[id(step)] = step_plan(step)
        return plan

    def _holds(self, step: Mapping[str, Any], notes: list[str] | None = None) -> bool:
        condition = step.get("runCondition")
        return condition is None or evaluate(condition, condition_context(self.values), notes)

    def _key(self, step: Mapping[str, Any]) -> str:
        """The key a step's attempts, result and agent answer are recorded under: its id, then
        the iteration of each enclosing loop (``ID[2]``, ``ID[1][3]`` nested). Parallel members
        and sequential steps get theirs here alike, so no iteration reads another's outcome."""
        if not self.iterations:  # (outside every loop: most steps, no generator made for none)
            return str(step["id"])
        return str(step["id"]) + "".join(f"[{i}]" for i in self.iterations)

    def _reaching(self, key: str) -> None:
        """A fork's walk reaches the step ``key``: past what it keeps, its values take over."""
        if self.switches is not None:
            self.switches.reaching(key, self.values)

    def _kept_result(self, key: str) -> dict[str, Any] | None:
        """The result a fork keeps for the step ``key`` (None: the step is not kept)."""
        return self.kept.results.get(key) if self.kept is not None else None

    def _replay(self, step: dict[str, Any], kind: str, result: dict[str, Any]) -> None:
        """A kept step, as it ended in the run forked from: nothing runs, nobody is asked."""
        if kind == "prompt" or is_delegation(step):
            self.asked = True
            if self.kept is not None and result["status"] == "success":
                self._answered(step, self.kept.answers.get(result["step_name"]) or {}, result)
                return
        elif kind == "command":
            self.artifacts = []
        self._finish(step, result)

    def _step(self, step: dict[str, Any]) -> None:
        key = self._key(step)
        plan = self._plan(step)
        kind = plan.kind
        # (a walk that is not a fork's, most, has nothing to reach or replay: no calls for it)
        forked = self.kept is not None or self.switches is not None
        if forked and kind not in ("parallel", "loop"):
            # Before a kept step too: a fork of a fork takes its parent's values at the parent's
            # fork point, inside what it keeps, for the loops and conditions after it.
            self._reaching(key)
            kept = self._kept_result(key)
            if kept is not None:
                self._replay(step, kind, kept)
                return
        notes: list[str] = []
        if not self._holds(step, notes):
            reason = " ".join(["runCondition is false", *notes])
            self._finish(
                step, step_result(key, "skipped", None, 0.0, step_id=step["id"], reason=reason)
            )
            return
        if kind == "command":
            self._finish(
                step, run_with_retries(self.effects, key, step, self.values, self.deadline, plan)
            )
            self.artifacts = []
        elif kind == "prompt" or is_delegation(step):
            self._prompt(step, key)
        elif kind == "parallel":
            self._parallel(step)
        else:
            self._loop(step)

    def _finish(self, step: Mapping[str, Any], result: dict[str, Any]) -> None:
        self.effects.record(result)
        if result["status"] == "success" or result["status"] == "skipped":
            if result["status"] == "success":
                self.values["steps"][step["id"]] = {"output": result["output"]}
            return
        if result.get("deadline"):
            self.error = (
                f"the run's overall timeout was reached during step {result['step_name']!r}"
            )
        elif result["status"] == "interrupted":
            self.error = f"step {result['step_name']!r} was interrupted: {result.get('error')}"
        elif step.get("onFailure") == "continue":
            self.failed.append(result["step_name"])
        else:
            self.error = f"step {result['step_name']!r} failed: {result.get('error')}"

    def _prompt(self, step: dict[str, Any], key: str) -> None:
        waiting = waiting_view(
            key, self.workflow, step, self.values, first=not self.asked, loop=self.loop_position
        )
        self.asked = True
        self.effects.state(
            {"status": "waiting", "waiting": {**waiting, "context": self.values["context"]}}
        )
        message = self.effects.wait(key, waiting, self.deadline)
        if message is None:
            self._finish(
                step,
                step_result(
                    key,
                    "failed",
                    None,
                    0.0,
                    step_id=step["id"],
                    deadline=True,
                    error="the run's overall timeout was reached while waiting for the agent",
                ),
            )
            return
        self.effects.state({"status": "running"})
        self._answered(
            step,
            message,
            step_result(
                key,
                "success",
                message.get("output"),
                message.get("duration", 0.0),
                step_id=step["id"],
            ),
        )

    def _answered(
        self, step: dict[str, Any], message: Mapping[str, Any], result: dict[str, Any]
    ) -> None:
        self.values["context"].update(message.get("context") or {})
        self.artifacts = list(message.get("artifacts") or [])
        self._finish(step, result)

    def _parallel(self, group: dict[str, Any]) -> None:
        members, prompts, kept_members = [], [], []
        for step in group.get("steps") or []:
            key = self._key(step)
            self._reaching(key)
            kept = self._kept_result(key)
            if kept is not None:  # a fork's: ended before the fork point
                if step_kind(step) == "prompt":
                    prompts.append(step)  # after the commands, as they were asked
                else:
                    kept_members.append((step, kept))
                continue
            if not self._holds(step):
                self._finish(
                    step,
                    step_result(
                        key,
                        "skipped",
                        None,
                        0.0,
                        step_id=step["id"],
                        reason="runCondition is false",
                    ),
                )
            elif step_kind(step) == "prompt":
                prompts.append(step)  # the agent does one thing at a time
            else:
                members.append((key, step, needed_values(step, self.values)))
        limits = [n for n in (group.get("parallelLimit"), self.parallel_limit) if n]
        limit = min(limits) if limits else max(len(members), 1)
        for step, result in kept_members:
            self._finish(step, result)
        if members:
            for (_, step, _), result in zip(
                members, self.effects.parallel(members, limit, self.deadline), strict=False
            ):
                self._finish(step, result)
        if members or any(result["status"] != "skipped" for _, result in kept_members):
            self.artifacts = []  # as when those members ran
        for step in prompts:
            if self.error is None:
                key = self._key(step)
                self._reaching(key)
                kept = self._kept_result(key)
                if kept is not None:
                    self._replay(step, "prompt", kept)
                else:
                    self._prompt(step, key)

    # --- loops -------------------------------------------------------------------------

    def _loop(self, loop: dict[str, Any]) -> None:
        try:
            rules = self._loop_rules(loop)
        except EngineError as error:
            self.error = error.message
            return
        body = loop.get("body")
        steps: list[dict[str, Any]] = (
            [self.by_id[body]] if isinstance(body, str) else list(body or [])
        )
        iteration = 0
        enclosing = self.loop_position  # an outer loop's, back once this one ends
        self.iterations.append(iteration)
        while self.error is None:
            values = condition_context(self.values)  # what count, items and conditions read
            if not self._continues(rules, iteration, values):
                break
            iteration += 1
            self.iterations[-1] = iteration
            if not self._enter(rules, iteration, values):
                break
            self.loop_position = {
                "type": rules.kind,
                "iteration": iteration,
                "maxIterations": rules.limit,
            }
            for step in steps:
                if self.error is not None:
                    break
                self._step(step)
        self.iterations.pop()
        self.loop_position = enclosing
        rules.clear_variables(self.values["context"])

    def _loop_rules(self, loop: dict[str, Any]) -> LoopRules:
        """The rules of ``loop``, read once per loop step of the run (by id(), as `_plan`)."""
        rules = self.loop_rules.get(id(loop))
        if rules is None:
            rules = self.loop_rules[id(loop)] = LoopRules(loop)
        return rules

    # A count, items or a condition the rules refuse ends the run with the error `workflow_next`
    # raises for the same loop.

    def _continues(self, rules: LoopRules, done: int, values: dict[str, Any]) -> bool:
        try:
            return rules.continues(done, values, self.artifacts, None)
        except EngineError as error:
            self.error = error.message
            return False

    def _enter(self, rules: LoopRules, iteration: int, values: dict[str, Any]) -> bool:
        """Set the loop variables for ``iteration``; False when the run must stop instead."""
        item = None
        if rules.kind == "forEach":
            try:
                item = rules.item(iteration, values)
            except EngineError as error:
                self.error = error.message
                return False
        rules.set_variables(self.values["context"], iteration, item)
        return True
