"""Quick fixes: the edits the engine already attached to its diagnostics, offered as code actions.

The fixes are taken from the current version's diagnostics (never from a stale copy the client
sends back), so their offsets always match the text they edit.
"""

from __future__ import annotations

from lsprotocol import types

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
    if context.only and not any(
        str(kind).startswith(types.CodeActionKind.QuickFix) for kind in context.only
    ):
        return []
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
