"""How context flows between steps: what only several steps together show.

- WR410 (with `expressions`, which finds it inside one condition): a member of a parallel group
  whose runCondition contradicts the group's. Both are evaluated in the same context (the group's
  members are decided when the group starts), so the member can never run. A loop's runCondition
  is not used so: its body's conditions are evaluated later, after the body may have changed the
  context.
- WR207: a `while`/`until` loop whose condition reads nothing its body can change, without an
  explicit `maxIterations`: it runs never or until the default bound. A body step can change a
  variable when it is a prompt step (or a delegation, or a routine call) that mentions the
  variable's name — the agent sets context when it answers — or, for `steps.ID…`, when the body
  holds that step; the loop's own `iterationVar` changes each iteration. Loops the agent ends with
  a loop-control artifact are left alone. Command steps change no context variable: a run takes
  context only from the agent's answers.
- WR307: `{{steps.X.output}}` where X has a runCondition (or is in a group or loop with one) that
  the reading step is not guarded by too: when X was skipped, there is no output to render.
- WR308: a condition reads a context variable that nothing in the file mentions — no prompt,
  guidance, contract or other text, no declared parameter, no loop variable. What is inferred
  without declarations, kept quiet: any mention of the name outside the conditions, even inside
  a longer word, counts (the agent may have been asked to set it); a file calling routines or delegating to
  other workflows (whose steps may set it) is not checked, nor a routine (its caller sets its
  context).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

from ..definition.declared import declared_parameters
from ..definition.steps import StepSite
from ..diagnostics import Diagnostic, Related, Severity
from ..serving.loop_source import artifact_source, body_decides, loop_condition
from ..text.document import WorkflowDocument
from .contradictions import atoms, contradiction
from .expressions import CANNOT_HOLD, condition_reads
from .step_finding import StepFindings
from .strings import StringSpans

__all__ = ["flow_diagnostics"]

UNCHANGED_LOOP_CONDITION = "WR207"
MAYBE_SKIPPED_OUTPUT = "WR307"
UNMENTIONED_VARIABLE = "WR308"

# The reads of an unmentioned variable (WR308) listed as related locations beyond its first.
MAX_RELATED_READS = 20


def flow_diagnostics(
    doc: WorkflowDocument, sites: list[StepSite], found: list[StepFindings]
) -> list[Diagnostic]:
    workflow = doc.value
    if not isinstance(workflow, Mapping):
        return []
    by_pointer = {site.pointer: site for site in sites}
    return [
        *_group_contradictions(doc, sites, by_pointer),
        *_unchanging_loops(doc, sites, workflow),
        *_maybe_skipped_outputs(doc, sites, found, by_pointer),
        *_unmentioned_variables(doc, sites, found, workflow),
    ]


# --- WR410 across a group ----------------------------------------------------------------


def _group_contradictions(
    doc: WorkflowDocument, sites: list[StepSite], by_pointer: dict[str, StepSite]
) -> Iterator[Diagnostic]:
    for site in sites:
        group = by_pointer.get(site.group) if site.group else None
        if group is None or "runCondition" not in site.step or "runCondition" not in group.step:
            continue
        guard = list(atoms(group.step["runCondition"], f"{group.pointer}/runCondition"))
        for atom in atoms(site.step["runCondition"], f"{site.pointer}/runCondition"):
            hit = contradiction(guard, atom)
            if hit is not None:
                message = (
                    f"This step can never run: {hit[1]} (the second is this step's, the first its "
                    f"group {group.id!r}'s runCondition, decided together when the group starts)"
                )
                yield Diagnostic(
                    CANNOT_HOLD, Severity.WARNING, message, atom.pointer, doc.span(atom.pointer)
                )
                break


# --- WR207 --------------------------------------------------------------------------------


def _unchanging_loops(
    doc: WorkflowDocument, sites: list[StepSite], workflow: Mapping[str, Any]
) -> Iterator[Diagnostic]:
    listed = workflow.get("steps")
    steps: list[Any] = listed if isinstance(listed, list) else []
    for site in sites:
        if site.kind != "loop":
            continue
        spec = site.step.get("loop")
        if (
            not isinstance(spec, Mapping)
            or spec.get("type") not in ("while", "until")
            or "maxIterations" in spec
            or artifact_source(spec)
            or body_decides(site.step, steps)
        ):
            continue
        condition = loop_condition(spec)
        if not isinstance(condition, Mapping):
            continue  # WR203 reports a missing condition
        body = _body(site, sites)
        if body is None:
            continue  # a body naming no step: WR202
        found_reads: list[tuple[str, str]] = []
        condition_reads(condition, "", found_reads)
        variables = sorted({var for _, var in found_reads})
        if any(_changeable(name, body, spec) for name in variables):
            continue
        where = (
            f"{site.pointer}/loop/condition"
            if "condition" in spec
            else f"{site.pointer}/loop/conditionSource/condition"
        )
        reads = (
            f"reads {', '.join(repr(v) for v in variables)}, which no step of its body changes"
            if variables
            else "reads no variable"
        )
        message = (
            f"This {spec['type']} condition {reads}: it stays as it was, so the loop runs not at "
            "all or until the default bound of 100 iterations. Ask a body step to set the "
            "variable (name it in the prompt), or give maxIterations if that bound is meant"
        )
        yield Diagnostic(
            UNCHANGED_LOOP_CONDITION, Severity.WARNING, message, where, doc.span(where)
        )


def _body(loop: StepSite, sites: list[StepSite]) -> list[StepSite] | None:
    named = loop.step.get("body")
    if isinstance(named, str):
        target = next((s for s in sites if s.id == named and s is not loop), None)
        if target is None:
            return None
        return [target, *(s for s in sites if s.group == target.pointer)]
    return [s for s in sites if s.loop == loop.pointer]


def _changeable(var: str, body: list[StepSite], spec: Mapping[str, Any]) -> bool:
    parts = var.split(".")
    if parts[0] == "parameters":
        return False  # fixed for the run
    if parts[0] == "steps":
        return len(parts) > 1 and any(site.id == parts[1] for site in body)
    name = parts[1] if parts[0] == "context" and len(parts) > 1 else parts[0]
    if name in (spec.get("iterationVar"), spec.get("itemVar"), spec.get("indexVar")):
        return True
    mention = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    return any(_agent_may_set(site, mention) for site in body)


def _agent_may_set(site: StepSite, mention: re.Pattern[str]) -> bool:
    step = site.step
    if site.kind == "command":
        return False
    if "templateCall" in step or "parallelDelegations" in step:
        return True  # a routine's or a sub-agent's steps are not in this file
    if site.kind in ("parallel", "loop"):
        return False  # its members are body sites of their own
    return any(mention.search(text) for text in _strings(step))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# --- WR307 --------------------------------------------------------------------------------


def _maybe_skipped_outputs(
    doc: WorkflowDocument,
    sites: list[StepSite],
    found: list[StepFindings],
    by_pointer: dict[str, StepSite],
) -> Iterator[Diagnostic]:
    by_id = {site.id: site for site in sites if site.id}
    guards: dict[str, dict[str, str]] = {}

    def guard(site: StepSite) -> dict[str, str]:
        if site.pointer not in guards:
            guards[site.pointer] = _guard(site, by_pointer)
        return guards[site.pointer]

    for site, step_found in zip(sites, found, strict=False):
        for relative, refs, _ in step_found.templates:
            spans = None
            for ref in refs:
                producer = by_id.get(ref.step_id) if ref.step_id and not ref.bare else None
                if producer is None or producer.order >= site.order or producer is site:
                    continue  # WR301 / WR302
                needed = guard(producer)
                if not needed:
                    continue  # most steps: no condition of their own or around them
                held = guard(site)
                missing = [shown for key, shown in needed.items() if key not in held]
                if not missing or site.pointer.startswith(producer.pointer + "/"):
                    continue
                pointer = site.pointer + relative
                spans = spans or StringSpans(doc, pointer)
                shown = missing[0]
                message = (
                    f"Step {producer.id!r} runs only when {shown} holds; when it was skipped, "
                    f"{{{{{ref.text}}}}} has no output to show. Give this step the same "
                    "runCondition, or say in the text what to do without it"
                )
                yield Diagnostic(
                    MAYBE_SKIPPED_OUTPUT,
                    Severity.WARNING,
                    message,
                    pointer,
                    spans.span(ref.span.start, ref.span.end),
                    data={"reference": ref.text},
                )


def _guard(site: StepSite, by_pointer: dict[str, StepSite]) -> dict[str, str]:
    """The conditions that must hold for the step to run — each member of the `and`s of its own
    runCondition, its group's and its loop's — keyed by their JSON text with sorted keys, to the
    text as written."""
    out: dict[str, str] = {}
    for owner in (site, by_pointer.get(site.group or ""), by_pointer.get(site.loop or "")):
        if owner is not None and "runCondition" in owner.step:
            for member in _members(owner.step["runCondition"]):
                key = json.dumps(member, sort_keys=True, ensure_ascii=False)
                out[key] = json.dumps(member, ensure_ascii=False)
    return out


def _members(condition: Any) -> Iterator[Any]:
    if isinstance(condition, Mapping) and len(condition) == 1 and "and" in condition:
        members = condition["and"]
        for member in members if isinstance(members, list) else ():
            yield from _members(member)
    elif condition != {}:
        yield condition


# --- WR308 --------------------------------------------------------------------------------


def _unmentioned_variables(
    doc: WorkflowDocument,
    sites: list[StepSite],
    found: list[StepFindings],
    workflow: Mapping[str, Any],
) -> Iterator[Diagnostic]:
    text = doc.text
    if "templateCall" in text or "parallelDelegations" in text:
        return  # a routine's or another workflow's steps may set any variable
    if str(workflow.get("id", "")).startswith(("wr.routine-", "routine-")):
        return  # a routine's context comes from the workflow that calls it
    if isinstance(workflow.get("context"), Mapping):
        return  # declared: WR309 (`declared_context`) reports what is read and not declared
    reads: dict[str, list[tuple[str, str]]] = {}  # name: (step pointer, pointer in the step)
    variables: list[str] = []
    for site, step_found in zip(sites, found, strict=False):
        if not step_found.reads:
            continue
        for relative, var in step_found.reads:
            variables.append(var)
            head, _, rest = var.partition(".")
            if head == "parameters" or head == "steps":
                continue  # not the context
            name = rest.partition(".")[0] if head == "context" and rest else head
            if name:
                reads.setdefault(name, []).append((site.pointer, relative))
    if not reads:
        return
    # Mentioned elsewhere when the text holds the name more often than the `var` values do (as
    # any substring, "mode" in "model", or in a condition's operand: both err on the quiet side);
    # str.count over the text, where a regex per name cost more than all the other checks.
    in_vars = "\x00".join(variables)
    unmentioned = [name for name in reads if text.count(name) <= in_vars.count(name)]
    if not unmentioned:
        return
    known = set(declared_parameters(workflow))
    for site in sites:
        if site.kind == "loop" and _is_map(site.step.get("loop")):
            spec = site.step["loop"]
            known.update(spec.get(k) for k in ("iterationVar", "itemVar", "indexVar"))
    for name in unmentioned:
        if name in known:
            continue
        pointers = [step + relative for step, relative in reads[name]]
        message = (
            f"Nothing in this workflow mentions the context variable {name!r} this condition "
            "reads — no prompt, parameter or loop variable: unless the user or the agent passes "
            "it unasked, it is missing (every comparison false, not_equals true). Ask a step to "
            "set it (name it in the prompt), or declare it as a parameter"
        )
        # one finding per variable, on its first read, the others related: one cause. A list of
        # thousands (a generated file reads one variable in every step) helps nobody and cost
        # the language server tens of ms per version to place and send: the first few, and the
        # count in the message.
        others = tuple(
            Related(f"{name!r} is read here too", doc.span(p))
            for p in pointers[1 : 1 + MAX_RELATED_READS]
        )
        if len(pointers) > 1 + MAX_RELATED_READS:
            message += f" (read {len(pointers)} times; the first {1 + MAX_RELATED_READS} shown)"
        first = pointers[0]
        yield Diagnostic(
            UNMENTIONED_VARIABLE, Severity.WARNING, message, first, doc.span(first), related=others
        )


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # a dict first: isinstance(value, Mapping) goes through ABCMeta at ~7x the cost
    return type(value) is dict or isinstance(value, Mapping)
