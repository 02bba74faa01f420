"""The GPU benches' output files as the docs' tables. A GPU machine is lent for minutes and
reaches nothing outside it: bench/gpu_local.py and bench/sampler_cost.py write their figures
as JSON there (`--json`), the file comes back beside the bench (bench/results-*.json), and this
reads those files — never a figure typed by hand — into bench/results/gpu_local.json, with the
date and commit at which each file was added to the repository and the device it names, and
writes the tables into docs/benchmarks.md.

Run: .venv/bin/python bench/gpu_tables.py"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tables import ROOT, keep_results, write_docs_block  # noqa: E402

# the local-paths bench's runs, in the order they were made: (file, what changed before it)
LOCAL_RUNS = (
    ("results-gpu-local-h200.json", "first run"),
    ("results-gpu-local-h200-after.json", "numbers tokenized in one batch call"),
    ("results-gpu-local-h200-gather.json", "only the ids each node needs copied"),
    ("results-gpu-local-h200-3b.json", "3B-shaped model"),
)
SAMPLER_RUNS = (("results-sampler-h200-counter.txt", "counter sampler"),)


def added(file: str) -> tuple[str, str]:
    """The date and commit at which the file came into the repository."""
    out = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%ad %h", "--date=short", "--", f"bench/{file}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return out[-2], out[-1]


def local_rows(found: dict[str, Any], run: str) -> list[dict[str, Any]]:
    rows = []
    for dtype in ("float32", "bfloat16"):
        if dtype not in found:
            continue
        r = found[dtype]
        per = r["readings"]["seconds_per_reading"]
        steer = r["steering"]
        rows.append({
            "run": run, "model": f"random Llama {found['size']}", "dtype": dtype,
            "prompt tokens": r["prompt_tokens"],
            "exact s (tree)": per["tree exact"], "exact s (earlier)": per["earlier exact"],
            "bounded s (tree)": per["tree bounded 0.05"],
            "bounded s (earlier)": per["earlier bounded 0.05"],
            "log-prob gap, tree vs earlier": r["agreement"]["tree_vs_earlier"],
            "means gap, points": r["readings"]["means_gap_points"],
            f"{r['yes_no']['questions']} yes/no s": r["yes_no"]["seconds"],
            "group = alone": r["yes_no"]["group_equals_alone"],
            "steered rows = hook oracle": steer["rows_equal_to_hook_oracle"],
            "steered ÷ unsteered tok/s": steer["steered_over_unsteered"],
        })  # fmt: skip
    return rows


def sampler_row(found: dict[str, Any], run: str) -> dict[str, Any]:
    step = found["decode_step_s"]
    return {
        "run": run, "model": f"random Llama {found['size']}", "rows": found["rows"],
        "vocabulary": found["vocab"], "decode step ms": 1000 * step,
        "CPU-generator sampler ms (top_p 0.95)": 1000 * found["sampler_top_p_0.95_s"],
        "counter sampler ms (top_p 0.95)": 1000 * found["counter_sampler_top_p_0.95_s"],
        "counter ÷ decode step": found["counter_sampler_top_p_0.95_s"] / step,
        "device noise = CPU noise": found["counter_noise_equals_cpu"],
    }  # fmt: skip


def main() -> None:
    local = []
    for file, run in LOCAL_RUNS:
        found = json.loads((ROOT / "bench" / file).read_text())
        date, commit = added(file)
        local += [{**row, "added": f"{date} {commit}"} for row in local_rows(found, run)]
    sampler = []
    for file, run in SAMPLER_RUNS:
        last = (ROOT / "bench" / file).read_text().strip().splitlines()[-1]
        date, commit = added(file)
        sampler.append({**sampler_row(json.loads(last), run), "added": f"{date} {commit}"})
    device = json.loads((ROOT / "bench" / LOCAL_RUNS[0][0]).read_text())["device"]
    kept = keep_results(
        "gpu_local",
        {"from": "the output files of bench/gpu_local.py and bench/sampler_cost.py"},
        {"local paths on the GPU": local, "sampler against a decode step": sampler},
        measured={
            "bench": "bench/gpu_tables.py",
            "machine": f"one {device}",
            "date": local[0]["added"].split()[0],
            "commit": "each row's own (added)",
        },
    )
    write_docs_block("benchmarks.md", "gpu_local", kept)


if __name__ == "__main__":
    main()
