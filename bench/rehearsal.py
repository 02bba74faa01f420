"""Paper size on this machine: the seed studies (diary-full.toml, friends.toml) run at full size
with every model a zero-cost stand-in on the lab's real code paths (bench/rehearsal_setup.py),
so what is measured is the lab's own cost: per phase the wall time, the lab's CPU per judge
prompt, the prompts per second the client sustains, the store's size and the peak memory; then
`report`, `export` and `status` times and the HTML page's size. With --scales 1 2 4 the same at
2x and 4x the role cards, and each figure's ratio per doubling.

    .venv/bin/python bench/rehearsal.py [--studies diary friends] [--scales 1 2 4]
    .venv/bin/python bench/rehearsal.py --kills 10        # SIGKILL and resume at size

Each (study, scale) runs in a child process of its own, so its peak memory is its own. Figures
are measured in one run; the machine and date are printed with them."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.phase_clock import PhaseClock, cpu_seconds  # noqa: E402
from bench.rehearsal_kills import kills  # noqa: E402
from bench.rehearsal_report import keep, print_figures, print_growth  # noqa: E402
from bench.rehearsal_setup import (  # noqa: E402
    KEY_ENV,
    cards_folder,
    fresh_run_folder,
    measured_command,
    rehearsal_design,
    stand_ins,
)


def folder_bytes(folder: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())


def one(study: str, scale: int, work: Path, actors: int = 0, replicas: int = 1) -> dict[str, Any]:
    """One rehearsal in this process: the run (on `actors` Ray actors, or in-process; each
    judge served by `replicas` stand-in processes), then report, export and status as a user
    runs them (fresh processes)."""
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.engine.executor import ExecutorSettings
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.running.runner import run_design

    cards, ids = cards_folder(work, 8 * scale)
    os.environ["DIARYLAB_CARDS_DIR"] = str(cards)
    os.environ[KEY_ENV] = "sk-rehearsal-not-a-key"
    clock = PhaseClock()
    clock.install()
    executor = ExecutorSettings(kind="ray", actors=actors) if actors else None
    if actors:
        clock.watch_ray()
    with stand_ins(work, cards, replicas) as models:
        path = rehearsal_design(study, work, models, ids)
        suffix = (f"-ray{actors}" if actors else "") + (f"-r{replicas}" if replicas > 1 else "")
        out = fresh_run_folder(work / f"{study}-{len(ids)}-run{suffix}")
        design = load_design(path)
        clock.watch_processes(models.judge_pids)
        start = (time.perf_counter(), cpu_seconds())
        summary = run_design(design, out, progress=False, executor=executor)
        end = (time.perf_counter(), cpu_seconds())
        clock.stop()
    phases = clock.spans(start, end)
    store = Store(out / "store.sqlite")
    try:
        asks = store.judge_asks()
        calls = store.count("calls")
    finally:
        store.close()
    figures_http = plan_against_run(out, asks)
    prompts = sum(a.prompts or 0 for a in asks)
    readings = sum(a.readings for a in asks)
    judging = phases.get("judging", {"wall_s": 0.0, "cpu_s": 0.0})
    env = dict(os.environ)
    figures = {
        "study": study,
        "cards": len(ids),
        "calls": calls,
        "calls_made": summary.calls_made,
        "judge_readings": readings,
        "judge_prompts": prompts,
        "phases": phases,
        "run_wall_s": round(end[0] - start[0], 2),
        "cpu_ms_per_call": round(1000 * (end[1] - start[1]) / max(calls, 1), 3),
        "cpu_ms_per_judge_prompt": round(1000 * judging["cpu_s"] / max(prompts, 1), 3),
        "actors": actors,
        "replicas": replicas,
        "actor_cpu_ms_per_judge_prompt": round(
            1000 * judging.get("actors_cpu_s", 0.0) / max(prompts, 1), 3
        ),
        # the judge stand-ins' own CPU in the judging phase: on a 2-core machine it shares
        # the cores with the lab, so it is printed beside the lab's
        "standin_cpu_ms_per_judge_prompt": round(
            1000 * judging.get("watched_cpu_s", 0.0) / max(prompts, 1), 3
        ),
        "prompts_per_s": round(prompts / judging["wall_s"], 1) if judging["wall_s"] else None,
        "store_mb": round(folder_bytes(out, "store.sqlite*") / 1e6, 2),
        "profile_store_mb": round(folder_bytes(out / "profiles", "store.sqlite*") / 1e6, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "http_plan_vs_run": figures_http,
    }
    figures["report_s"], figures["report_peak_mb"] = measured_command(["report", str(out)], env)
    page = out / "report" / "index.html"
    figures["html_bytes"] = page.stat().st_size if page.is_file() else None
    figures["report_bytes"] = folder_bytes(out / "report", "**/*")
    figures["export_s"], figures["export_peak_mb"] = measured_command(["export", str(out)], env)
    figures["status_s"], figures["status_peak_mb"] = measured_command(["status", str(out)], env)
    return figures


def plan_against_run(out: Path, asks: list[Any]) -> dict[str, Any]:
    """Per judge: the HTTP requests the plan kept beside the run said (expected, and if each
    batch's readings agree) against what the run's readings state, the run's 0–100 and yes/no
    readings and the inline profiles' (their own store) apart."""
    from diarylab.experiments.engine.store import Store

    plan = json.loads((out / "plan.json").read_text())["requests"]
    profiles: list[Any] = []
    if (out / "profiles" / "store.sqlite").is_file():
        store = Store(out / "profiles" / "store.sqlite")
        try:
            profiles = store.judge_asks()
        finally:
            store.close()
    took = {(a.judge, a.question): a.http_requests or 0.0 for a in asks}
    made = {a.judge: a.http_requests or 0.0 for a in profiles if a.question == "number"}
    out_ = {}
    for judge, cost in plan.items():
        parts = cost["http_parts"]
        out_[judge] = {
            "number": (parts["number"], parts["number_if_alike"], took.get((judge, "number"), 0)),
            "yes_no": (parts["yes_no"], parts["yes_no"], took.get((judge, "yes_no"), 0)),
            "profiles": (
                parts["number_profiles"],
                parts["number_profiles_if_alike"],
                made.get(judge, 0.0),
            ),
        }
    return out_


def child(study: str, scale: int, work: Path, actors: int = 0, replicas: int = 1) -> dict[str, Any]:
    more = ["--actors", str(actors), "--replicas", str(replicas)]
    done = subprocess.run(
        [sys.executable, __file__, "--one", study, str(scale), "--work", str(work), *more],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"{study} x{scale} failed:\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", nargs="+", default=["diary", "friends"])
    parser.add_argument("--scales", nargs="+", type=int, default=[1])
    parser.add_argument("--work", type=Path, help="keep the run folders here")
    parser.add_argument("--one", nargs=2, metavar=("STUDY", "SCALE"), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--kills", type=int, help="kill and resume the first study this often")
    parser.add_argument("--seed", type=int, default=0, help="where the kills fall")
    parser.add_argument(
        "--actors",
        type=int,
        default=0,
        help="run on this many Ray actors (--executor ray): writing and judges' readings there",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="stand-in processes per judge, listed as its replicas (for a many-core machine)",
    )
    args = parser.parse_args()
    if args.actors < 0 or args.replicas < 1:
        parser.error("--actors takes 0 (in-process) or more, --replicas 1 or more")
    if args.one:
        study, scale = args.one[0], int(args.one[1])
        print(json.dumps(one(study, scale, args.work, args.actors, args.replicas)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"rehearsal on {platform.node()} ({os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"run folders under {work}"
    )
    if args.kills:
        kills(args.studies[0], args.kills, work, args.seed)
        return
    results = []
    for study in args.studies:
        rows = []
        for scale in args.scales:
            figures = child(study, scale, work, args.actors, args.replicas)
            print_figures(figures)
            rows.append(figures)
            sys.stdout.flush()
        if len(rows) > 1:
            print_growth(rows)
        results += rows
    if args.json:
        print(json.dumps(results))
    keep(results, args)


if __name__ == "__main__":
    main()
