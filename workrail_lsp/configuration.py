"""Settings of the language server: which files are workflows, and where else workflows live.

Precedence: defaults, then the client's ``initializationOptions``, then ``workspace/configuration``
(section ``workrail``) whenever the client offers it. A bad value is logged and replaced by its
default, so a typo in an editor's settings never takes the server down.

The project's own configuration (``[tool.workrail]`` in ``pyproject.toml`` or
``.workrail/config.toml``, read by ``workrail_engine.project_config`` as ``workrail validate``
reads it) applies on top, every key as the command line applies it: its ``workflow-dirs`` (those
of the file nearest a document, and those of the file nearest each workspace folder, which the
workspace index scans even outside the workspace) hold workflows too; its
``select``/``ignore``/``per-file-ignores`` decide which diagnostics a document shows; with
``strict``, warnings fail `workrail validate`, so the editor shows them as errors. The file is
read again whenever it changes (``project_config`` keys its cache on the file's mtime and size):
each look-up of a document compares the configuration that applies to it now with the one its
state was built under (:meth:`Settings.config_of`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.text.workflow_files import is_workflow_path, names_workrail_schema

if TYPE_CHECKING:  # the server answers `initialize` before loading the engine's models
    from workrail_engine.diagnostics import Diagnostic
    from workrail_engine.project_config import ProjectConfig

# The server's commands (workspace/executeCommand): named here, where the server's start-up
# reads them without importing the features behind them.
VALIDATE_WORKSPACE = "workrail.server.validateWorkspace"
IS_WORKFLOW = "workrail.server.isWorkflow"
"""Arguments ``(uri, text)``; answers whether the server treats that document as a workflow."""
PREVIEW_STEPS = "workrail.server.previewSteps"
FIX_ALL_KIND = "source.fixAll.workrail"
"""The code action kind of "fix every safe problem" (what ``workrail validate --fix`` does)."""
# Semantic token types, by index: a ``{{ }}`` reference's namespace, then its name.
SEMANTIC_TOKEN_TYPES = ["namespace", "variable"]

__all__ = [
    "DEFAULT_GLOBS",
    "SECTION",
    "Settings",
    "glob_pattern",
    "project_config",
    "reported",
    "selected",
]

log = logging.getLogger(__name__)

SECTION = "workrail"
DEFAULT_GLOBS = (
    "**/*.workflow.json",
    "**/*.workflow.yaml",
    "**/*.workflow.yml",
    "**/workflows/**/*.json",
    "**/workflows/**/*.yaml",
    "**/workflows/**/*.yml",
)


@dataclass(frozen=True)
class Settings:
    workflow_globs: tuple[str, ...] = DEFAULT_GLOBS
    """Glob patterns (``**`` crosses folders) of files treated as workflows."""

    extra_workflow_dirs: tuple[str, ...] = field(default_factory=tuple)
    """More folders whose JSON/YAML files are workflows (also scanned for duplicate ids)."""

    project_roots: tuple[str, ...] = field(default_factory=tuple)
    """The workspace folders (set by the server, not the client): the project configuration
    nearest each one adds its ``workflow-dirs``."""

    @classmethod
    def from_client(cls, raw: Any, base: Settings | None = None) -> Settings:
        """Read ``{"workflowGlobs": [...], "extraWorkflowDirs": [...]}`` (optionally under ``workrail``)."""
        base = base or cls()
        if not isinstance(raw, dict):
            return base
        if isinstance(raw.get(SECTION), dict):
            raw = raw[SECTION]
        globs = _strings(raw, "workflowGlobs", base.workflow_globs)
        dirs = _strings(raw, "extraWorkflowDirs", base.extra_workflow_dirs)
        return dataclasses.replace(
            base,
            workflow_globs=globs,
            extra_workflow_dirs=tuple(os.path.expanduser(d) for d in dirs),
        )

    def with_roots(self, roots: list[Path]) -> Settings:
        return dataclasses.replace(self, project_roots=tuple(str(r) for r in roots))

    def workflow_dirs(self) -> list[str]:
        """The client's extra folders, then the project configuration's (read now)."""
        configured = (str(d) for r in self.project_roots for d in project_config(r).workflow_dirs)
        return list(dict.fromkeys([*self.extra_workflow_dirs, *configured]))

    def frozen(self) -> Settings:
        """These settings with the project configuration's folders read once, for a walk that
        asks about thousands of files."""
        return dataclasses.replace(
            self, extra_workflow_dirs=tuple(self.workflow_dirs()), project_roots=()
        )

    def config_of(self, path: str | None) -> tuple[ProjectConfig, ...]:
        """Every project configuration a document's state depends on, as it is now: the one
        nearest the document and the workspace folders' (their ``workflow-dirs``)."""
        return tuple(project_config(p) for p in (path, *self.project_roots))

    def is_workflow(self, path: str | None, text: str) -> bool:
        """Whether a document is a workflow: by its path, its folder, or its ``$schema``.

        With the default globs this is the rule ``workrail validate`` and the pre-commit hook use
        (``workrail_engine.text.workflow_files``; GitHub Actions' ``.github/workflows`` excluded)."""
        if path is not None:
            posix = Path(path).as_posix()
            if self.workflow_globs == DEFAULT_GLOBS:
                if is_workflow_path(posix):
                    return True
            elif any(glob_pattern(g).search(posix) for g in self.workflow_globs):
                return True
            if path.endswith((".json", ".yaml", ".yml")) and (
                any(_inside(path, d) for d in self.workflow_dirs())
                or project_config(path).contains_workflow(path)
            ):
                return True
        return names_workrail_schema(text)


def project_config(path: str | None) -> ProjectConfig:
    """The project configuration that applies to a document (the defaults when it has no path, or
    the file is broken: logged, as a bad editor setting is)."""
    from workrail_engine.project_config import ConfigError, ProjectConfig, find_config

    if path is None:
        return ProjectConfig()
    try:
        return find_config(path)
    except ConfigError as error:
        # find_config keeps a broken file's error until the file changes: said once, not at
        # every request that looks the configuration up.
        if error not in _LOGGED_CONFIG_ERRORS:
            _LOGGED_CONFIG_ERRORS.add(error)
            log.warning("ignoring the project configuration: %s", error)
        return ProjectConfig()


_LOGGED_CONFIG_ERRORS: weakref.WeakSet[Exception] = weakref.WeakSet()


def selected(diagnostics: list[Diagnostic], path: str | None) -> list[Diagnostic]:
    """The diagnostics the project's select/ignore/per-file-ignores keep for ``path``."""
    if path is None:
        return diagnostics
    selection = project_config(path).selection_for(path)
    return [d for d in diagnostics if selection.enabled(d.code)]


def reported(diagnostics: list[Diagnostic], path: str | None) -> list[Diagnostic]:
    """What the editor shows for ``path``: the :func:`selected` diagnostics, and under
    ``strict`` its warnings as errors (they fail `workrail validate` as errors do)."""
    kept = selected(diagnostics, path)
    if path is None or not project_config(path).strict:
        return kept
    from workrail_engine.diagnostics import Severity

    return [
        dataclasses.replace(d, severity=Severity.ERROR) if d.severity is Severity.WARNING else d
        for d in kept
    ]


def _inside(path: str, directory: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(directory).resolve())
    except OSError:
        return False


def _strings(raw: dict[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    log.warning(
        "setting %s.%s must be a list of strings, got %r; using %r", SECTION, key, value, default
    )
    return default


@lru_cache(maxsize=256)
def glob_pattern(glob: str) -> re.Pattern[str]:
    """A regex matching paths that end with ``glob``: ``**`` spans folders, ``*`` and ``?`` do not."""
    out = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    body = "".join(out)
    # A relative glob matches at any folder boundary of an absolute path.
    prefix = "" if glob.startswith("/") else "(?:^|/)"
    return re.compile(prefix + body + "$")
