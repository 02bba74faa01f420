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

from bench.rehearsal_setup import (  # noqa: E402
    KEY_ENV,
    StandIns,
    cards_folder,
    chat_standin,
    judge_standin,
    judge_tokenizer_folder,
    model_folder,
    rehearsal_design,
)

CLI = [sys.executable, "-m", "diarylab.experiments.cli"]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class PhaseClock:
    """Wall and CPU time per progress phase, taken where the run names its phases."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float, float]] = []

    def install(self) -> None:
        from diarylab.experiments.engine.progress import Progress

        clock = self
        named = Progress.phase

        def phase(progress: Progress, name: str) -> None:
            clock.marks.append((name, time.perf_counter(), cpu_seconds()))
            named(progress, name)

        Progress.phase = phase  # type: ignore[method-assign]

    def spans(self, start: tuple[float, float], end: tuple[float, float]) -> dict[str, Any]:
        """Per phase: wall and CPU seconds; "profiles" is everything before the first phase
        (making the inline profiles: contrast texts, calibration samples and their readings)."""
        marks = [("profiles", *start), *self.marks, ("end", *end)]
        out = {}
        for (name, wall, cpu), (_, wall2, cpu2) in zip(marks, marks[1:], strict=False):
            out[name] = {"wall_s": round(wall2 - wall, 2), "cpu_s": round(cpu2 - cpu, 2)}
        return out


def folder_bytes(folder: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())


def timed_command(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return round(time.perf_counter() - start, 2)


def one(study: str, scale: int, work: Path) -> dict[str, Any]:
    """One rehearsal in this process: the run, then report, export and status as a user runs
    them (fresh processes)."""
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.opening import load_design
    from diarylab.experiments.runner import run_design

    cards, ids = cards_folder(work, 8 * scale)
    os.environ["DIARYLAB_CARDS_DIR"] = str(cards)
    os.environ[KEY_ENV] = "sk-rehearsal-not-a-key"
    clock = PhaseClock()
    clock.install()
    with chat_standin() as chat_url, judge_standin() as (judge_url, _):
        stand_ins = StandIns(
            judge_url, judge_tokenizer_folder(work), chat_url, model_folder(work), cards
        )
        path = rehearsal_design(study, work, stand_ins, ids)
        out = work / f"{study}-{len(ids)}-run"
        design = load_design(path)
        start = (time.perf_counter(), cpu_seconds())
        summary = run_design(design, out, progress=False)
        end = (time.perf_counter(), cpu_seconds())
    phases = clock.spans(start, end)
    store = Store(out / "store.sqlite")
    try:
        asks = store.judge_asks()
        calls = store.count("calls")
    finally:
        store.close()
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
        "prompts_per_s": round(prompts / judging["wall_s"], 1) if judging["wall_s"] else None,
        "store_mb": round(folder_bytes(out, "store.sqlite*") / 1e6, 2),
        "profile_store_mb": round(folder_bytes(out / "profiles", "store.sqlite*") / 1e6, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    figures["report_s"] = timed_command(["report", str(out)], env)
    page = out / "report" / "index.html"
    figures["html_bytes"] = page.stat().st_size if page.is_file() else None
    figures["report_bytes"] = folder_bytes(out / "report", "**/*")
    figures["export_s"] = timed_command(["export", str(out)], env)
    figures["status_s"] = timed_command(["status", str(out)], env)
    figures["children_peak_rss_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
    )
    return figures


def child(study: str, scale: int, work: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--one", study, str(scale), "--work", str(work)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"{study} x{scale} failed:\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


GROWN = (
    "run_wall_s", "calls", "judge_prompts", "store_mb", "peak_rss_mb", "report_s", "html_bytes",
    "export_s", "status_s",
)  # fmt: skip


def print_figures(f: dict[str, Any]) -> None:
    print(
        f"{f['study']} with {f['cards']} role cards: {f['calls']} calls, {f['judge_readings']} "
        f"judge readings in {f['judge_prompts']} prompts; run {f['run_wall_s']} s"
    )
    for name, span in f["phases"].items():
        print(f"  phase {name:<9} wall {span['wall_s']:>8.1f} s  cpu {span['cpu_s']:>8.1f} s")
    print(
        f"  lab CPU {f['cpu_ms_per_judge_prompt']} ms per judge prompt (judging phase, the "
        f"stand-in's own CPU apart), {f['prompts_per_s']} prompts/s sustained; "
        f"{f['cpu_ms_per_call']} ms CPU per call over the run (the random diarist's arithmetic "
        "included)"
    )
    print(
        f"  store {f['store_mb']} MB (+ profiles {f['profile_store_mb']} MB), peak memory "
        f"{f['peak_rss_mb']} MB; report {f['report_s']} s (page {f['html_bytes']} bytes, "
        f"report folder {f['report_bytes']} bytes), export {f['export_s']} s, status "
        f"{f['status_s']} s (their peak {f['children_peak_rss_mb']} MB)"
    )


def print_growth(rows: list[dict[str, Any]]) -> None:
    print("growth per doubling of the role cards (each figure ÷ the one at half the cards):")
    for a, b in zip(rows, rows[1:], strict=False):
        ratios = []
        for name in GROWN:
            x, y = a.get(name), b.get(name)
            if isinstance(x, int | float) and isinstance(y, int | float) and x:
                ratios.append(f"{name} {y / x:.2f}x")
        print(f"  {a['study']} {a['cards']} -> {b['cards']}: " + ", ".join(ratios))


# ----------------------------------------------------------------------------- kill and resume
def snapshot(folder: Path) -> dict[str, Any]:
    """Every table of the run's store, rows sorted; calls without the time each was made."""
    from diarylab.experiments.engine.store import Store

    store = Store(folder / "store.sqlite")
    try:
        out: dict[str, Any] = {t: store.dump(t) for t in store.tables() if t != "calls"}
        out["calls"] = store.calls_of()
    finally:
        store.close()
    return out


def report_files(folder: Path) -> dict[str, bytes]:
    report = folder / "report"
    return {str(p.relative_to(report)): p.read_bytes() for p in report.rglob("*") if p.is_file()}


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def killed_at(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """SIGKILL the command's whole process group after `seconds`; False if it ended first."""
    import signal

    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


def said(killed: bool) -> str:
    return "killed" if killed else "it finished first"


def kills(study: str, count: int, work: Path, seed: int) -> None:
    """The study at full size run unbroken, then again killed with SIGKILL at `count` random
    moments (the last during `report`) and resumed each time; the two stores and reports must
    be equal."""
    import random

    rng = random.Random(seed)
    cards, ids = cards_folder(work, 8)
    env = {**os.environ, "DIARYLAB_CARDS_DIR": str(cards), KEY_ENV: "sk-rehearsal-not-a-key"}
    env["PYTHONPATH"] = str(ROOT)
    with chat_standin() as chat_url, judge_standin() as (judge_url, _):
        stand_ins = StandIns(
            judge_url, judge_tokenizer_folder(work), chat_url, model_folder(work), cards
        )
        path = rehearsal_design(study, work, stand_ins, ids)
        whole, broken = work / f"{study}-unbroken", work / f"{study}-killed"
        began = time.perf_counter()
        timed_command(["run", str(path), "--out", str(whole), "--no-progress"], env)
        run_s = time.perf_counter() - began
        timed_command(["report", str(whole)], env)
        print(f"unbroken: run {run_s:.0f} s; killing {count} times at random moments")
        for i in range(count - 1):
            moment = rng.uniform(1.0, run_s)
            killed = killed_at(start(["run", str(path), "--out", str(broken), "--no-progress"],
                                     env), moment)  # fmt: skip
            print(f"  kill {i + 1}: after {moment:.1f} s of a run ({said(killed)})")
        timed_command(["run", str(path), "--out", str(broken), "--no-progress"], env)
        moment = rng.uniform(0.5, 5.0)
        killed = killed_at(start(["report", str(broken)], env), moment)
        print(f"  kill {count}: after {moment:.1f} s of `report` ({said(killed)})")
        timed_command(["report", str(broken)], env)
        timed_command(["run", str(path), "--out", str(broken), "--no-progress"], env)
    same_store = snapshot(whole) == snapshot(broken)
    ours, theirs = report_files(broken), report_files(whole)
    differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
    print(f"store equal to the unbroken run's: {same_store}; report files differing: ", end="")
    print(differ or "none")
    if not same_store or differ:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", nargs="+", default=["diary", "friends"])
    parser.add_argument("--scales", nargs="+", type=int, default=[1])
    parser.add_argument("--work", type=Path, help="keep the run folders here")
    parser.add_argument("--one", nargs=2, metavar=("STUDY", "SCALE"), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--kills", type=int, help="kill and resume the first study this often")
    parser.add_argument("--seed", type=int, default=0, help="where the kills fall")
    args = parser.parse_args()
    if args.one:
        study, scale = args.one[0], int(args.one[1])
        print(json.dumps(one(study, scale, args.work)))
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
            figures = child(study, scale, work)
            print_figures(figures)
            rows.append(figures)
            sys.stdout.flush()
        if len(rows) > 1:
            print_growth(rows)
        results += rows
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
