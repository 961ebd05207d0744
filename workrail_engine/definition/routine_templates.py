"""Which routine a `templateCall` names: upstream WorkRail's naming of routine templates.

A routine is an ordinary workflow (upstream keeps them in ``workflows/routines/``). The routine
with id ``wr.routine-NAME``, ``routine-NAME`` or ``NAME`` is the template
``wr.templates.routine.NAME``. The linter uses this to check that a call's target exists; the
compile pipeline uses it to find what to expand.
"""

from __future__ import annotations

__all__ = ["ROUTINE_TEMPLATE_PREFIX", "routine_ids_for", "template_id_of"]

ROUTINE_TEMPLATE_PREFIX = "wr.templates.routine."
_ROUTINE_ID_PREFIXES = ("wr.routine-", "routine-")


def routine_ids_for(template_id: str) -> list[str]:
    """The workflow ids that would provide ``template_id``, most specific first ([] if none can)."""
    if not template_id.startswith(ROUTINE_TEMPLATE_PREFIX):
        return []
    name = template_id[len(ROUTINE_TEMPLATE_PREFIX) :]
    if not name:
        return []
    return [f"{prefix}{name}" for prefix in _ROUTINE_ID_PREFIXES] + [name]


def template_id_of(workflow_id: str) -> str:
    """The template id a routine (a workflow) is known by."""
    for prefix in _ROUTINE_ID_PREFIXES:
        if workflow_id.startswith(prefix):
            return ROUTINE_TEMPLATE_PREFIX + workflow_id[len(prefix) :]
    return ROUTINE_TEMPLATE_PREFIX + workflow_id
