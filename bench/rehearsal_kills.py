"""Kill and resume at paper size (bench/rehearsal.py --kills N): the study run unbroken, then
again killed with SIGKILL at random points of its work (the last during `report`) and resumed
each time; the two stores and reports must be equal."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.rehearsal_setup import (
    CLI,
    KEY_ENV,
    ROOT,
    cards_folder,
    fresh_run_folder,
    rehearsal_design,
    stand_ins,
    timed_command,
)


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


# What a report says of how its run went — calls made by the latest run and by earlier ones
# (experiments/analysis/usage.py) — differs, rightly, between an unbroken run and one resumed
# after kills: that table, and its section in findings.md and the page, are compared without it.
HISTORY = "## Model calls and tokens"


def without_history(name: str, data: bytes) -> bytes | None:
    if name == "tables/usage.csv":
        return None
    if name not in ("findings.md", "index.html"):
        return data
    text = data.decode("utf-8")
    start = text.find(HISTORY if name == "findings.md" else HISTORY.removeprefix("## "))
    if start < 0:
        return data
    ends = ("\n## ",) if name == "findings.md" else ("<h2", "</section>")
    found = [i for i in (text.find(e, start + 1) for e in ends) if i >= 0]
    end = min(found) if found else len(text)
    return (text[:start] + text[end:]).encode("utf-8")


def reports_differ(ours: Path, theirs: Path) -> list[str]:
    """The report files of two runs that differ beyond their run history."""
    a, b = report_files(ours), report_files(theirs)
    return sorted(
        n for n in set(a) | set(b)
        if n not in a or n not in b or without_history(n, a[n]) != without_history(n, b[n])
    )  # fmt: skip


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


def stored(folder: Path) -> int:
    """Calls stored by a run folder so far: its profiles' store and its own."""
    from diarylab.experiments.engine.store.files import calls_stored

    return calls_stored(folder / "profiles" / "store.sqlite") + calls_stored(
        folder / "store.sqlite"
    )


def killed_when(process: subprocess.Popen[bytes], folder: Path, calls: float) -> bool:
    """SIGKILL the command's process group once the folder holds `calls` calls; False if it
    ended first."""
    import signal

    while process.poll() is None and stored(folder) < calls:
        time.sleep(0.05)
    if process.poll() is not None:
        return False
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return True


def said(killed: bool) -> str:
    return "killed" if killed else "it finished first"


def kills(study: str, count: int, work: Path, seed: int) -> None:
    """The study at full size run unbroken, then again killed with SIGKILL at `count` random
    points of its work (the last during `report`) and resumed each time; the two stores and
    reports must be equal."""
    import random

    rng = random.Random(seed)
    cards, ids = cards_folder(work, 8)
    env = {**os.environ, "DIARYLAB_CARDS_DIR": str(cards), KEY_ENV: "sk-rehearsal-not-a-key"}
    env["PYTHONPATH"] = str(ROOT)
    with stand_ins(work, cards) as models:
        path = rehearsal_design(study, work, models, ids)
        whole = fresh_run_folder(work / f"{study}-unbroken")
        broken = fresh_run_folder(work / f"{study}-killed")
        began = time.perf_counter()
        timed_command(["run", str(path), "--out", str(whole), "--no-progress"], env)
        run_s = time.perf_counter() - began
        timed_command(["report", str(whole)], env)
        total = stored(whole)
        print(f"unbroken: run {run_s:.0f} s, {total} calls; killing {count} times")
        # Each kill falls at a random point of the work, not of the clock: a resumed run has
        # less left to do, so a moment drawn over the whole run's time mostly came after it
        # had ended (2 of 10 kills landed that way, 2026-12-04).
        points = sorted(rng.uniform(0.02, 0.98) for _ in range(count - 1))
        for i, point in enumerate(points):
            process = start(["run", str(path), "--out", str(broken), "--no-progress"], env)
            killed = killed_when(process, broken, point * total)
            print(f"  kill {i + 1}: at {stored(broken)} of {total} calls stored ({said(killed)})")
        timed_command(["run", str(path), "--out", str(broken), "--no-progress"], env)
        moment = rng.uniform(0.5, 5.0)
        killed = killed_at(start(["report", str(broken)], env), moment)
        print(f"  kill {count}: after {moment:.1f} s of `report` ({said(killed)})")
        timed_command(["report", str(broken)], env)
        timed_command(["run", str(path), "--out", str(broken), "--no-progress"], env)
    same_store = snapshot(whole) == snapshot(broken)
    differ = reports_differ(broken, whole)
    print(f"store equal to the unbroken run's: {same_store}; report files differing: ", end="")
    print(differ or "none")
    if not same_store or differ:
        raise SystemExit(1)
