"""`diarylab run DESIGN`, `diarylab status DIR`, `diarylab export DIR`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from diarylab.experiments.analysis.plan_vs_run import plan_vs_run
from diarylab.experiments.designs.opening import load_design, open_run_folder, resumes
from diarylab.experiments.engine.executor import ExecutorSettings
from diarylab.experiments.engine.runfolder import refuse_under_a_file
from diarylab.foundation.errors import LabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a design into a run folder (re-running resumes)")
    p.add_argument("design", help="the design TOML to run (or resume)")
    p.add_argument("--out", help="run folder (default: results/<name>-<hash>)")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (the phases still print one line each as they finish)",
    )
    p.add_argument(
        "--grader-template",
        help="benchmark designs: grade with this template file exactly (.txt with "
        "<<conversation>> and <<rubric_item>>, or .toml); its sha256 goes into the manifest",
    )
    ray = p.add_argument_group(
        "where local model calls run (a run option: the design and the store stay the same)"
    )
    ray.add_argument(
        "--executor",
        choices=["inprocess", "ray"],
        default="inprocess",
        help="ray: batches of local writing, chatbot and judge calls go to Ray actors",
    )
    ray.add_argument("--address", help='Ray cluster to join (e.g. "auto"); default: start one')
    ray.add_argument("--actors", type=int, help="Ray actors (default: one per GPU, or 2)")
    ray.add_argument("--actor-gpus", type=float, help="GPUs per actor (default: 1 if any)")
    p.set_defaults(handler=run_run)
    s = sub.add_parser("status", help="what a run folder holds")
    s.add_argument("dir", help="a run folder")
    s.add_argument(
        "--verify",
        action="store_true",
        help="full check: SQLite integrity check of the store, every input's copy unchanged",
    )
    s.add_argument("--json", action="store_true", help="one JSON object, for machines")
    s.set_defaults(handler=run_status)
    e = sub.add_parser("export", help="export a run's tables to Parquet")
    e.add_argument("dir", help="a run folder")
    e.add_argument("--to", help="output folder (default: DIR/export)")
    e.set_defaults(handler=run_export)


def run_run(args: argparse.Namespace) -> int:
    from diarylab.experiments.running.runner import (
        run_design,  # loads torch and models: only when running
    )

    executor = executor_settings(args)  # a wrong option is refused before anything loads
    out = Path(args.out) if args.out else None
    design = load_design(args.design, locked=resumes(Path(args.design), out))
    if args.grader_template:
        from diarylab.experiments.engine.contract import GraderTemplateSupport

        if not isinstance(design.kind, GraderTemplateSupport):
            raise LabError(
                f"a {design.kind.name} design has no grader template",
                where="--grader-template",
                fix="use it with benchmark designs only",
            )
        design = design.kind.with_grader_template(design, Path(args.grader_template))
    summary = run_design(
        design,
        Path(args.out) if args.out else None,
        progress=not args.no_progress,
        executor=executor,
    )
    print(f"run folder: {summary.folder}")
    print(summary.line())
    return 0


def executor_settings(args: argparse.Namespace) -> ExecutorSettings:
    """--executor and its options as one settings object; Ray's options without Ray refused."""
    given = {
        "address": args.address,
        "actors": args.actors,
        "actor_gpus": args.actor_gpus,
    }
    if args.executor != "ray":
        stray = [f"--{k.replace('_', '-')}" for k, v in given.items() if v is not None]
        if stray:
            raise LabError(
                f"{', '.join(stray)} only apply to the Ray executor",
                where="diarylab run",
                fix="add --executor ray, or leave them out",
            )
        return ExecutorSettings()
    try:
        return ExecutorSettings(kind="ray", **{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "--" + str(first["loc"][0]).replace("_", "-")
        raise LabError(
            f"{first['msg']} (got {first.get('input')!r})",
            where=name,
            fix="--actors at least 1, --actor-gpus 0 or more",
        ) from None


def run_status(args: argparse.Namespace) -> int:
    from diarylab.experiments.engine.progress import read_progress
    from diarylab.experiments.engine.runlock import is_held
    from diarylab.experiments.rating.report_lines import rating_status, rating_status_line

    run = open_run_folder(Path(args.dir), verify=args.verify)
    store = run.store
    try:
        tables = [t for t in store.tables() if t != "meta"]
        rows = {table: store.count(table) for table in tables}
        flags: dict[str, int] = {}
        for table in tables:
            for flag, n in store.flag_counts(table).items():
                flags[f"{table}:{flag}"] = n
        unreadable = store.count("judgments", where={"readable": 0})
        state, lines = run_state(read_progress(run.folder), is_held(run.folder))
        asks = store.judge_asks()
        from diarylab.experiments.analysis.usage import usage_table

        usage = usage_table(store, run.folder)
        rating = rating_status(run.folder, store)
    finally:
        store.close()
    if args.json:
        print(json.dumps({
            "folder": str(run.folder), "design": run.design.name,
            "design_sha256": run.design.sha256, "state": state,
            "progress": read_progress(run.folder), "rows": rows, "flags": flags,
            "unreadable_judgments": unreadable, "integrity": run.integrity,
            "judge_asks": [asdict(a) for a in asks], "rating": rating,
        }, indent=1))  # fmt: skip
        return 0
    print(f"{run.folder}: design {run.design.name} sha256 {run.design.sha256[:12]}…")
    for line in lines:
        print(f"  {line}")
    for table, n in rows.items():
        print(f"  {table:10s} {n}")
    print(f"  flagged {flags or 0} · unreadable judgments {unreadable}")
    print(f"  {run.integrity}; {_inputs_line(run.folder)}")
    for line in plan_vs_run(run.folder, asks, usage, times=True):
        print(f"  {line}")
    if rating is not None:
        print(f"  {rating_status_line(rating)}")
    return 0


def run_state(progress: dict[str, Any] | None, held: bool) -> tuple[str, list[str]]:
    """complete / in progress / interrupted, and one line per phase with what is left."""
    if held:
        state = "in progress"
    elif progress is None:
        return "unknown", ["state: not recorded (the run predates progress.json)"]
    else:
        state = "complete" if progress.get("state") == "complete" else "interrupted"
    lines = [f"state: {state}" + (
        " — `diarylab run DESIGN --out FOLDER` resumes it" if state == "interrupted" else ""
    )]  # fmt: skip
    for phase in (progress or {}).get("phases", []):
        done, planned = int(phase["done"]), int(phase["planned"])
        left = "" if state == "complete" else f", {max(planned - done, 0)} left"
        unneeded = (
            f", {planned - done} planned steps not needed"
            if state == "complete" and done < planned else ""
        )  # fmt: skip
        lines.append(
            f"{phase['name']}: {done} of {planned} steps ({phase['stored_before']} read from "
            f"the store){left}{unneeded}"
        )
    if progress is not None:
        lines.append(
            f"model calls made {progress.get('calls_made', 0)}, read from the store "
            f"{progress.get('read_from_the_store', 0)} (the latest run)"
        )
    return state, lines


def _inputs_line(folder: Path) -> str:
    """What was checked (the folder's copies, or the sources of a folder made before copies),
    and which sources now differ: a resume here would refuse them, a report reads the copies."""
    from diarylab.experiments.engine.inputs import changed_sources, holds_copies

    if not holds_copies(folder):
        return "design and every locked input unchanged (read where they were made)"
    changed = changed_sources(folder)
    line = "design and the folder's copy of every input unchanged"
    if changed:
        line += (
            f"; {len(changed)} source(s) changed or gone since the run ({', '.join(changed[:3])}"
            f"{' …' if len(changed) > 3 else ''}): a resume here refuses, reports read the copies"
        )
    return line


def run_export(args: argparse.Namespace) -> int:
    from diarylab.experiments.engine.export import export_tables
    from diarylab.experiments.frames.reader import open_run

    folder = Path(args.dir)
    target = Path(args.to) if args.to else folder / "export"
    if folder.is_dir() and (folder / "design.sha256").is_file():
        # The target is checked before the store is opened (opening it touches the folder);
        # what is not a run folder at all is said first, by open_run_folder.
        if target.exists() and not target.is_dir():
            raise LabError(
                "--to is a file", where=str(target), fix="name a folder (new or existing)"
            )
        refuse_under_a_file(target, "--to")
    # The typed frames (experiments/frames/reader.py, docs/results-columns.md) at the top; the
    # store's own tables, as stored, under tables/.
    with open_run(folder) as results:
        written = results.export(target) + export_tables(results.store, target / "tables")
    for path in written:
        print(path)
    return 0
