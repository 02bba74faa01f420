"""One diary design run in-process and on the Ray executor (a local cluster, 2 CPU actors):
wall time, texts and judge readings per second, the ratio, and whether the two stores are the
same (they must be). Measured in one run of this script.

Run: PYTHONPATH=. .venv/bin/python bench/ray_executor.py [--model tiny|smollm2|FOLDER]
[--diarists 4] [--entries 2] [--actors 2]. "tiny" is the tests' tiny random Llama (2 layers,
hidden 64, the shipped tokenizer), saved to a temporary folder the actors load.

The Ray wall time counts what a run pays: the actors' start and each actor's model load; the
cluster's own start is timed apart (a cluster is started once and serves many runs)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.executor import ExecutorSettings
from diarylab.experiments.engine.store import Store
from diarylab.experiments.running.runner import RunSummary, run_design

CARDS = ["amara", "tomasz", "eero", "fatma", "kenji", "lucia", "marcus", "neha"]


def design_toml(model: str, diarists: int, entries: int) -> str:
    cards = ", ".join(f'"{c}"' for c in CARDS[:diarists])
    return f"""
[design]
name = "bench-ray"
kind = "diary"
seed = 5
entries = {entries}
coverage_floor = 0.0

[diarist_model]
model = "{model}"
generation = {{ max_new_tokens = 48, temperature = 0.9 }}
local = {{ batch_size = 2, device = "cpu" }}

[cast]
diarists = [{cards}]
profiles = ["unsteered"]

[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "local-chat"
kind = "local"
model = "{model}"
generation = {{ max_new_tokens = 32, temperature = 0.7 }}
local = {{ batch_size = 2, device = "cpu" }}

[[judges]]
id = "local-judge"
kind = "local"
model = "{model}"
local = {{ device = "cpu" }}

[scores]
entry = ["coherence"]
patterns = ["social_isolation"]

[analysis]
resamples = 200
baseline_chatbot = "thanks"
"""


def tiny_folder(folder: Path) -> str:
    from transformers import AutoTokenizer

    from diarylab.model_access.embedded import embedded_model_folder
    from diarylab.testing.tiny_models import build_tiny_llama

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_folder())
    build_tiny_llama(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def actors_ready(settings: ExecutorSettings, model: str, count: int) -> float:
    """Seconds from asking for the actors to every actor holding the model: what a run pays
    before its first batch (measured apart, on actors of their own)."""
    from diarylab.experiments.engine.ray_executor import RayExecutor
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings
    from diarylab.model_access.shared_models import ModelRef

    local = LocalSettings(batch_size=2, device="cpu")
    here = LocalModel.load(model, local)
    start = time.perf_counter()
    executor = RayExecutor(settings, lambda: {id(here): ModelRef(model, local)})
    try:
        batches = [[i] for i in range(count)]

        def hold(batch: list[int]) -> list[dict[str, int]]:
            time.sleep(0.5)  # each actor holds a batch a moment, so every actor gets one
            return [{"layers": here.num_layers} for _ in batch]

        list(executor.batches(hold, batches, label="warm", to_actors=True))
        return time.perf_counter() - start - 0.5
    finally:
        executor.close()


def tables(folder: Path) -> dict[str, list[tuple]]:
    store = Store(folder / "store.sqlite")
    try:
        out = {t: store.dump(t) for t in ("entries", "replies", "judgments")}
        out["calls"] = sorted(store.calls_of())
    finally:
        store.close()
    return out


def line(label: str, wall: float, summary: RunSummary) -> str:
    texts = summary.rows["entries"] + summary.rows["replies"]
    readings = summary.rows["judgments"]
    return (
        f"{label:10s} wall {wall:7.1f} s · texts {texts} ({texts / wall:5.2f}/s) · "
        f"readings {readings} ({readings / wall:5.2f}/s) · calls made {summary.calls_made}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tiny", help="tiny, smollm2, a hub id or a folder")
    parser.add_argument("--diarists", type=int, default=4)
    parser.add_argument("--entries", type=int, default=2)
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        model = tiny_folder(Path(tmp) / "tiny") if args.model == "tiny" else args.model
        path = Path(tmp) / "design.toml"
        path.write_text(design_toml(model, args.diarists, args.entries))
        design = load_design(path)
        start = time.perf_counter()
        local = run_design(design, Path(tmp) / "inprocess", progress=False)
        local_wall = time.perf_counter() - start
        print(line("in-process", local_wall, local))

        import ray

        start = time.perf_counter()
        ray.init(num_cpus=args.actors, include_dashboard=False, log_to_driver=False)
        print(f"ray cluster start {time.perf_counter() - start:.1f} s (not counted below)")
        try:
            settings = ExecutorSettings(kind="ray", actors=args.actors)
            ready = actors_ready(settings, model, args.actors)
            print(f"actors ready (start + model load, each run pays it) {ready:.1f} s")
            start = time.perf_counter()
            remote = run_design(design, Path(tmp) / "ray", progress=False, executor=settings)
            ray_wall = time.perf_counter() - start
        finally:
            ray.shutdown()
        print(line(f"ray ×{args.actors}", ray_wall, remote))
        print(line(f"ray ×{args.actors} less actor start", ray_wall - ready, remote))
        same = tables(Path(tmp) / "inprocess") == tables(Path(tmp) / "ray")
        print(
            f"speed-up (in-process wall / ray wall) {local_wall / ray_wall:.2f} · "
            f"same store: {same}"
        )


if __name__ == "__main__":
    main()
