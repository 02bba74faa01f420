"""What bench/rehearsal.py found, printed as it goes and kept for the docs: each (study, size)'s
figures, the plan's HTTP requests against the run's, each figure's growth per doubling of the
role cards; the kept tables in bench/results/rehearsal.json (rehearsal_ray.json on Ray actors),
written into docs/scaling.md."""

from __future__ import annotations

import argparse
import math
from typing import Any

from bench.tables import keep_results, write_docs_block

GROWN = (
    "run_wall_s", "calls", "judge_prompts", "cpu_ms_per_judge_prompt", "store_mb", "peak_rss_mb",
    "report_s", "report_peak_mb", "html_bytes", "export_s", "status_s",
)  # fmt: skip


def print_figures(f: dict[str, Any]) -> None:
    print(
        f"{f['study']} with {f['cards']} role cards: {f['calls']} calls, {f['judge_readings']} "
        f"judge readings in {f['judge_prompts']} prompts; run {f['run_wall_s']} s"
        + (f" on {f['actors']} Ray actors" if f.get("actors") else " in-process")
        + (f", {f['replicas']} stand-in processes per judge" if f.get("replicas", 1) > 1 else "")
    )
    for name, span in f["phases"].items():
        actors = f"  actors' cpu {span['actors_cpu_s']:>8.1f} s" if "actors_cpu_s" in span else ""
        served = span.get("watched_cpu_s")
        judges = "" if served is None else f"  judge stand-ins' cpu {served:>8.1f} s"
        print(
            f"  phase {name:<9} wall {span['wall_s']:>8.1f} s  cpu {span['cpu_s']:>8.1f} s"
            + actors
            + judges
        )
    on_actors = (
        f" in this process, + {f['actor_cpu_ms_per_judge_prompt']} ms on the actors"
        if f.get("actors")
        else ""
    )
    print(
        f"  lab CPU {f['cpu_ms_per_judge_prompt']} ms per judge prompt{on_actors} (judging "
        f"phase, the stand-in's own CPU apart: {f.get('standin_cpu_ms_per_judge_prompt')} ms), "
        f"{f['prompts_per_s']} prompts/s sustained; "
        f"{f['cpu_ms_per_call']} ms CPU per call over the run (the random diarist's arithmetic "
        "included)"
    )
    print(
        f"  store {f['store_mb']} MB (+ profiles {f['profile_store_mb']} MB), peak memory "
        f"{f['peak_rss_mb']} MB; report {f['report_s']} s (page {f['html_bytes']} bytes, "
        f"report folder {f['report_bytes']} bytes), export {f['export_s']} s, status "
        f"{f['status_s']} s (their peaks {f['report_peak_mb']}, {f['export_peak_mb']} and "
        f"{f['status_peak_mb']} MB)"
    )
    print_http(f)


def print_http(f: dict[str, Any]) -> None:
    """The plan's HTTP requests (expected / if each batch's readings agree) against the run's."""
    for judge, parts in f.get("http_plan_vs_run", {}).items():
        said = []
        for name, (expected, alike, took) in parts.items():
            if expected or took:
                ratio = f" ({took / alike:.2f}x the agreeing figure)" if alike else ""
                said.append(f"{name} planned {expected:g} / {alike:g}, took {took:.0f}{ratio}")
        print(f"  HTTP requests, {judge}: " + "; ".join(said))


def print_growth(rows: list[dict[str, Any]]) -> None:
    print("growth per doubling of the role cards (each figure's ratio, per doubling where a step")
    print("spans more than one: --scales 1 4 gives the geometric mean of the two doublings):")
    for a, b in zip(rows, rows[1:], strict=False):
        doublings = math.log2(b["cards"] / a["cards"])
        ratios = []
        for name in GROWN:
            x, y = a.get(name), b.get(name)
            if isinstance(x, int | float) and isinstance(y, int | float) and x:
                ratios.append(f"{name} {(y / x) ** (1 / doublings):.2f}x")
        step = f"{a['cards']} -> {b['cards']}"
        if doublings != 1:
            step += f" ({doublings:g} doublings)"
        print(f"  {a['study']} {step}: " + ", ".join(ratios))


def figures_row(f: dict[str, Any]) -> dict[str, Any]:
    """One (study, size)'s figures as a row of the kept table."""
    row: dict[str, Any] = {
        "study": f["study"],
        "role cards": f["cards"],
        "model calls": f["calls"],
        "judge readings": f["judge_readings"],
        "judge prompts": f["judge_prompts"],
        "run wall s": f["run_wall_s"],
    }
    row |= {f"{name} wall s": span["wall_s"] for name, span in f["phases"].items()}
    return row | {
        "lab CPU ms per judge prompt": f["cpu_ms_per_judge_prompt"],
        "judge prompts per s": f["prompts_per_s"],
        "store MB": f["store_mb"],
        "run peak MB": f["peak_rss_mb"],
        "report s": f["report_s"],
        "report peak MB": f["report_peak_mb"],
        "page MB": round((f["html_bytes"] or 0) / 1e6, 2),
        "export s": f["export_s"],
        "status s": f["status_s"],
    }


def keep(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """bench/results/rehearsal.json (rehearsal_ray.json on Ray actors), shown in
    docs/scaling.md: one table per study, its sizes as rows."""
    name = "rehearsal_ray" if args.actors else "rehearsal"
    tables: dict[str, list[dict[str, Any]]] = {}
    for f in results:
        tables.setdefault(f"{f['study']} at paper size", []).append(figures_row(f))
    settings = {"studies": " ".join(args.studies), "scales": " ".join(map(str, args.scales))}
    if args.actors:
        settings |= {"actors": args.actors, "replicas": args.replicas}
    kept = keep_results(name, settings, tables)
    if name == "rehearsal":  # Ray's table is kept apart, not shown
        write_docs_block("scaling.md", name, kept)
