"""`workrail format`: lay workflow files out the one way (``workrail_engine.text.formatting``, the code
the language server formats with), in place, or only check (``--check``) or show (``--diff``).

As ``ruff format``: exit 0 when done (or, checking, when nothing would change), 1 when ``--check``
or ``--diff`` finds a file to reformat, 2 when a file could not be formatted (it does not parse,
cannot be read, its layout would lose a comment, it lies outside the project and the paths named
on the command line, or it changed while being formatted) — such a file is left as it is and
named on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import collect_files, named_paths, project_directories
from workrail_engine.cli.formatters.codeframe import printable_path
from workrail_engine.cli.rewrite_scope import RewriteScope
from workrail_engine.cli.rewrites import (
    STDIN,
    FileIdentity,
    Rewrite,
    read_source,
    read_stdin,
    unified_diff,
    write_rewrites,
)

__all__ = ["FormatOptions", "run_format"]


@dataclass(frozen=True, slots=True)
class FormatOptions:
    check: bool = False
    diff: bool = False
    quiet: bool = False
    stdin_filename: str | None = None


UNREADABLE = "it cannot be read (`workrail validate` says why)"


def _plural(n: int, what: str) -> str:
    return f"{n} file {what}" if n == 1 else f"{n} files {what}"


def _format_file(
    name: str, text: str | None, path: str | None, identity: FileIdentity | None = None
) -> Rewrite:
    """``path``: where the file type comes from (None for standard input without a name: JSON)."""
    from workrail_engine.text.formatting import try_format

    if text is None:
        return Rewrite(name, "", None, refusal=UNREADABLE)
    formatted = try_format(text, path)
    return Rewrite(name, text, formatted.text, identity, formatted.refusal)


def _format_path(path: str) -> Rewrite:
    source = read_source(path)
    if source is None:
        return _format_file(path, None, path)
    return _format_file(path, source.text, path, source.identity)


def _run_stdin(options: FormatOptions, console: Console) -> int:
    from workrail_engine.text.document import UnreadableText

    name = options.stdin_filename or STDIN
    try:
        text = read_stdin()
    except UnreadableText as refused:
        console.error(f"{printable_path(name)}: not formatted: {refused}")
        return 2
    rewrite = _format_file(name, text, options.stdin_filename)
    if rewrite.new is None:
        console.error(f"{printable_path(name)}: not formatted: {rewrite.refusal}")
        return 2
    if options.diff:
        console.out(unified_diff(rewrite), nl=False)
    elif not options.check:
        console.out(rewrite.new, nl=False)
    elif rewrite.changed and not options.quiet:
        console.out(f"Would reformat: {printable_path(name)}")
    return 1 if (options.check or options.diff) and rewrite.changed else 0


def run_format(
    paths: Sequence[str],
    options: FormatOptions,
    *,
    console: Console,
    project: Path,
    extra_dirs: Sequence[Path] = (),
) -> int:
    """Format ``paths`` (or the project's workflow directories and the configured ones)."""
    from workrail_engine.project_config import find_config

    if list(paths) == [STDIN] or (not paths and options.stdin_filename):  # as ruff reads it
        return _run_stdin(options, console)
    extra = [*extra_dirs, *find_config(project).workflow_dirs]
    arguments = list(paths) or [str(d) for d in project_directories(project, extra)]
    files = collect_files(arguments, sources=not paths)
    rewrites = [_format_path(path) for path in files]
    failed = [r for r in rewrites if r.new is None]
    changed = [r for r in rewrites if r.changed]
    for rewrite in failed:
        console.error(f"{printable_path(rewrite.path)}: not formatted: {rewrite.refusal}")
    left: list[Rewrite] = []
    if options.diff:
        console.out("".join(unified_diff(r) for r in changed), nl=False)
    elif options.check:
        for rewrite in changed:
            console.out(f"Would reformat: {printable_path(rewrite.path)}")
    else:
        scope = RewriteScope(project, [*named_paths(paths), *extra_dirs])
        left = write_rewrites(changed, scope, console.error, "formatting")
    if not options.quiet:
        done = len(changed) - len(left)
        _summary(done, len(rewrites) - len(changed) - len(failed), options, console)
    if failed or left:
        return 2
    return 1 if (options.check or options.diff) and changed else 0


def _summary(changed: int, unchanged: int, options: FormatOptions, console: Console) -> None:
    """ruff's words: "1 file reformatted, 2 files left unchanged"; checking, "1 file would be
    reformatted, 2 files already formatted"."""
    if options.check or options.diff:
        parts = [_plural(changed, "would be reformatted")] if changed else []
        parts += [_plural(unchanged, "already formatted")] if unchanged or not changed else []
    else:
        parts = [_plural(changed, "reformatted")] if changed else []
        parts += [_plural(unchanged, "left unchanged")] if unchanged or not changed else []
    line = ", ".join(parts)
    if options.diff:
        console.err(line)
    else:
        console.out(line)
