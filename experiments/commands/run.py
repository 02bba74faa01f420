"""`diarylab run DESIGN`, `diarylab status DIR`, `diarylab export DIR`."""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.design import load_design
from experiments.runfolder import read_locked_sha, read_manifest
from experiments.store import Store
from foundation.errors import LabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a design into a run folder (re-running resumes)")
    p.add_argument("design")
    p.add_argument("--out", help="run folder (default: results/<name>-<hash>)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(handler=run_run)
    s = sub.add_parser("status", help="what a run folder holds")
    s.add_argument("dir")
    s.set_defaults(handler=run_status)
    e = sub.add_parser("export", help="export a run's tables to Parquet")
    e.add_argument("dir")
    e.add_argument("--to", help="output folder (default: DIR/export)")
    e.set_defaults(handler=run_export)


def run_run(args: argparse.Namespace) -> int:
    from experiments.runner import run_design  # loads torch and models: only when running

    design = load_design(args.design)
    summary = run_design(
        design, Path(args.out) if args.out else None, progress=not args.no_progress
    )
    print(f"run folder: {summary.folder}")
    print(summary.line())
    return 0


def _open(folder: Path) -> Store:
    read_locked_sha(folder)
    path = folder / "store.sqlite"
    if not path.exists():
        raise LabError(
            "run folder has no store.sqlite", where=str(folder), fix="run the design first"
        )
    return Store(path)


def run_status(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    store = _open(folder)
    manifest = read_manifest(folder)
    design = manifest.get("design", {})
    print(f"{folder}: design {design.get('name')} sha256 {read_locked_sha(folder)[:12]}…")
    tables = [t for t in store.tables() if t != "meta"]
    for table in tables:
        print(f"  {table:10s} {store.count(table)}")
    flags: dict[str, int] = {}
    for table in tables:
        columns = {r[1] for r in store.db.execute(f"PRAGMA table_info({table})")}
        if "flag" in columns:
            for flag, n in store.db.execute(
                f"SELECT flag, COUNT(*) FROM {table} WHERE flag IS NOT NULL GROUP BY flag"
            ):
                flags[f"{table}:{flag}"] = n
    unreadable = store.db.execute("SELECT COUNT(*) FROM judgments WHERE readable=0").fetchone()[0]
    print(f"  flagged {flags or 0} · unreadable judgments {unreadable}")
    store.close()
    return 0


def run_export(args: argparse.Namespace) -> int:
    from experiments.export import export_tables

    folder = Path(args.dir)
    store = _open(folder)
    try:
        written = export_tables(store, Path(args.to) if args.to else folder / "export")
    finally:
        store.close()
    for path in written:
        print(path)
    return 0
