"""The compile step: a workflow file as written → the workflow an agent is served.

Run once per workflow file (the catalog caches the result with its entry). The stages, in the
order upstream WorkRail 3.x applies them (``workflow-compiler.ts``):

1. ``templates`` — a step with ``templateCall`` of ``wr.templates.routine.<name>`` is replaced by
   the steps of routine ``<name>``;
2. ``bindings`` — ``{{wr.bindings.slot}}`` from the project's ``.workrail/bindings.json`` or the
   workflow's ``extensionPoints`` defaults;
3. ``features`` — the workflow's ``features`` add their constraints, procedure and verify items to
   every step written with ``promptBlocks``;
4. ``refs`` — ``{"kind": "ref"}`` prompt parts and ``{{wr.refs.x}}`` become their text;
5. ``prompt_blocks`` — ``promptBlocks`` rendered into the step's ``prompt`` (markdown sections);
6. a final scan: anything left in the ``{{wr.…}}`` namespace is a problem, never silent text.

`pipeline` runs the stages in this order. Every stage that makes text longer asks a
`CompileBudget` first (``_budget.py``): a step or a workflow that would compile past its limit
(``limits.py``) is WR811, and the text is not built.

(Bindings run right after templates, as upstream's compiler does; its documentation lists them
last. Either order gives the same text: bindings only rewrite strings that no later stage adds.)

The file as written stays what ``workflow_get`` returns; the compiled form is what the next step,
a run and the editor's hover show. Problems carry a code (WR8xx), a JSON pointer into the file as
written and a message; a workflow with problems is not served.
"""

from __future__ import annotations

from .pipeline import CompiledWorkflow, RoutineLookup, compile_workflow

__all__ = ["CompiledWorkflow", "RoutineLookup", "compile_workflow"]
