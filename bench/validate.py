"""Benchmark: `workrail validate` against `check-jsonschema` on the same workflow files.

    .venv/bin/python bench/validate.py [--files 1000] [--runs 5] [--keep DIR] [--distinct]

Generates FILES workflow files in a temporary directory (most valid, the rest with schema
errors, semantic errors only `workrail` can see, or broken syntax; a fifth of them YAML), then
times both tools as whole processes, several runs each, alternating:

    workrail validate DIR --format json
    check-jsonschema --schemafile workrail_engine/schema/workflow.schema.json -o json FILES...

(`workrail validate` shares the files with a forked worker per further CPU it may use, from 300
files; check-jsonschema uses one process) and prints the median times (wall clock, and CPU time
of each tool's processes, workers included: the machine may be shared) and their ratios, each
round's ratio (the two tools run one after the other) and the median of those rounds, with the
load average at the start and the end. Both run from bytecode, as installed packages do: pip
wrote check-jsonschema's `.pyc` files when it installed it, and this compiles ours first (an editable install has none, and
PYTHONDONTWRITEBYTECODE, set on some machines, keeps Python from writing them: each `workrail`
process would compile the engine from source, ~0.1 s of CPU). It then checks that both tools
report schema errors in the same files at the same instance paths (and the same files as
unparsable), and that every planted semantic error was found. Last, it times both on one ~1 MB workflow of ~2,800 steps.
Needs the `bench` extra (check-jsonschema). Exit status 1 when the reports disagree.

The files are the bundled workflows copied many times, so most steps appear in many files, and
`workrail validate` checks a step met before in the same batch once (by its content). With
``--distinct`` every prompt in every file is made unique, so no step is met twice: what a batch
of unrelated workflows costs.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workrail_engine" / "schema" / "workflow.schema.json"
BIN = Path(sys.executable).parent
WORKRAIL = BIN / "workrail"
CHECK_JSONSCHEMA = BIN / "check-jsonschema"

Paths = dict[str, set[str]]


# ---- generating the files -------------------------------------------------------------------


def seeds() -> list[dict[str, Any]]:
    """The bundled workflows: realistic content of every step kind."""
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "workflows").glob("*.json"))
    ]


def _prompt_step(doc: dict[str, Any]) -> int:
    """Index of a top-level prompt step, adding one when the workflow has none."""
    for i, step in enumerate(doc["steps"]):
        if "prompt" in step and step.get("type", "prompt") == "prompt":
            return i
    doc["steps"].insert(0, {"id": "orient", "title": "Orient", "prompt": "Read the task first."})
    return 0


def _schema_mutation(doc: dict[str, Any], rng: random.Random) -> set[str]:
    """Break ``doc`` so that the schema fails at one known place; returns the instance paths."""
    kind = rng.choice(
        ["name-type", "missing-title", "unknown-key", "bad-id", "no-steps", "flag-type"]
    )
    if kind == "name-type":
        doc["name"] = 42
        return {"/name"}
    if kind == "unknown-key":
        doc["versoin"] = doc.pop("version", "1.0.0")
        return {""}
    if kind == "bad-id":
        doc["id"] = "Bad_Id_" + doc["id"]
        return {"/id"}
    if kind == "no-steps":
        doc["steps"] = []
        return {"/steps"}
    index = _prompt_step(doc)
    if kind == "missing-title":
        del doc["steps"][index]["title"]
        return {f"/steps/{index}"}
    doc["steps"][index]["askForFiles"] = "yes"
    return {f"/steps/{index}/askForFiles"}


def _semantic_mutation(doc: dict[str, Any], rng: random.Random) -> str:
    """Plant an error the schema cannot express; returns the code range it must produce."""
    index = _prompt_step(doc)
    if rng.random() < 0.5:
        doc["steps"][index]["prompt"] += " Use {{steps.no-such-step.output}}."
        return "WR3"
    other = next(i for i, s in enumerate(doc["steps"]) if i != index)
    doc["steps"][other]["id"] = doc["steps"][index]["id"]
    return "WR2"


def _distinct_prompts(value: Any, mark: str) -> None:
    """Append ``mark`` to every prompt in ``value`` (steps nested in loops and groups too)."""
    if isinstance(value, dict):
        if isinstance(value.get("prompt"), str):
            value["prompt"] += mark
        for child in value.values():
            _distinct_prompts(child, mark)
    elif isinstance(value, list):
        for child in value:
            _distinct_prompts(child, mark)


def generate(directory: Path, count: int, seed: int = 7, distinct: bool = False) -> dict[str, Any]:
    """Write ``count`` files; returns what was planted where (the expected findings).
    ``distinct``: no two files share a step (each file's prompts end with its number)."""
    rng = random.Random(seed)
    base = seeds()
    planted: dict[str, Any] = {"schema": {}, "semantic": {}, "syntax": set()}
    for n in range(count):
        doc = copy.deepcopy(base[n % len(base)])
        doc["id"] = f"{doc['id']}-{n:04d}"
        if distinct:
            _distinct_prompts(doc["steps"], f" (file {n})")
        as_yaml = rng.random() < 0.2
        name = f"{doc['id']}.{'yaml' if as_yaml else 'json'}"
        roll = rng.random()
        if roll < 0.18:
            planted["schema"][name] = _schema_mutation(doc, rng)
        elif roll < 0.26:
            planted["semantic"][name] = _semantic_mutation(doc, rng)
        if as_yaml:
            text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        else:
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        if (
            0.26 <= roll < 0.30 and not as_yaml
        ):  # half a YAML file may still parse; half a JSON never
            text = text[: len(text) // 2]
            planted["syntax"].add(name)
        (directory / name).write_text(text, encoding="utf-8")
    return planted


def big_workflow(path: Path, steps: int = 2800) -> int:
    """One workflow of ``steps`` prompt steps, about 1 MB; returns its size in bytes."""
    prompt = (
        "Review the change set carefully and write down what it does, what could break and why. "
        * 3
    )
    doc = {
        "id": path.stem,
        "name": "A very long workflow",
        "version": "1.0.0",
        "steps": [
            {
                "id": f"step-{i:04d}",
                "title": f"Step number {i}",
                "prompt": prompt,
                "requireConfirmation": i % 7 == 0,
            }
            for i in range(steps)
        ],
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path.stat().st_size


# ---- running and timing ---------------------------------------------------------------------


def workrail_command(target: Path) -> list[str]:
    return [str(WORKRAIL), "validate", str(target), "--format", "json"]


def check_jsonschema_command(files: list[Path]) -> list[str]:
    return [str(CHECK_JSONSCHEMA), "--schemafile", str(SCHEMA), "-o", "json", *map(str, files)]


def compile_bytecode() -> None:
    """Our modules' `.pyc` files, which an installed `workrail` has (see the module's docstring)."""
    # The test session's own step (tests/suite_bytecode.py), so both check `.pyc` files alike.
    sys.path.insert(0, str(ROOT / "tests"))
    from suite_bytecode import compile_the_packages

    compile_the_packages()


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def compare_speed(ours: list[str], theirs: list[str], runs: int) -> dict[str, Any]:
    """Median wall time of each command over ``runs`` alternating runs (after one warm-up each)."""
    timed(ours), timed(theirs)
    times: dict[str, list[float]] = {"workrail": [], "check-jsonschema": []}
    cpu: dict[str, list[float]] = {"workrail": [], "check-jsonschema": []}
    outputs = {}
    for _ in range(runs):
        for name, command in (("workrail", ours), ("check-jsonschema", theirs)):
            before = _children_cpu()
            seconds, outputs[name] = timed(command)
            cpu[name].append(_children_cpu() - before)
            times[name].append(seconds)
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    # Each round's ratio is of two runs next to each other, under the same load.
    rounds = [
        theirs / ours
        for ours, theirs in zip(times["workrail"], times["check-jsonschema"], strict=True)
    ]
    return {
        "times": times,
        "medians": medians,
        "ratio": medians["check-jsonschema"] / medians["workrail"],
        "rounds": rounds,
        "median_round": statistics.median(rounds),
        "cpu": cpu_medians,
        "cpu_ratio": cpu_medians["check-jsonschema"] / cpu_medians["workrail"],
        "outputs": outputs,
    }


def startup(runs: int, sample: Path) -> dict[str, float]:
    """Median wall time of starting processes: the interpreter alone, `workrail --help`, one file."""
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "workrail --help": [str(WORKRAIL), "--help"],
        "workrail validate ONE-FILE --format json": workrail_command(sample),
        "check-jsonschema ONE-FILE": check_jsonschema_command([sample]),
    }
    for command in commands.values():
        timed(command)
    return {
        name: statistics.median(timed(command)[0] for _ in range(runs))
        for name, command in commands.items()
    }


# ---- comparing what they report -------------------------------------------------------------

_JSON_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def json_path_to_pointer(json_path: str) -> str:
    """jsonschema's ``$.steps[0]['a b']`` → ``/steps/0/a b`` (escaped as a JSON pointer)."""
    parts = [
        m.group(1) or m.group(2) or m.group(3) for m in _JSON_PATH_PART.finditer(json_path[1:])
    ]
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def workrail_findings(output: str) -> tuple[Paths, set[str], dict[str, set[str]]]:
    """Schema-error instance paths and unparsable files per file name, and all codes per file.

    An unknown key (WR102) is reported on the key itself; the schema's instance path is the
    object that holds it, so it is compared as its parent.
    """
    schema: Paths = defaultdict(set)
    syntax: set[str] = set()
    codes: dict[str, set[str]] = defaultdict(set)
    for entry in json.loads(output)["files"]:
        name = Path(entry["path"]).name
        for d in entry["diagnostics"]:
            codes[name].add(d["code"])
            if d["code"].startswith("WR1"):
                pointer = d["pointer"].rsplit("/", 1)[0] if d["code"] == "WR102" else d["pointer"]
                schema[name].add(pointer)
            elif d["code"].startswith("WR0") and d["severity"] == "error":
                syntax.add(name)
    return dict(schema), syntax, dict(codes)


def check_jsonschema_findings(output: str) -> tuple[Paths, set[str]]:
    data = json.loads(output)
    schema: Paths = defaultdict(set)
    for error in data.get("errors", []):
        schema[Path(error["filename"]).name].add(json_path_to_pointer(error["path"]))
    syntax = {Path(e["filename"]).name for e in data.get("parse_errors", [])}
    return dict(schema), syntax


def agreement(ours: str, theirs: str, planted: dict[str, Any]) -> list[str]:
    """Every disagreement between the two reports, and every planted error either one missed."""
    our_schema, our_syntax, codes = workrail_findings(ours)
    their_schema, their_syntax = check_jsonschema_findings(theirs)
    problems = []
    for name in sorted(set(our_schema) | set(their_schema)):
        if our_schema.get(name) != their_schema.get(name):
            problems.append(
                f"{name}: workrail {sorted(our_schema.get(name, []))} "
                f"vs check-jsonschema {sorted(their_schema.get(name, []))}"
            )
    if our_syntax != their_syntax:
        problems.append(f"unparsable files differ: {sorted(our_syntax ^ their_syntax)}")
    for name, paths in planted["schema"].items():
        if not paths <= our_schema.get(name, set()):
            problems.append(f"{name}: planted schema error at {sorted(paths)} not reported")
    for name, prefix in planted["semantic"].items():
        if not any(c.startswith(prefix) for c in codes.get(name, ())):
            problems.append(f"{name}: planted {prefix}xx error not reported by workrail")
    if planted["syntax"] != our_syntax:
        problems.append(
            f"syntax errors: planted {len(planted['syntax'])}, workrail found {len(our_syntax)}"
        )
    return problems


# ---- the report -----------------------------------------------------------------------------


def _line(label: str, result: dict[str, Any]) -> str:
    m = result["medians"]
    return f"| {label} | {m['workrail']:.3f} s | {m['check-jsonschema']:.3f} s | {result['ratio']:.1f}× |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate into this directory and keep it")
    parser.add_argument(
        "--distinct", action="store_true", help="no step shared between files (see above)"
    )
    args = parser.parse_args(argv)
    for tool in (WORKRAIL, CHECK_JSONSCHEMA):
        if not tool.exists():
            parser.error(f"{tool} not found: install the project with its bench extra")

    compile_bytecode()
    load_before = os.getloadavg()
    work = args.keep or Path(tempfile.mkdtemp(prefix="workrail-bench-"))
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    try:
        planted = generate(corpus, args.files, distinct=args.distinct)
        files = sorted(corpus.iterdir())
        many = compare_speed(workrail_command(corpus), check_jsonschema_command(files), args.runs)
        problems = agreement(
            many["outputs"]["workrail"].stdout, many["outputs"]["check-jsonschema"].stdout, planted
        )
        big = work / "big-workflow.json"
        size = big_workflow(big)
        one = compare_speed(workrail_command(big), check_jsonschema_command([big]), args.runs)
        starts = startup(args.runs, ROOT / "workflows" / "coding-task.json")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    print(
        f"{args.files} files{' (no step shared between files)' if args.distinct else ''} "
        f"({len(planted['schema'])} with schema errors, {len(planted['semantic'])} with "
        f"semantic errors only, {len(planted['syntax'])} cut short); {args.runs} runs each, medians:"
    )
    print("| corpus | workrail validate | check-jsonschema | ratio |")
    print("|---|---|---|---|")
    print(_line(f"{args.files} files", many))
    print(_line(f"one {size / 1_000_000:.2f} MB workflow (2,800 steps)", one))
    for name in ("workrail", "check-jsonschema"):
        runs = ", ".join(f"{t:.3f}" for t in many["times"][name])
        print(f"{name} on {args.files} files, every run: {runs} s")
    for label, result in ((f"{args.files} files", many), ("the 1 MB workflow", one)):
        c = result["cpu"]
        print(
            f"CPU time (user+sys), medians, {label}: workrail {c['workrail']:.3f} s, "
            f"check-jsonschema {c['check-jsonschema']:.3f} s: {result['cpu_ratio']:.1f}×"
        )
    print(
        f"{args.files} files, each round's ratio (check-jsonschema / workrail, wall): "
        + ", ".join(f"{r:.1f}×" for r in many["rounds"])
        + f"; median of the {args.runs} rounds: {many['median_round']:.1f}×"
    )
    print(
        "load average (1, 5, 15 min) at the start: "
        f"{', '.join(f'{x:.1f}' for x in load_before)}; at the end: "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(
        "start-up, medians: "
        + "; ".join(f"{name}: {t * 1000:.0f} ms" for name, t in starts.items())
    )
    exit_codes = {name: out.returncode for name, out in many["outputs"].items()}
    print(f"exit codes on the {args.files} files: {exit_codes}")
    if problems:
        print(f"DISAGREEMENTS ({len(problems)}):")
        print("\n".join(f"  {p}" for p in problems[:50]))
        return 1
    print(
        "Both tools report the same schema errors (same files, same instance paths) and the same "
        "unparsable files; workrail also found every planted semantic error."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
