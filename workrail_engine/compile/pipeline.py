"""The compile step's stages in order, over a copy of the workflow as written (the stages are
described in the package's docstring); what is left of the ``{{wr.…}}`` namespace afterwards is
WR808."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.problems import Problem
from ..serving.loop_source import derive_artifact_sources
from . import bindings, features, prompt_blocks, refs, templates
from ._budget import CompileBudget
from ._sites import StepVisitor, visit_steps

__all__ = ["CompiledWorkflow", "RoutineLookup", "compile_workflow"]

RoutineLookup = Callable[[str], Mapping[str, Any] | None]


@dataclass(frozen=True)
class CompiledWorkflow:
    definition: dict[str, Any]
    problems: tuple[Problem, ...] = ()
    bindings: dict[str, str] = field(default_factory=dict)  # slot → routine or workflow id used

    @property
    def ok(self) -> bool:
        return not self.problems


def compile_workflow(
    workflow: Mapping[str, Any],
    routines: RoutineLookup | None = None,
    project_bindings: Mapping[str, str] | None = None,
) -> CompiledWorkflow:
    """The served form of ``workflow``; the input is never modified."""
    definition = _copied(dict(workflow))
    problems: list[Problem] = []
    steps = definition.get("steps")
    if not isinstance(steps, list):
        return CompiledWorkflow(definition)
    budget = CompileBudget(problems)
    budget.count(steps)
    definition["steps"] = templates.expand(
        steps, routines or (lambda _name: None), problems, budget
    )
    used = bindings.resolve(definition, project_bindings or {}, problems, budget)
    derive_artifact_sources(definition["steps"])  # as upstream's compiler does for such loops
    stages: list[StepVisitor] = [
        features.applier(definition.get("features"), problems, budget),
        refs.resolver(problems, definition.get("references"), budget),
        prompt_blocks.renderer(problems, budget),
        _sentinel(problems),
    ]
    for stage in stages:
        visit_steps(definition["steps"], stage)
    visit_steps(definition["steps"], lambda step, _pointer: step.pop("_origin", None))
    # one report per problem, however many injected steps repeat it
    return CompiledWorkflow(definition, tuple(dict.fromkeys(problems)), used)


def _copied(value: Any) -> Any:
    """``copy.deepcopy(value)`` at half its cost on what a workflow file holds (dicts, lists,
    strings, numbers): its per-object dispatch and memo were a third of a compile. Objects that
    appear twice (a YAML alias) stay one object in the copy, as with deepcopy; any other type
    goes to deepcopy itself, with the same memo."""
    memo: dict[int, Any] = {}

    def copied(node: Any) -> Any:
        kind = type(node)
        if kind is str or kind is int or kind is float or kind is bool or node is None:
            return node
        if kind is dict or kind is list:
            done = memo.get(id(node))
            if done is not None:
                return done
            if kind is dict:
                copy_of_dict: dict[Any, Any] = {}
                memo[id(node)] = copy_of_dict
                for key, child in node.items():
                    copy_of_dict[key] = copied(child)
                return copy_of_dict
            copy_of_list: list[Any] = []
            memo[id(node)] = copy_of_list
            for child in node:
                copy_of_list.append(copied(child))
            return copy_of_list
        return copy.deepcopy(node, memo)

    return copied(value)


_AGENT_TEXT = ("prompt", "title")


def _list(value: Any) -> list[Any]:
    # a file being typed (the editor's hover compiles it) may hold anything where a list belongs
    return value if isinstance(value, list) else []


def _sentinel(problems: list[Problem]) -> StepVisitor:
    def scan(step: dict[str, Any], pointer: str) -> None:
        texts = [(key, step.get(key)) for key in _AGENT_TEXT]
        texts += [(f"guidance/{i}", g) for i, g in enumerate(_list(step.get("guidance")))]
        for index, fragment in enumerate(_list(step.get("promptFragments"))):
            if isinstance(fragment, Mapping):
                texts.append((f"promptFragments/{index}/text", fragment.get("text")))
        reported = {problem.pointer for problem in problems}
        for where, text in texts:
            token = refs.leftover_token(text)
            if token and f"{pointer}/{where}" not in reported:
                problems.append(
                    Problem(
                        f"{pointer}/{where}",
                        "WR808",
                        f"Step {step.get('id')!r}: {token} is in the compiler's wr. namespace but "
                        "nothing resolves it (a known ref, a declared binding slot).",
                    )
                )

    return scan
