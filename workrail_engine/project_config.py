"""A project's own WorkRail settings: ``[tool.workrail]`` in ``pyproject.toml``, or
``.workrail/config.toml``. ``workrail validate`` (and so the pre-commit hook) and the language
server read them through this module alone.

The file is found from the checked file's directory upwards, stopping at the repository root (the
first directory holding ``.git``): in each directory ``.workrail/config.toml`` is looked for first,
then a ``pyproject.toml`` that has a ``[tool.workrail]`` table (one without is passed over, as ruff
does). The nearest one wins whole; settings are not merged across files, except through ``extend``.

Keys (kebab-case, as ruff spells its own)::

    [tool.workrail]
    select = ["WR"]                 # codes or prefixes to report (default: every code)
    extend-select = []              # added to select
    ignore = ["WR601"]              # codes or prefixes never reported
    per-file-ignores = {"drafts/*" = ["WR5"]}   # glob (relative to this file's directory) -> codes
    workflow-dirs = ["ops/flows"]   # more workflow directories (relative to this file's directory)
    strict = false                  # warnings fail `workrail validate` too
    extend = "../shared/workrail.toml"  # settings read first; this file's apply on top
    workflow-repos = [{url = "https://…", rev = "v1.2.0", path = "workflows"}]  # docs/sources.md

A code is on when the longest selector matching it (``WR1`` < ``WR10`` < ``WR101``) is a select;
at equal length an ignore wins. ``ALL`` selects every code.

Per-file-ignore globs are gitignore's (pathspec): ``*`` and ``?`` stay within one folder, ``**``
crosses folders, a glob without ``/`` matches a file (or folder) name at any depth, one with ``/``
is anchored at the directory of the file that holds it; ``!glob`` applies to files the glob does
not match (ruff's negation).

``extend`` names another configuration file (a ``pyproject.toml`` is read for its
``[tool.workrail]``, any other file whole), relative to this one. Its settings come first: its
select/extend-select/ignore are a layer under this file's (a ``select`` here starts again, as on
the command line), and this file's ``per-file-ignores``, ``workflow-dirs`` and ``strict``, when
given, replace its. Each file's relative paths and globs stay relative to that file.

A repository is not trusted to point anywhere: every configuration file, the one found and each
one ``extend`` names, must resolve (symlinks followed) inside the repository (the nearest folder
with ``.git`` above the file found, else that file's project folder), and is read only if it is a
regular file of at most ``limits.MAX_CONFIG_BYTES`` (a symlink to ``/dev/zero`` or a FIFO is an
error, never a read without end). Errors may then echo values, as they come from the repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .limits import MAX_CONFIG_BYTES
from .text.regular_files import UnreadableFile, read_regular_file

if TYPE_CHECKING:
    import pathspec

    from .sources.declared import RepoSource

__all__ = [
    "CONFIG_FILES",
    "ConfigError",
    "FileIgnore",
    "ProjectConfig",
    "RuleSelection",
    "find_config",
    "parse_selectors",
]

CONFIG_FILES = (os.path.join(".workrail", "config.toml"), "pyproject.toml")
_SELECTOR = re.compile(r"^(ALL|WR\d{0,3})$")
_KEYS = frozenset(
    {
        "select",
        "extend-select",
        "ignore",
        "per-file-ignores",
        "workflow-dirs",
        "strict",
        "extend",
        "workflow-repos",
    }
)
MAX_EXTEND_DEPTH = 16
"""How many files one ``extend`` chain may hold (a cycle is refused before this bound)."""


class ConfigError(ValueError):
    """A configuration file that cannot be read, or a value in it (or on the command line) that
    is not what its key takes. The command line reports it as a usage error (exit 2), the
    language server logs it and carries on with the defaults."""


def parse_selectors(values: Iterable[str], where: str) -> tuple[str, ...]:
    """``["WR1", "WR601,WR602"]`` → ``("WR1", "WR601", "WR602")``; a bad selector is a ConfigError."""
    out = []
    for value in values:
        for part in value.split(","):
            selector = part.strip().upper()
            if not selector:
                continue
            if not _SELECTOR.match(selector):
                raise ConfigError(
                    f"{where}: {part.strip()!r} is no code or code prefix (WR101, WR1, WR or ALL)"
                )
            out.append(selector)
    return tuple(out)


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


@dataclass(frozen=True, slots=True)
class RuleSelection:
    """Which codes are reported: layers applied in order (a configuration file, then the command
    line); a layer with ``select`` starts again from nothing, one without it amends the last."""

    layers: tuple[tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]], ...] = ()
    """Each layer: (select or None, extend-select, ignore)."""

    def then(
        self,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
    ) -> RuleSelection:
        layer = (tuple(select) if select is not None else None, tuple(extend_select), tuple(ignore))
        return RuleSelection((*self.layers, layer))

    def enabled(self, code: str) -> bool:
        on = True  # every code, until a layer says otherwise
        for select, extend, ignore in self.layers:
            if select is not None:
                on = False
            # (specificity, is_ignore): the longest selector decides, an ignore at equal length.
            best: tuple[int, int] | None = None
            for selectors, is_ignore in (((*(select or ()), *extend), 0), (ignore, 1)):
                for selector in selectors:
                    if _matches(selector, code):
                        key = (_specificity(selector), is_ignore)
                        best = key if best is None or key > best else best
            if best is not None:
                on = not best[1]
        return on


@dataclass(frozen=True, slots=True)
class FileIgnore:
    """One ``per-file-ignores`` entry: a gitignore-style glob, relative to ``root``."""

    root: Path
    glob: str
    codes: tuple[str, ...]

    def matches(self, path: Path) -> bool:
        negated = self.glob.startswith("!")
        spec = _spec(self.glob[1:] if negated else self.glob)
        if path.is_relative_to(self.root):
            relative = path.relative_to(self.root).as_posix()
        else:  # a file outside the project: only a glob of names alone can match it
            relative = path.name
        return spec.match_file(relative) is not negated


@lru_cache(maxsize=256)
def _spec(glob: str) -> pathspec.PathSpec[Any]:
    import pathspec  # only when a per-file glob is matched

    return pathspec.PathSpec.from_lines("gitignore", [glob])


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    """The settings of one configuration file (or the defaults when there is none)."""

    path: Path | None = None
    """The file these settings come from."""
    selection: RuleSelection = field(default_factory=RuleSelection)
    per_file_ignores: tuple[FileIgnore, ...] = ()
    workflow_dirs: tuple[Path, ...] = ()
    """Absolute: resolved against the configuration file's directory."""
    strict: bool = False
    workflow_repos: tuple[RepoSource, ...] = ()
    """The ``workflow-repos`` declared (see `workrail_engine.sources`)."""

    @property
    def root(self) -> Path | None:
        """The directory the file's relative paths and globs start from."""
        return _root(self.path) if self.path is not None else None

    def ignored_for(self, path: str | os.PathLike[str] | None) -> tuple[str, ...]:
        """The codes of the per-file ignores whose glob matches ``path``."""
        if path is None or not self.per_file_ignores:
            return ()
        absolute = Path(os.path.abspath(path))
        return tuple(
            code
            for entry in self.per_file_ignores
            if entry.matches(absolute)
            for code in entry.codes
        )

    def selection_for(self, path: str | os.PathLike[str] | None) -> RuleSelection:
        ignored = self.ignored_for(path)
        return self.selection.then(ignore=ignored) if ignored else self.selection

    def contains_workflow(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` lies in one of :attr:`workflow_dirs`."""
        absolute = Path(os.path.abspath(path))
        return any(absolute.is_relative_to(directory) for directory in self.workflow_dirs)


def _root(config_file: Path) -> Path:
    parent = config_file.parent
    return parent.parent if parent.name == ".workrail" else parent


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def _from_table(table: Mapping[str, Any], path: Path, base: ProjectConfig) -> ProjectConfig:
    """``table``'s settings (from the file ``path``) on top of ``base`` (what it extends)."""
    where = str(path)
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
        )
    select = _strings(table, "select", where)
    selection = base.selection.then(
        parse_selectors(select, where) if select is not None else None,
        parse_selectors(_strings(table, "extend-select", where) or (), where),
        parse_selectors(_strings(table, "ignore", where) or (), where),
    )
    root = _root(path)
    per_file = table.get("per-file-ignores")
    if per_file is not None and not isinstance(per_file, dict):
        raise ConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [codes]")
    ignores = base.per_file_ignores
    if per_file is not None:
        ignores = tuple(
            FileIgnore(root, glob, parse_selectors(_strings(per_file, glob, where) or (), where))
            for glob in per_file
        )
    strict = table.get("strict", base.strict)
    if not isinstance(strict, bool):
        raise ConfigError(f"{where}: 'strict' must be true or false")
    dirs = _strings(table, "workflow-dirs", where)
    absolute = (
        base.workflow_dirs
        if dirs is None
        else tuple(Path(os.path.abspath(root / os.path.expanduser(d))) for d in dirs)
    )
    repos = base.workflow_repos
    if table.get("workflow-repos") is not None:
        # Only here: the sources' modules import hashlib, whose OpenSSL library every `workrail`
        # start loaded (with tomllib, ~30 M instructions: a tenth of importing the CLI).
        from .sources.declared import DeclarationError, parse_repo_entries
        from .sources.urls import UrlRefused

        try:
            repos = parse_repo_entries(table["workflow-repos"], where)
        except (DeclarationError, UrlRefused) as error:
            raise ConfigError(str(error)) from None
    return ProjectConfig(path, selection, ignores, absolute, strict, repos)


@dataclass(frozen=True, slots=True)
class _Table:
    """A configuration file's ``[tool.workrail]`` settings (or the whole ``workrail.toml``)."""

    settings: Mapping[str, Any]
    extend_line: int | None
    """The line ``extend`` is set on (for errors about it), when it can be told."""


_Stamp = tuple[int, int, int, int]
_EXTEND_LINE = re.compile(r"""^[ \t]*(?:extend|"extend"|'extend')[ \t]*=""", re.MULTILINE)
_WORKRAIL_TABLE = re.compile(r"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*workrail[ \t]*\]", re.MULTILINE)


@lru_cache(maxsize=64)
def _read_table(path: Path, stamp: _Stamp) -> _Table | ConfigError | None:
    """The settings table of ``path``; None for a pyproject.toml without ``[tool.workrail]``.
    Cached per (path, file identity, mtime, size), errors too: a language server notices an
    edited file, and does not read a broken one again for each request it serves.

    Only a regular file of at most MAX_CONFIG_BYTES is read: a symlink in a repository can name
    ``/dev/zero`` or a FIFO."""
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES)
    except UnreadableFile as error:
        return ConfigError(f"{path}: {error}")
    import tomllib  # only for a configuration file: its import compiles regexes at every start

    try:
        text = data.decode("utf-8")
        document = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return ConfigError(f"{path}: cannot be read as TOML: {error}")
    if path.name != "pyproject.toml":
        return _Table(document, _line_of(text, 0))
    table = document.get("tool", {}).get("workrail")
    if table is None:
        return None
    if not isinstance(table, dict):
        return ConfigError(f"{path}: [tool.workrail] must be a table")
    header = _WORKRAIL_TABLE.search(text)
    return _Table(table, _line_of(text, header.end()) if header else None)


def _line_of(text: str, start: int) -> int | None:
    """The line of the first ``extend =`` at or after ``start``."""
    found = _EXTEND_LINE.search(text, start)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _table(path: Path, stamp: _Stamp) -> _Table | None:
    answer = _read_table(path, stamp)
    if isinstance(answer, ConfigError):
        raise answer.with_traceback(None)
    return answer


def _boundary(config_file: Path, looked: list[str]) -> Path:
    """The directory every file of a configuration must resolve into: the repository holding
    ``config_file`` (the nearest directory with ``.git``), else its own project directory."""
    start = _root(config_file)
    for folder in (start, *start.parents):
        git = folder / ".git"
        looked.append(str(git))
        if git.exists():
            return Path(os.path.realpath(folder))
    return Path(os.path.realpath(start))


def _outside(path: Path, boundary: Path, chain: tuple[tuple[Path, _Table], ...]) -> ConfigError:
    """The error for a configuration file that resolves outside ``boundary``: it names the
    file (and line) that points there, and never what the file outside holds or whether it is."""
    if not chain:
        return ConfigError(
            f"{path}: a configuration file must lie inside the repository ({boundary}); this one"
            " resolves to a file outside it: not read"
        )
    holder, table = chain[-1]
    line = f":{table.extend_line}" if table.extend_line else ""
    return ConfigError(
        f"{holder}{line}: 'extend' must name a file inside the repository ({boundary});"
        f" {table.settings['extend']!r} is outside it: not read"
    )


def _load(
    path: Path, read: list[str], boundary: Path, chain: tuple[tuple[Path, _Table], ...] = ()
) -> ProjectConfig | None:
    """The settings in ``path``, with those it extends under them; every file read is added to
    ``read`` (what a cached answer depends on). ``chain``: the files that extend ``path``.

    Every file must resolve (symlinks followed) inside ``boundary``: the values of a file are
    echoed in errors, and ``extend = "~/.config/…"`` must not read, or tell of, a file outside
    the repository."""
    read.append(str(path))
    if not Path(os.path.realpath(path)).is_relative_to(boundary):
        raise _outside(path, boundary, chain)
    stamp = _stamp(str(path))
    if stamp is None:
        raise ConfigError(f"{chain[-1][0]}: 'extend' names {path}, which cannot be read")
    table = _table(path, stamp)
    if table is None:
        if chain:
            raise ConfigError(
                f"{chain[-1][0]}: 'extend' names {path}, which has no [tool.workrail]"
            )
        return None
    base = ProjectConfig()
    extend = table.settings.get("extend")
    if extend is not None:
        if not isinstance(extend, str):
            raise ConfigError(f"{path}: 'extend' must be the path of a configuration file")
        target = Path(os.path.abspath(path.parent / os.path.expanduser(extend)))
        if target in (*(file for file, _ in chain), path):
            raise ConfigError(f"{path}: 'extend' makes a cycle through {target}")
        if len(chain) >= MAX_EXTEND_DEPTH:
            raise ConfigError(f"{path}: 'extend' chain longer than {MAX_EXTEND_DEPTH} files")
        base = _load(target, read, boundary, (*chain, (path, table))) or base
    return _from_table(table.settings, path, base)


def _stamp(path: str) -> _Stamp | None:
    """What tells a file changed: its identity (device, inode), mtime and size."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)


# Per directory looked up: the files the answer depends on (with their stamps, None for "not
# there") and the answer, a configuration or the error. A language server asks for every request
# it serves; while no stamp changed, the answer costs a stat per file looked at.
_Answer = tuple[tuple[tuple[str, _Stamp | None], ...], "ProjectConfig | ConfigError"]
_ANSWERS: dict[str, _Answer] = {}
_MAX_ANSWERS = 4096


def find_config(start: str | os.PathLike[str]) -> ProjectConfig:
    """The settings that apply to ``start`` (a file or a directory): the nearest configuration
    file from there up to the repository root; the defaults when there is none."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    known = _ANSWERS.get(directory)
    if known is None or any(_stamp(path) != stamp for path, stamp in known[0]):
        known = _search(directory)
        if len(_ANSWERS) >= _MAX_ANSWERS:
            _ANSWERS.clear()
        _ANSWERS[directory] = known
    if isinstance(known[1], ConfigError):
        # Raised afresh each time: re-raising a kept exception adds each raise's frames to
        # its traceback, which would grow (and keep frames alive) with every request.
        raise known[1].with_traceback(None)
    return known[1]


def _search(directory: str) -> _Answer:
    looked: list[str] = []
    answer: ProjectConfig | ConfigError = ProjectConfig()
    try:
        answer = _nearest(Path(directory), looked)
    except ConfigError as error:
        answer = error
    return tuple((path, _stamp(path)) for path in dict.fromkeys(looked)), answer


def _nearest(directory: Path, looked: list[str]) -> ProjectConfig:
    for folder in (directory, *directory.parents):
        for name in CONFIG_FILES:
            candidate = folder / name
            looked.append(str(candidate))
            if _stamp(str(candidate)) is not None:
                found = _load(candidate, looked, _boundary(candidate, looked))
                if found is not None:
                    return found
        git = folder / ".git"
        looked.append(str(git))
        if git.exists():
            break
    return ProjectConfig()
