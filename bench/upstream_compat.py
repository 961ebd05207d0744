"""Measure: do the workflow files upstream WorkRail accepts pass here?

    .venv/bin/python bench/upstream_compat.py --mirror DIR [--verbose] [--findings] [--keep DIR]

(DIR: `git clone --mirror https://github.com/EtienneBBeaulac/workrail`.)

For each of four upstream releases (0.0.3, 0.0.17, 0.8.6, 3.121.0) this extracts, from the local
bare mirror of `EtienneBBeaulac/workrail`, every JSON file under that release's `workflows/`
(subfolders included: routines, examples) and `spec/examples/` into a temporary directory, checks
each against THAT release's own `spec/workflow.schema.json` (draft-07, the `jsonschema` library)
to learn which ones upstream accepts, and then:

- runs `workrail validate --format json` on the accepted files (those of `workflows/` and those
  of `spec/examples/` in two runs, since upstream keeps copies of some workflows in both): a file
  passes with no error (warnings and hints allowed);
- runs `workrail --workflows DIR list --format json` on the extracted `workflows/` folder: every
  accepted file there, except under `examples/` (examples are not served, as upstream does), must
  be listed (its path appears in the listing).

Prints the figures per release and, with --verbose, each failing file with its first errors;
with --findings, how many findings of each code (every severity) the accepted files get, and
each finding of the dataflow and shell checks (WR207, WR307–WR309, WR410, WR411, WR502–WR504)
with its file and message.
Nothing is written into this repository: upstream files live only in the temporary directory
(kept with --keep DIR). Needs the `test` extra (`jsonschema`). Exit status 1 when some accepted
file fails either check. Results: docs/compatibility.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKRAIL = BIN / "workrail"


@dataclass(frozen=True)
class Release:
    label: str
    revision: str  # commit or tag in the mirror
    folder: str  # the folder holding spec/ and workflows/ ("" = repository root)


RELEASES = (
    Release("0.0.3", "395014e7", "workflow-orchestration"),
    Release("0.0.17", "8d57fd28", "workflow-orchestration"),
    Release("0.8.6", "v0.8.6", "packages/workrail"),
    Release("3.121.0", "v3.121.0", ""),
)


@dataclass
class ReleaseResult:
    release: Release
    files: int = 0
    accepted: list[Path] = field(default_factory=list)
    failing: dict[Path, list[str]] = field(default_factory=dict)
    to_list: list[Path] = field(default_factory=list)
    unlisted: list[Path] = field(default_factory=list)
    findings: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)  # every severity


# The flow and context checks whose noise on upstream's files --findings lists one by one.
FLOW_CODES = ("WR207", "WR307", "WR308", "WR309", "WR410", "WR411", "WR502", "WR503", "WR504")


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True).stdout


def extract(mirror: Path, release: Release, into: Path) -> list[Path]:
    """Write the release's workflow and example files under ``into``; returns their paths."""
    prefix = f"{release.folder}/" if release.folder else ""
    names = (
        _git(
            mirror,
            "ls-tree",
            "-r",
            "--name-only",
            release.revision,
            "--",
            f"{prefix}workflows",
            f"{prefix}spec/examples",
        )
        .decode()
        .splitlines()
    )
    written = []
    for name in names:
        if not name.endswith(".json"):
            continue
        target = into / name[len(prefix) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(mirror, "show", f"{release.revision}:{name}"))
        written.append(target)
    return sorted(written)


def upstream_accepts(mirror: Path, release: Release, files: list[Path]) -> list[Path]:
    """The files the release's own schema (draft-07) accepts."""
    prefix = f"{release.folder}/" if release.folder else ""
    schema = json.loads(
        _git(mirror, "show", f"{release.revision}:{prefix}spec/workflow.schema.json")
    )
    validator = jsonschema.Draft7Validator(schema)
    accepted = []
    for path in files:
        try:
            instance = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if validator.is_valid(instance):
            accepted.append(path)
    return accepted


def _isolated_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["WORKRAIL_HOME"] = str(home)
    env.pop("WORKRAIL_WORKFLOW_PATH", None)
    return env


def validate(
    files: list[Path], env: dict[str, str], cwd: Path, findings: list[tuple[Path, dict[str, Any]]]
) -> dict[Path, list[str]]:
    """Errors per file reported by `workrail validate` (files with none are left out); every
    diagnostic, whatever its severity, is appended to ``findings``."""
    if not files:
        return {}
    proc = subprocess.run(
        [str(WORKRAIL), "validate", "--format", "json", *map(str, files)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    report = json.loads(proc.stdout)
    errors: dict[Path, list[str]] = {}
    for entry in report["files"]:
        findings.extend((Path(entry["path"]), d) for d in entry["diagnostics"])
        found = [
            f"{d['code']} {d.get('pointer', '')}: {d['message']}"
            for d in entry["diagnostics"]
            if d["severity"] == "error"
        ]
        if found:
            errors[Path(entry["path"])] = found
    return errors


def listed_paths(workflows_dir: Path, env: dict[str, str], cwd: Path) -> set[Path]:
    proc = subprocess.run(
        [str(WORKRAIL), "--workflows", str(workflows_dir), "list", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    return {Path(entry["path"]).resolve() for entry in json.loads(proc.stdout)}


def measure(mirror: Path, release: Release, work: Path) -> ReleaseResult:
    result = ReleaseResult(release)
    tree = work / release.label
    files = extract(mirror, release, tree)
    result.files = len(files)
    result.accepted = upstream_accepts(mirror, release, files)
    empty_project = work / "empty-project"
    empty_project.mkdir(exist_ok=True)
    env = _isolated_env(work / "empty-home")
    workflows_dir = tree / "workflows"
    # workflows/ and spec/examples/ are checked apart: upstream keeps copies of the same
    # workflow in both, which one run would rightly report as a duplicate id (WR603).
    served = [p for p in result.accepted if p.is_relative_to(workflows_dir)]
    examples = [p for p in result.accepted if not p.is_relative_to(workflows_dir)]
    result.failing = validate(served, env, empty_project, result.findings) | validate(
        examples, env, empty_project, result.findings
    )
    result.to_list = [
        p
        for p in result.accepted
        if p.is_relative_to(workflows_dir) and "examples" not in p.relative_to(workflows_dir).parts
    ]
    listed = listed_paths(workflows_dir, env, empty_project)
    result.unlisted = [p for p in result.to_list if p.resolve() not in listed]
    return result


def _print(results: list[ReleaseResult], verbose: bool) -> None:
    print(f"{'release':<9} {'files':>5} {'upstream ok':>11} {'validate ok':>11} {'listed':>9}")
    for r in results:
        passed = len(r.accepted) - len(r.failing)
        listed = len(r.to_list) - len(r.unlisted)
        print(
            f"{r.release.label:<9} {r.files:>5} {len(r.accepted):>11} "
            f"{f'{passed}/{len(r.accepted)}':>11} {f'{listed}/{len(r.to_list)}':>9}"
        )
    if not verbose:
        return
    for r in results:
        for path, errors in sorted(r.failing.items()):
            print(f"\n[{r.release.label}] {path.name} ({path.parent.name}/): {len(errors)} errors")
            for line in errors[:5]:
                print(f"    {line}")
        for path in r.unlisted:
            print(f"\n[{r.release.label}] not listed: {path}")


def _print_findings(results: list[ReleaseResult]) -> None:
    """Findings per code over every release's accepted files, then each flow finding."""
    counts: dict[str, int] = {}
    for r in results:
        for _, d in r.findings:
            key = f"{d['code']} {d['severity']}"
            counts[key] = counts.get(key, 0) + 1
    print(f"\nfindings on the {sum(len(r.accepted) for r in results)} accepted files:")
    for key, count in sorted(counts.items()):
        print(f"  {key:<16} {count:>4}")
    for r in results:
        for path, d in r.findings:
            if d["code"] in FLOW_CODES:
                where = f"{path.parent.name}/{path.name}"
                print(
                    f"[{r.release.label}] {where} {d['code']} {d.get('pointer', '')}: {d['message']}"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirror", type=Path, required=True, help="a git clone --mirror of upstream WorkRail"
    )
    parser.add_argument("--verbose", action="store_true", help="print each failing file")
    parser.add_argument("--keep", type=Path, help="extract into DIR and keep it")
    parser.add_argument(
        "--findings", action="store_true", help="count every finding by code; list flow findings"
    )
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = [measure(args.mirror, r, args.keep) for r in RELEASES]
    else:
        with tempfile.TemporaryDirectory(prefix="upstream-compat-") as work:
            results = [measure(args.mirror, r, Path(work)) for r in RELEASES]
    _print(results, args.verbose)
    if args.findings:
        _print_findings(results)
    return 0 if all(not r.failing and not r.unlisted for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
