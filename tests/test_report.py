"""The findings report: files, images, tables that match the data, traceability."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from experiments.analysis.report import write_report
from foundation.errors import LabError
from tests.synthetic_diary import Plant, make_tables

SHA = "5" * 64
DESIGN = {
    "design": {"name": "synthetic-diary", "kind": "diary"},
    "hypotheses": [
        {
            "id": "H1",
            "says": "steering raises the first-entry pattern score",
            "contrast": {"kind": "first_entry_pattern", "profile": "steered"},
            "direction": "greater",
            "judges": ["judge-a", "judge-b"],
        },
        {
            "id": "H2",
            "says": "warm replies soften the pattern more than thanks",
            "contrast": {"kind": "drift", "chatbot": "warm", "entry": 4, "baseline": "thanks"},
            "direction": "less",
            "judges": ["judge-a", "judge-b"],
        },
    ],
}
MANIFEST = {"git_commit": "abc1234", "models": {"diarist": "smollm2"}}


@pytest.fixture(scope="module")
def run():
    return make_tables(Plant(unreadable=0.02), seed=12)


@pytest.fixture(scope="module")
def report(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    path = write_report(
        out,
        run,
        design=DESIGN,
        design_sha256=SHA,
        manifest=MANIFEST,
        resamples=200,
        seed=5,
        baseline_chatbot="thanks",
    )
    return path, path.read_text(encoding="utf-8")


def _row(text: str, row_id: str) -> list[str]:
    [line] = [ln for ln in text.splitlines() if ln.startswith(f"| {row_id} |")]
    return [c.strip() for c in line.strip("|").split("|")]


def test_header_carries_design_hash_and_manifest(report):
    path, text = report
    assert path.name == "findings.md" and path.parent.name == "report"
    assert text.startswith("# Findings: synthetic-diary")
    assert SHA in text.split("## How to read this")[0]
    assert "| git_commit | abc1234 |" in text
    assert '{"diarist": "smollm2"}' in text


def test_every_plot_is_a_png_that_opens(report):
    path, text = report
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 4
    for link in links:
        png = path.parent / link
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = imread(png)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def _first_entry_effect(entries: pd.DataFrame, judge: str, pattern: str) -> tuple[float, set]:
    rows = entries[
        (entries["entry_index"] == 1)
        & (entries["judge"] == judge)
        & (entries["score"] == f"pattern:{pattern}")
        & entries["readable"]
    ].drop_duplicates("entry_id")
    wide = rows.pivot(index="diarist", columns="profile", values="mean")
    both = wide[["unsteered", f"steer_{pattern}"]].dropna()
    ids = rows[rows["diarist"].isin(both.index) & rows["profile"].isin(both.columns)]
    return float((both[f"steer_{pattern}"] - both["unsteered"]).mean()), set(ids["entry_id"])


def test_steering_table_matches_the_data_and_traces_to_entries(run, report):
    path, text = report
    sources = pd.read_csv(path.parent / "sources.csv").set_index("row_id")
    rows = [ln for ln in text.splitlines() if re.match(r"\| S\d+ \|", ln)]
    assert len(rows) == 4  # 2 judges × 2 steered profiles
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        row_id, judge, profile = cells[:3]
        expected, ids = _first_entry_effect(run.entries, judge, profile.removeprefix("steer_"))
        assert cells[-1].startswith(f"{expected:.1f} [")
        assert set(sources.loc[row_id, "ids"].split()) == ids


def test_drift_and_behavior_tables_match_the_data(run, report):
    _, text = report
    e = run.entries
    own = e[(e["judge"] == "judge-a") & (e["score"] == "pattern:isolation") & e["readable"]]
    at4 = own[own["entry_index"] == 4].pivot_table(
        index="diarist", columns=["profile", "chatbot"], values="mean"
    )
    drift = {c: at4[("steer_isolation", c)] - at4[("unsteered", c)] for c in ("warm", "thanks")}
    difference = (drift["warm"] - drift["thanks"]).dropna().mean()
    [line] = [
        ln
        for ln in text.splitlines()
        if re.match(r"\| B\d+ \| judge-a \| steer_isolation \| warm \| 4 \|", ln)
    ]
    assert line.split("|")[-2].strip().startswith(f"{difference:.1f} [")

    r = run.replies
    mine = r[(r["judge"] == "judge-b") & (r["chatbot"] == "cold") & (r["behavior"] == "escalation")]
    [line] = [
        ln
        for ln in text.splitlines()
        if re.match(r"\| R\d+ \| judge-b \| cold \| escalation \|", ln)
    ]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4] == str(mine["reply_id"].nunique())
    assert cells[5].startswith(f"{(mine['p_yes'] >= 0.5).mean():.2f} [")
    assert cells[6].startswith(f"{mine['p_yes'].mean():.2f} [")


def test_hypotheses_and_agreement_are_reported(report):
    path, text = report
    assert _row(text, "V1")[1:3] == [
        "H1",
        "first_entry_pattern(steered) − first_entry_pattern(unsteered)",
    ]
    assert {_row(text, f"V{i}")[-1] for i in (1, 2)} == {"supported"}
    agreement = _row(text, "A1")
    assert agreement[1:4] == ["judge-a", "judge-b", "coherence"]
    assert (path.parent / "tables" / "agreement.csv").is_file()
    # Every row id shown in findings.md can be traced through sources.csv.
    sources = pd.read_csv(path.parent / "sources.csv")
    shown = set(re.findall(r"^\| ([VSQDBRA]\d+) \|", text, flags=re.M))
    assert shown <= set(sources["row_id"])


def test_diarist_pages_show_every_entry_and_reply_with_scores(run, report):
    path, text = report
    pages = sorted((path.parent / "diarists").glob("*.md"))
    assert [p.stem for p in pages] == sorted(run.entries["diarist"].unique())
    assert f"(diarists/{pages[0].stem}.md)" in text
    diarist = pages[0].stem
    page = pages[0].read_text(encoding="utf-8")
    mine = run.entries[run.entries["diarist"] == diarist]
    for entry_id in mine["entry_id"].unique():
        assert f"`{entry_id}`" in page
    for reply_id in run.replies.loc[run.replies["diarist"] == diarist, "reply_id"].unique():
        assert f"`{reply_id}`" in page
    row = mine[(mine["score"] == "coherence") & mine["readable"]].iloc[0]
    section = page.split(f"`{row['entry_id']}`")[1]
    assert f"{row['mean']:.1f}" in section.split("####")[0]
    assert "unreadable" in "".join(p.read_text(encoding="utf-8") for p in pages)


def test_a_bad_hypothesis_writes_nothing_and_keeps_the_old_report(run, report, tmp_path):
    bad = DESIGN | {"hypotheses": [DESIGN["hypotheses"][0] | {"contrast": {"kind": "vibes"}}]}
    out = tmp_path / "run"
    kwargs = dict(design_sha256=SHA, manifest=MANIFEST, resamples=50, seed=0)
    first = write_report(out, run, design=DESIGN, baseline_chatbot="thanks", **kwargs)
    before = first.read_text(encoding="utf-8")
    with pytest.raises(LabError, match="contrast"):
        write_report(out, run, design=bad, baseline_chatbot="thanks", **kwargs)
    assert first.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in out.iterdir()) == ["report"]


def test_a_run_without_judgments_still_writes_a_report(run, tmp_path):
    empty = type(run)(run.entries.iloc[:0], run.replies.iloc[:0], run.flags.iloc[:0])
    path = write_report(
        tmp_path,
        empty,
        design={"design": {"name": "empty"}},
        design_sha256=SHA,
        manifest={},
        resamples=50,
        seed=0,
        baseline_chatbot="thanks",
    )
    text = path.read_text(encoding="utf-8")
    assert "_no data_" in text
    assert np.all([imread(p).ndim == 3 for p in (path.parent / "plots").glob("*.png")])
