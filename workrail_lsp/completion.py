"""Completion: keys, values, new steps and objects with their required properties, step ids,
context variables, and ``{{ }}`` references — in documents with syntax errors too.

The place is read from the engine's tolerant tree (``TolerantDocument.cursor``), in JSON and in
YAML; what is valid there comes from the schema (``schema_model``) and the workflow's own names
(``workflow_facts``). In YAML the inserted text is YAML (``key: value``, block-style objects).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.diagnostics import Span
from workrail_engine.text.cursor import CursorContext
from workrail_engine.text.tolerant_tree import Member

from .documents import DocumentState
from .schema_model import UNKNOWN, schema_model
from .snippets import body_text, scalar_text, value_snippet, yaml_body_text, yaml_value_snippet
from .workflow_facts import WorkflowFacts, allowed_values, facts_of, variable_doc

__all__ = ["complete", "instance_of"]


class _Builder:
    """Collects items that all replace the same range."""

    def __init__(self, state: DocumentState, span: Span, snippets: bool) -> None:
        self.range = state.positions.range(span)
        self.snippets = snippets
        self.items: list[types.CompletionItem] = []

    def add(
        self,
        label: str,
        new_text: str,
        kind: types.CompletionItemKind,
        *,
        detail: str | None = None,
        doc: str | None = None,
        sort: str = "1",
        filter_text: str | None = None,
        snippet: bool = False,
    ) -> None:
        self.items.append(
            types.CompletionItem(
                label=label,
                kind=kind,
                detail=detail,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc)
                if doc
                else None,
                sort_text=f"{sort}{label}",
                filter_text=filter_text,
                text_edit=types.TextEdit(range=self.range, new_text=new_text),
                insert_text_format=types.InsertTextFormat.Snippet
                if snippet and self.snippets
                else types.InsertTextFormat.PlainText,
            )
        )


def on_the_cursor_line(text: str, span: Span, offset: int) -> Span:
    """``span`` cut to the line of ``offset``: LSP requires a completion edit's range on one line,
    holding the cursor, and VS Code drops every item whose range is not ("No suggestions."). A
    string not closed yet (`"` typed where the quote is not auto-closed) reads as a token up to
    the next quote, on a later line."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    if line_end == -1:
        line_end = len(text)
    if line_end > line_start and text[line_end - 1] == "\r":
        line_end -= 1
    start = min(max(span.start, line_start), offset)
    end = max(min(span.end, line_end), offset)
    return span if (start, end) == (span.start, span.end) else Span(start, end)


def instance_of(context: CursorContext) -> Any:
    """The object around the cursor as far as it can be read (containers as empty stand-ins)."""
    if context.container != "object":
        return UNKNOWN
    return context.partial_object()


def complete(
    state: DocumentState, position: types.Position, snippets: bool
) -> types.CompletionList | None:
    if not state.is_workflow:
        return None
    offset = state.positions.offset(position)
    context = state.tree.cursor(offset)
    # The schema is looked up by shape, not by which item: a new item may become any kind of
    # step, so array positions are left open (as they were before an item existed).
    context.path = tuple(-1 if isinstance(p, int) else p for p in context.path)
    context.index = -1
    span = Span(*context.token) if context.token else Span(offset, offset)
    span = on_the_cursor_line(state.text, span, offset)
    if context.in_string and not context.in_key:
        items = _in_template(state, context, offset, snippets)
        if items is not None:
            return types.CompletionList(is_incomplete=False, items=items)
    builder = _Builder(state, span, snippets)
    if context.container == "object" and context.in_key:
        _keys(builder, state, context)
    elif context.container == "object" and context.key is not None:
        _values(builder, state, context, context.path + (context.key,))
    elif context.container == "array":
        _values(builder, state, context, context.path + (context.index,))
    if not state.text.strip():
        builder.add(
            "new workflow",
            yaml_body_text(_NEW_WORKFLOW, snippets, "")
            if state.is_yaml
            else body_text(_NEW_WORKFLOW, snippets),
            types.CompletionItemKind.Snippet,
            snippet=True,
        )
    return types.CompletionList(is_incomplete=False, items=builder.items)


_NEW_WORKFLOW = {
    "id": "${1:my-workflow}",
    "name": "${2:My workflow}",
    "description": "${3:What this workflow accomplishes}",
    "version": "0.1.0",
    "steps": [
        {"id": "${4:first-step}", "title": "${5:Title}", "prompt": "${6:What the agent must do.}"}
    ],
}


def _keys(builder: _Builder, state: DocumentState, context: CursorContext) -> None:
    model = schema_model()
    nodes = model.at_path(context.path, state.value_along(context.path), instance_of(context))
    present = {m.key for m in context.members if m.key != context.token_value}
    yaml = state.is_yaml
    required = model.required(nodes)
    # An empty object may still become any alternative (a loop, an "or" condition...): offer the
    # keys of every branch; the required ones are those of the branch an empty object takes.
    offered = model.at_path(context.path, state.value_along(context.path)) if not present else nodes
    quoted = context.in_string
    comma = (
        ""
        if yaml
        else _separator_after(
            state.text,
            context.token[1] if context.token else state.positions.offset(builder.range.start),
        )
    )
    for name, schema in model.properties(offered).items():
        if name in present:
            continue
        if yaml:
            member = f"{name}:{yaml_value_snippet(schema, model, builder.snippets, context.indent)}"
        else:
            member = f'"{name}": {value_snippet(schema, model, builder.snippets)}{comma}'
        builder.add(
            name,
            member,
            types.CompletionItemKind.Property,
            detail=schema.get("title"),
            doc=schema.get("markdownDescription") or schema.get("description"),
            sort="0" if name in required else "1",
            filter_text=f'"{name}"' if quoted else name,
            snippet=True,
        )
    missing = [r for r in required if r not in present]
    if len(missing) > 1 and not present:
        properties = model.properties(nodes)
        if yaml:
            parts = [
                f"{name}:{yaml_value_snippet(properties.get(name, {}), model, builder.snippets, context.indent, i + 1)}"
                for i, name in enumerate(missing)
            ]
            joined = f"\n{context.indent}".join(parts)
        else:
            parts = [
                f'"{name}": {value_snippet(properties.get(name, {}), model, builder.snippets, i + 1)}'
                for i, name in enumerate(missing)
            ]
            joined = ",\n".join(parts) + comma
        builder.add(
            "required properties",
            joined,
            types.CompletionItemKind.Snippet,
            detail=", ".join(missing),
            doc="Insert every required property of this object.",
            sort="00",
            filter_text='"' if quoted else None,
            snippet=True,
        )


def _separator_after(text: str, end: int) -> str:
    """A comma when another member follows the inserted one (as the JSON language server does)."""
    following = text[end : end + 200].lstrip()
    return "," if following.startswith('"') else ""


def _values(
    builder: _Builder, state: DocumentState, context: CursorContext, path: tuple[str | int, ...]
) -> None:
    model = schema_model()
    nodes = model.at_path(path, state.value)
    facts = facts_of(state.value)
    quoted = context.in_string
    yaml = state.is_yaml
    key = path[-1] if path else None
    in_names = len(path) > 1 and path[-2] in ("sets", "reads") and context.container == "array"
    if key == "var" or in_names:
        for name in facts.declared if in_names else facts.context_vars:
            declared = facts.declared.get(name)
            builder.add(
                name,
                scalar_text(name, yaml),
                types.CompletionItemKind.Variable,
                detail="declared context variable" if declared is not None else "context variable",
                doc=variable_doc(name, declared) if declared is not None else None,
                sort="0" if declared is not None else "1",
                filter_text=_filter(name, quoted),
            )
    if key in ("equals", "not_equals") and context.container == "object":
        _declared_values(builder, facts, context.member("var"), quoted, yaml)
    if len(path) > 1 and path[-2] == "in" and context.container == "array":
        _declared_values(builder, facts, context.parent_member("var"), quoted, yaml)
    if key == "body" and context.container == "object":
        _step_ids(builder, facts, quoted, _own_id(context), yaml)
    for node in nodes:
        for position, choice in enumerate(node.get("enum", [])):
            descriptions = node.get("enumDescriptions") or []
            doc = descriptions[position] if position < len(descriptions) else None
            text = scalar_text(choice, yaml)
            builder.add(
                text.strip('"'),
                text,
                types.CompletionItemKind.EnumMember,
                doc=doc,
                sort="0",
                filter_text=_filter(text.strip('"'), quoted),
            )
        if not quoted and not yaml:
            for snippet in node.get("defaultSnippets", []):
                if isinstance(snippet, Mapping) and "body" in snippet:
                    builder.add(
                        str(snippet.get("label", "snippet")),
                        body_text(snippet["body"], builder.snippets),
                        types.CompletionItemKind.Snippet,
                        detail=snippet.get("description"),
                        snippet=True,
                    )
    if not quoted and any(n.get("type") == "boolean" for n in nodes):
        for word in ("true", "false"):
            builder.add(word, word, types.CompletionItemKind.Value)
    _dedupe(builder)


def _declared_values(
    builder: _Builder, facts: WorkflowFacts, var: Member | None, quoted: bool, yaml: bool
) -> None:
    """The enum of the declared variable the comparison's ``var`` member names."""
    name = var.node.value if var is not None and var.node is not None else None
    schema = facts.declared.get(name.removeprefix("context.")) if isinstance(name, str) else None
    for value in allowed_values(schema or {}):
        text = scalar_text(value, yaml)
        builder.add(
            text.strip('"'),
            text,
            types.CompletionItemKind.EnumMember,
            detail=f"allowed value of {name}",
            sort="0",
            filter_text=_filter(text.strip('"'), quoted),
        )


def _own_id(context: CursorContext) -> str | None:
    own = context.member("id")
    value = own.node.value if own is not None and own.node is not None else None
    return value if isinstance(value, str) else None


def _step_ids(
    builder: _Builder, facts: WorkflowFacts, quoted: bool, exclude: str | None, yaml: bool
) -> None:
    for step_id, step in facts.steps.items():
        if step_id == exclude:
            continue
        title = step.get("title")
        builder.add(
            step_id,
            scalar_text(step_id, yaml),
            types.CompletionItemKind.Reference,
            detail=title if isinstance(title, str) else "step",
            filter_text=_filter(step_id, quoted),
            sort="0",
        )


def _filter(label: str, quoted: bool) -> str:
    return f'"{label}' if quoted else label


def _dedupe(builder: _Builder) -> None:
    seen: set[str] = set()
    kept = []
    for item in builder.items:
        if item.label not in seen:
            seen.add(item.label)
            kept.append(item)
    builder.items = kept


# -- {{ references }} inside strings ----------------------------------------------------------


def _in_template(
    state: DocumentState, context: CursorContext, offset: int, snippets: bool
) -> list[types.CompletionItem] | None:
    assert context.token is not None
    body = context.token[0] + (1 if state.text[context.token[0]] in "\"'" else 0)
    before = state.text[body:offset]
    opened = before.rfind("{{")
    if opened < 0 or "}}" in before[opened:]:
        return None
    typed_from = body + opened + 2
    while typed_from < offset and state.text[typed_from] == " ":
        typed_from += 1
    after = state.text[offset : context.token[1]]
    word_end = (
        offset
        + len(after)
        - len(after.lstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"))
    )
    closes = (
        state.text[word_end : word_end + 2] == "}}" or state.text[word_end : word_end + 3] == " }}"
    )
    builder = _Builder(state, Span(typed_from, word_end), snippets)
    suffix = "" if closes else "}}"
    facts = facts_of(state.value)
    for name, schema in facts.parameters.items():
        doc = schema.get("description") if isinstance(schema.get("description"), str) else None
        builder.add(
            f"parameters.{name}",
            f"parameters.{name}{suffix}",
            types.CompletionItemKind.Variable,
            detail="parameter",
            doc=doc,
        )
    for step_id, step in facts.steps.items():
        title = step.get("title")
        builder.add(
            f"steps.{step_id}.output",
            f"steps.{step_id}.output{suffix}",
            types.CompletionItemKind.Reference,
            detail=title if isinstance(title, str) else "step output",
        )
    for name in facts.secrets:
        builder.add(
            f"secrets.{name}",
            f"secrets.{name}{suffix}",
            types.CompletionItemKind.Constant,
            detail="secret (from the environment)",
        )
    for name in facts.context_vars:
        declared = facts.declared.get(name)
        builder.add(
            f"context.{name}",
            f"context.{name}{suffix}",
            types.CompletionItemKind.Variable,
            detail="declared context variable" if declared is not None else "context variable",
            doc=variable_doc(name, declared) if declared is not None else None,
        )
    return builder.items
