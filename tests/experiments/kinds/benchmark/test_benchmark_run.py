"""A benchmark design on the synthetic file runs end to end on the engine: a fixed reply, the
tiny local model and an API chatbot (a loopback stand-in that records every request) answer;
a served judge (loopback: it writes a JSON answer, and its log-probabilities come from the tiny
model) and the tiny local judge grade; the run resumes without a model call; the report
renders; and no request to any model carries the canary string."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.kinds.benchmark.data import load_benchmark
from diarylab.experiments.running.runner import run_design
from diarylab.testing.benchmark_runs import DATA, design
from diarylab.testing.benchmark_runs import servers as servers  # the fixture, for this module
from diarylab.testing.stores import opened, results


def test_a_benchmark_design_runs_resumes_and_reports(tmp_path, tiny_model_folder, servers, capsys):
    chat, judge = servers
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url)
    assert main(["design", "check", str(path)]) == 0
    assert "6 of 27 conversations" in capsys.readouterr().out
    out = tmp_path / "run"
    first = run_design(load_design(path), out, progress=False)
    assert first.rows["bench_replies"] == 18 and first.cells == 18
    manifest = json.loads((out / "manifest.json").read_text())
    sample = manifest["benchmark"]["sample"]
    bench = load_benchmark(DATA, "mentalhealthbench")
    assert sample["data_sha256"] == bench.sha256 and len(sample["ids"]) == 6
    assert len(manifest["grader_template"]["sha256"]) == 64

    # The canary never reached a model, though sampled conversations carried it in the file.
    [canary] = bench.canaries
    raw = {json.loads(line)["id"]: line for line in DATA.read_text().splitlines()}
    assert any(
        canary in json.loads(raw[i])["conversation"]["messages"][-1]["content"]
        for i in sample["ids"]
    )
    for server in (chat, judge):
        assert server.requests and not any(canary in json.dumps(r) for r in server.requests)
    # Verbatim, no system message added: the API chatbot saw each conversation as it stands.
    by_id = bench.by_id()
    sent = [r["messages"] for r in chat.requests]
    assert sorted(map(json.dumps, sent)) == sorted(
        json.dumps(by_id[i].chat()) for i in sample["ids"]
    )
    # The served judge wrote a well-formed answer for every criterion of every reply, and each
    # was read by probability.
    criteria = sum(len(by_id[i].criteria) for i in sample["ids"]) * 3
    assert first.rows["judgments"] == first.rows["grader_answers"] == criteria
    with opened(out) as store:
        judged = store.select("judgments", ["readable", "coverage"])
        records = results(store, "judge")
    readable, coverage = min(r for r, _ in judged), min(c for _, c in judged)
    # Explicit true/false token ids: exact readings (a random model puts little mass on them).
    assert readable == 1 and coverage > 0 and all(r["exact"] for r in records)
    flags = {r[0]: r[1] for r in load_flags(out)}
    assert flags.get("refusal", 0) >= 1 and flags.get("empty", 0) >= 1

    again = run_design(load_design(path), out, progress=False)
    assert again.calls_made == 0 and again.rows == first.rows

    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    for heading in (
        "Leaderboard — published reading",
        "Leaderboard — expected points",
        "published scale",
        "Per axis",
        "Axis: points contributed (MentalHealthBench)",
        "Axis: met over possible within the axis (HealthBench per-tag)",
        "Per tag (HealthBench reference",
        "Per acuity",
        "Ungraded criteria per chatbot",
        "ungraded = not met",
        "Written verdict vs read probability",
        "Calibration anchors",
        "Replies flagged",
        "Paired comparisons",
        "Kendall τ",
        "Grading",
    ):
        assert heading in findings, heading
    board = pd.read_csv(out / "report" / "tables" / "leaderboard_met.csv")
    assert (board.scored == 5).all()  # 6 sampled, one with an all-negative rubric
    assert board.score.between(0, 1).all() and board.mapped.notna().all()
    # Every criterion has a written verdict and a reading: all are compared.
    verdicts = pd.read_csv(out / "report" / "tables" / "verdict_agreement.csv")
    assert verdicts.criteria.tolist() == [criteria] and verdicts.agree.between(0, 1).all()
    ungraded = pd.read_csv(out / "report" / "tables" / "ungraded.csv")
    assert (ungraded.ungraded == 0).all() and len(ungraded) == 3
    # Judge readings per judge × chatbot: every criterion of every reply, read exactly.
    readings = pd.read_csv(out / "report" / "tables" / "judge_readings.csv")
    assert sorted(readings.group) == ["api", "thanks", "tiny"]
    assert readings.n.tolist() == [criteria // 3] * 3 and (readings.unreadable == 0).all()
    assert (readings.exact_share == 1.0).all() and set(readings.reading) == {"reply yes/no"}
    assert "## Judge readings" in findings and "compare these rows across chatbots" in findings


def test_a_local_judge_writes_then_is_read_and_malformed_answers_stay_ungraded(
    tmp_path, tiny_model_folder, servers
):
    """The tiny random model writes no JSON: every criterion is retried once, then left
    ungraded; no judgment is made up, and the report says so."""
    chat, judge = servers
    path = design(
        tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=2, local_judge=True
    )
    out = tmp_path / "run"
    first = run_design(load_design(path), out, progress=False)
    criteria = first.rows["bench_replies"] and _criteria(out)
    assert first.rows["grader_answers"] == 2 * criteria  # the first attempt and one retry
    assert first.rows["judgments"] == 0
    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert f"| tiny-judge | {criteria} | 0 | 0 | {criteria} | {2 * criteria} |" in findings
    # The malformed answers themselves: counted per grader, the first few shown as written.
    shown = findings.split("## Malformed grader answers")[1].split("\n## ")[0]
    assert f"| tiny-judge | {2 * criteria} | {criteria} | {criteria} |" in shown
    answers = pd.read_csv(
        out / "report" / "tables" / "malformed_answers.csv", keep_default_na=False
    )
    assert len(answers) == 2 * criteria and answers["ungraded"].all()
    first_text = answers["text"].iloc[0][:400]
    assert shown.count("```text\n") + shown.count("````text\n") >= 3
    assert first_text.strip()[:40] in shown
    # MentalHealthBench strata are acuities, shown by name.
    assert "sample allocation (by acuity)" in findings and "acuity: non acute" in findings


def _criteria(folder: Path) -> int:
    manifest = json.loads((folder / "manifest.json").read_text())
    by_id = load_benchmark(DATA, "mentalhealthbench").by_id()
    return 3 * sum(len(by_id[i].criteria) for i in manifest["benchmark"]["sample"]["ids"])


def load_flags(folder: Path):
    with opened(folder) as store:
        return sorted(store.flag_counts("bench_replies").items())
