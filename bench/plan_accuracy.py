"""The plan against the run on the real vLLM tier, in one run: the demo design cut to one
diarist and two entries, judged by SmolLM2 served by vLLM (the CPU build in scripts/setup-vllm.sh's
venv, float32, the flags of testing/vllm_server.py), read bounded as the design says. Two
designs: with the fixed `thanks` chatbot, and with the `local` SmolLM2 chatbot too.

For each, three plans: as `diarylab plan` gives it before the run (the stated judge's figures,
"stated"), `plan --measure` before the run (the judge reading the design's prompts on stand-in
texts from the role cards, "cards"), and after the run `plan --measure --from RUN` (on a seeded
sample of the run's own texts, "measured"); printed per judge and question: prompts per
reading planned and taken (what the run's readings state), HTTP requests in all, and the
ratios. Target: the measured plan within ±25 % of the run.

Run: .venv/bin/python bench/plan_accuracy.py [--sample 8] [--keep DIR]"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import diarylab  # noqa: E402
from diarylab.experiments.cli import main as cli  # noqa: E402
from diarylab.model_access.embedded import embedded_model_folder  # noqa: E402
from diarylab.testing import vllm_server  # noqa: E402

DESIGN = """
[design]
name = "plan-accuracy"
kind = "diary"
seed = 20261204
entries = 2
coverage_floor = 0.0

[diarist_model]
model = "smollm2"
generation = {{ max_new_tokens = 60, temperature = 0.8, top_p = 0.95 }}

[cast]
diarists = ["amara"]
profiles = ["unsteered"]

[[chatbots]]
id = "thanks"
kind = "fixed"
text = "Thank you for sharing."
{local_chatbot}
[[judges]]
id = "served-smollm2"
kind = "openai-compatible"
model = "{model}"
tokenizer = "smollm2"
probe_floor = 0.0
endpoint = {{ base_url = "{url}", concurrency = 4, timeout_s = 300, max_retries = 2 }}

[scores]
entry = ["pattern", "coherence"]
patterns = ["social_isolation"]

[analysis]
resamples = 200
cluster = "diarist"
baseline_chatbot = "thanks"
"""
LOCAL_CHATBOT = """
[[chatbots]]
id = "smollm2-chat"
kind = "local"
model = "smollm2"
generation = { max_new_tokens = 40, temperature = 0.7 }
"""


def plan(path: Path, *extra: str) -> dict:
    out = StringIO()
    with redirect_stdout(out):
        assert cli(["plan", str(path), "--json", *extra]) == 0
    return json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--keep", help="keep the run folders here")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="plan-accuracy-"))
    work.mkdir(parents=True, exist_ok=True)
    server = vllm_server.start(embedded_model_folder(), work / "vllm.log")
    print(f"vLLM server up in {server.start_s:.1f} s at {server.base_url}")
    try:
        for label, chatbot in (("thanks", ""), ("thanks + local chatbot", LOCAL_CHATBOT)):
            folder = work / label.replace(" ", "-").replace("+", "and")
            folder.mkdir(exist_ok=True)
            path = folder / "design.toml"
            path.write_text(
                DESIGN.format(
                    local_chatbot=chatbot, model=server.litellm_model, url=server.base_url
                )
            )
            stated = plan(path)
            cards = plan(path, "--measure", "--sample", str(args.sample))  # before the run
            began = time.perf_counter()
            assert cli(["run", str(path), "--out", str(folder / "run"), "--no-progress"]) == 0
            seconds = time.perf_counter() - began
            measured = plan(path, "--measure", "--from", str(folder / "run"), "--sample",
                            str(args.sample))  # fmt: skip
            with diarylab.open_run(folder / "run") as run:
                readings = run.readings()
            print(f"\n== {label}: run {seconds:.0f} s, {len(readings)} readings")
            print(f"{'judge / question':>30}  {'stated':>8}  {'cards':>8}  {'measured':>8}  "
                  f"{'taken':>8}  measured/taken  cards/taken  stated/taken")  # fmt: skip
            for judge, group in readings.groupby("judge"):
                s_cost, m_cost = stated["requests"][judge], measured["requests"][judge]
                c_cost = cards["requests"][judge]
                for question, key in (("number", "number_expected"), ("yes_no", "yes_no")):
                    rows = group[group["question"] == question]
                    if rows.empty:
                        continue
                    taken = rows["prompts"].sum() / len(rows)
                    s = s_cost["per_reading"][key]
                    m = m_cost["per_reading"][key]
                    c = c_cost["per_reading"][key]
                    name = f"{judge} {question}"
                    ratios = f"{m / taken:14.2f}  {c / taken:11.2f}  {s / taken:12.2f}"
                    print(f"{name:>30}  {s:8.2f}  {c:8.2f}  {m:8.2f}  {taken:8.2f}  {ratios}")
                # the readings state their own requests; the plan's figure holds the run's
                # probe of the judge too, which is no reading
                http_taken = group["http_requests"].sum()
                hs, hc, hm = (c["http_expected"] - (c["probe"]["http_requests"] or 0)
                              for c in (s_cost, c_cost, m_cost))  # fmt: skip
                print(f"{judge + ' HTTP, readings':>30}  {hs:8.0f}  {hc:8.0f}  {hm:8.0f}  "
                      f"{http_taken:8.0f}  {hm / http_taken:14.2f}  {hc / http_taken:11.2f}  "
                      f"{hs / http_taken:12.2f}")  # fmt: skip
                print(f"{'':>30}  measured: {m_cost['note']}")
                print(f"{'':>30}  cards: {c_cost['note']}")
    finally:
        vllm_server.stop(server)


if __name__ == "__main__":
    main()
