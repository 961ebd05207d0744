"""`workrail list`, `workrail show` and `workrail schema`: read-only views of the catalog."""

from __future__ import annotations

import filecmp
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.formatters.codeframe import printable_path
from workrail_engine.definition.declared import declared_parameters

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog, WorkflowEntry

__all__ = ["render_table", "run_list", "run_schema", "run_show"]

COLUMNS = ("id", "name", "category", "version", "source")


def _row(entry: WorkflowEntry) -> dict[str, str]:
    summary = entry.summary()
    return {
        "id": entry.id,
        "name": str(summary.get("name") or ""),
        "category": str(summary.get("category") or ""),
        "version": str(summary.get("version") or ""),
        "source": entry.source.label,
    }


def render_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str] = COLUMNS) -> str:
    """Left-aligned columns under upper-case headers, like `pip list`."""
    widths = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in columns}
    header = "  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip()
    body = ["  ".join(r[c].ljust(widths[c]) for c in columns).rstrip() for r in rows]
    return "\n".join([header, *body])


def _report_catalog_problems(catalog: Catalog, console: Console) -> None:
    for warning in catalog.source_warnings:
        console.warning(warning)
    for invalid in catalog.invalid_files():
        first = invalid.diagnostics[0].message if invalid.diagnostics else "invalid"
        more = len(invalid.diagnostics) - 1
        where = printable_path(invalid.path)
        extra = f" (+{more} more; run `workrail validate {where}`)" if more > 0 else ""
        console.warning(f"{where}: left out of the catalog: {first}{extra}")
    for shadow in catalog.shadowed():
        # A byte-identical copy (a checkout's ./workflows is the bundled set) hides nothing.
        hidden = [printable_path(p) for p in shadow.hidden if not _same_bytes(shadow.winner, p)]
        if hidden:
            console.warning(
                f"workflow {shadow.workflow_id!r} from {printable_path(shadow.winner)} "
                f"shadows {', '.join(hidden)}"
            )


def _same_bytes(first: Path, second: Path) -> bool:
    try:
        return filecmp.cmp(first, second, shallow=False)
    except OSError:
        return False


def _listing(entry: WorkflowEntry) -> dict[str, Any]:
    return {**entry.summary(), "source": entry.source.label, "path": str(entry.path)}


def run_list(catalog: Catalog, *, category: str | None, fmt: str, console: Console) -> int:
    entries = [
        e for e in catalog.entries() if category is None or e.definition.get("category") == category
    ]
    _report_catalog_problems(catalog, console)
    if fmt == "json":
        console.out(json.dumps([_listing(e) for e in entries], indent=2, ensure_ascii=False))
    elif entries:
        console.out(render_table([_row(e) for e in entries]))
    else:
        console.err("No workflows found" + (f" in category {category!r}" if category else "") + ".")
    return 0


def _when(step: Mapping[str, Any]) -> str:
    from workrail_engine.evaluation.conditions import describe

    condition = step.get("runCondition")
    return f" (only when {describe(condition)})" if isinstance(condition, Mapping) else ""


def _step_line(step: Mapping[str, Any], depth: int) -> list[str]:
    kind = step.get("type") or ("command" if "run" in step else "prompt")
    lines = [
        f"{'  ' * depth}- {step.get('id')} [{kind}] {step.get('title', '')}".rstrip() + _when(step)
    ]
    body = step.get("steps") if kind == "parallel" else step.get("body") if kind == "loop" else None
    if isinstance(body, list):
        for child in body:
            if isinstance(child, Mapping):
                lines += _step_line(child, depth + 1)
    elif isinstance(body, str):
        lines.append(f"{'  ' * (depth + 1)}(repeats step {body})")
    return lines


def _parameter_line(name: str, spec: Any) -> str:
    spec = spec if isinstance(spec, Mapping) else {}
    facts = [str(spec["type"])] if "type" in spec else []
    if "default" in spec:
        facts.append(f"default {json.dumps(spec['default'])}")
    line = f"  - {name}" + (f" ({', '.join(facts)})" if facts else "")
    return line + (f": {spec['description']}" if spec.get("description") else "")


def render_workflow(entry: WorkflowEntry) -> str:
    d = entry.definition
    lines = [f"{d.get('name', entry.id)} ({entry.id})"]
    for label, key in (("Version", "version"), ("Category", "category")):
        if d.get(key):
            lines.append(f"{label}: {d[key]}")
    lines.append(f"Source: {entry.source.label} ({printable_path(entry.path)})")
    if d.get("description"):
        lines += ["", str(d["description"])]
    for label, key in (("Preconditions", "preconditions"), ("Secrets", "secrets")):
        if d.get(key):
            lines += ["", f"{label}:", *(f"  - {item}" for item in d[key])]
    params = declared_parameters(d)
    if params:
        lines += [
            "",
            "Parameters:",
            *(_parameter_line(name, spec) for name, spec in params.items()),
        ]
    lines += ["", "Steps:"]
    for step in d.get("steps", []):
        if isinstance(step, Mapping):
            lines += _step_line(step, 1)
    return "\n".join(lines)


def run_show(catalog: Catalog, workflow_id: str, *, fmt: str, console: Console) -> int:
    entry = catalog.get(workflow_id)
    if fmt == "json":
        console.out(json.dumps(entry.definition, indent=2, ensure_ascii=False))
    else:
        console.out(render_workflow(entry))
    return 0


def run_schema(console: Console) -> int:
    from workrail_engine.schema import schema_path

    console.out(schema_path().read_text(encoding="utf-8"), nl=False)
    return 0
