"""Check: does `workrail validate` print exactly what it printed before a change?

    .venv/bin/python bench/validate_outputs.py --before REV --mirror DIR [--after REV] [--keep DIR]

A speed change to the parsing, checking or reporting path must not change one byte of what
`workrail validate` reports. This runs the command from two versions of the project — ``--before``
(a git revision) and ``--after`` (a git revision, or by default this working tree), each from its
own bytecode — over the same inputs, and compares standard output, standard error and the exit
code of every run:

- the 1,000 files `bench/validate.py` generates (its seed), as one directory, in every format
  (text, json, sarif, github); the same with ``--distinct`` (no step shared between files); and
  its ~1 MB workflow (text, json);
- every JSON file `bench/upstream_compat.py` extracts from the four upstream releases (accepted by
  upstream or not): each release's `workflows/` and `spec/examples/` files as two runs (text,
  json), and each file alone (json);
- every JSON and YAML file under this tree's `tests/` and `workflows/`, each alone (text, json),
  and `workflows/` as one directory (json).

Runs use an empty project directory and an empty WORKRAIL_HOME. Prints how many runs agreed and
the first differences; exit status 1 when any run differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import upstream_compat  # noqa: E402
import validate as validate_bench  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("text", "json", "sarif", "github")
RUN = "import sys; from workrail_engine.cli import main; sys.exit(main())"

Case = tuple[str, list[str]]  # (label, arguments after `workrail`)
Outcome = tuple[int, str, str]  # exit code, stdout, stderr


def _tree(revision: str | None, into: Path) -> Path:
    """The project's source at ``revision`` (None: this working tree), compiled to bytecode."""
    if revision is None:
        tree = ROOT
    else:
        tree = into / revision.replace("/", "_")
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", revision, "workrail_engine", "workflows"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "workrail_engine")], check=True
    )
    return tree


def _inputs(work: Path, mirror: Path) -> list[Case]:
    cases: list[Case] = []
    corpus = work / "corpus"
    corpus.mkdir()
    validate_bench.generate(corpus, 1000)
    cases += [(f"bench corpus, {fmt}", [str(corpus), "--format", fmt]) for fmt in FORMATS]
    distinct = work / "distinct"
    distinct.mkdir()
    validate_bench.generate(distinct, 1000, distinct=True)
    cases += [(f"bench --distinct, {fmt}", [str(distinct), "--format", fmt]) for fmt in FORMATS]
    big = work / "big" / "big-workflow.json"
    big.parent.mkdir()
    validate_bench.big_workflow(big)
    cases += [(f"1 MB workflow, {fmt}", [str(big), "--format", fmt]) for fmt in FORMATS[:2]]

    for release in upstream_compat.RELEASES:
        tree = work / "upstream" / release.label
        files = upstream_compat.extract(mirror, release, tree)
        served = [str(p) for p in files if p.is_relative_to(tree / "workflows")]
        examples = [str(p) for p in files if not p.is_relative_to(tree / "workflows")]
        for group, paths in (("workflows", served), ("spec/examples", examples)):
            if paths:
                cases += [
                    (f"upstream {release.label} {group}, {fmt}", ["--format", fmt, *paths])
                    for fmt in FORMATS[:2]
                ]
        cases += [(f"upstream file {p}", [str(p), "--format", "json"]) for p in files]

    fixtures = work / "fixtures"
    for folder in ("tests", "workflows"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".json", ".yaml", ".yml") and "__pycache__" not in path.parts:
                copy = fixtures / path.relative_to(ROOT)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
                cases += [
                    (f"fixture {path.relative_to(ROOT)}, {fmt}", [str(copy), "--format", fmt])
                    for fmt in FORMATS[:2]
                ]
    cases.append(("workflows/ as a directory", [str(fixtures / "workflows"), "--format", "json"]))
    return cases


def _run(tree: Path, arguments: list[str], work: Path) -> Outcome:
    env = {**os.environ, "PYTHONPATH": str(tree), "WORKRAIL_HOME": str(work / "home")}
    env.pop("WORKRAIL_WORKFLOW_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", RUN, "validate", *arguments],
        capture_output=True,
        text=True,
        env=env,
        cwd=work / "project",
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _first_difference(a: str, b: str) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"at character {at}: before {a[at : at + 80]!r} / after {b[at : at + 80]!r}"


def compare(before: Path, after: Path, cases: list[Case], work: Path) -> list[str]:
    def both(case: Case) -> tuple[str, Outcome, Outcome]:
        label, arguments = case
        return label, _run(before, arguments, work), _run(after, arguments, work)

    problems = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for label, old, new in pool.map(both, cases):
            for name, x, y in zip(("exit code", "stdout", "stderr"), old, new, strict=True):
                if x != y:
                    detail = _first_difference(x, y) if isinstance(x, str) else f"{x} → {y}"
                    problems.append(f"{label}: {name} differs {detail}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision to compare against")
    parser.add_argument("--after", help="git revision (default: this working tree)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument(
        "--mirror", type=Path, required=True, help="a git clone --mirror of upstream WorkRail"
    )
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="validate-outputs-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        (work / "project").mkdir()
        (work / "home").mkdir()
        before = _tree(args.before, work / "trees")
        after = _tree(args.after, work / "trees")
        cases = _inputs(work, args.mirror)
        problems = compare(before, after, cases, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"{len(cases)} runs of `workrail validate`, {args.before} vs {args.after or 'this tree'}:"
    )
    if problems:
        print(f"{len(problems)} DIFFERENCES:")
        print("\n".join(f"  {p}" for p in problems[:40]))
        return 1
    print("every run gave the same exit code, standard output and standard error.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
