"""Quick fixes: the edits the engine already attached to its diagnostics, offered as code actions;
and "Fix all" (``source.fixAll.workrail``): every safe one at once, by the engine's ``fix_text``,
the function ``workrail validate --fix`` applies — the same file either way.

The fixes are taken from the current version's diagnostics (never from a stale copy the client
sends back), so their offsets always match the text they edit.
"""

from __future__ import annotations

from lsprotocol import types

from workrail_engine.diagnostics import Span

from .configuration import FIX_ALL_KIND, project_config
from .diagnostics import lsp_diagnostic
from .documents import DocumentState

__all__ = ["code_actions"]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def code_actions(
    state: DocumentState, requested: types.Range, context: types.CodeActionContext
) -> list[types.CodeAction]:
    only = [str(kind) for kind in context.only or ()]
    fix_all = [_fix_all(state)] if any(FIX_ALL_KIND.startswith(kind) for kind in only) else []
    if only and not any(kind.startswith(types.CodeActionKind.QuickFix) for kind in only):
        return [action for action in fix_all if action is not None]
    actions = []
    for diagnostic in state.diagnostics:
        if not diagnostic.fixes:
            continue
        shown = lsp_diagnostic(diagnostic, state)
        if not _overlaps(shown.range, requested):
            continue
        for fix in diagnostic.fixes:
            edits = [
                types.TextEdit(range=state.positions.range(e.span), new_text=e.new_text)
                for e in fix.edits
            ]
            actions.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown],
                    is_preferred=len(diagnostic.fixes) == 1,
                    edit=types.WorkspaceEdit(changes={state.uri: edits}),
                )
            )
    return actions


def _fix_all(state: DocumentState) -> types.CodeAction | None:
    """Asked for by kind only (an editor's "fix all on save"), never listed among quick fixes."""
    if not state.is_workflow or not any(d.fixes for d in state.diagnostics):
        return None
    from workrail_engine.lint.fixes import fix_text

    selection = project_config(state.path).selection_for(state.path)
    outcome = fix_text(state.text, state.path, enabled=lambda d: selection.enabled(d.code))
    if not outcome.fixed_count:
        return None
    whole = state.positions.range(Span(0, len(state.text)))
    return types.CodeAction(
        title=f"Fix all safe problems ({outcome.fixed_count})",
        kind=FIX_ALL_KIND,
        edit=types.WorkspaceEdit(changes={state.uri: [types.TextEdit(whole, outcome.text)]}),
    )
