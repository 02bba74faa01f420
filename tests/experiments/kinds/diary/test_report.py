"""The findings report: files, images, tables that match the data, traceability."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from diarylab.experiments.analysis.markdown import MISSING
from diarylab.experiments.kinds.diary.report import write_report
from diarylab.foundation.datafiles import load_toml
from diarylab.foundation.errors import LabError
from diarylab.testing.synthetic_diary import Plant, make_tables

ROOT = Path(__file__).resolve().parents[4]
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


def _rows(text: str, row_id: str) -> list[list[str]]:
    """Every table line of the row, in page order (a verdict's row is in the verdict table and
    in the table of its test's figures)."""
    lines = [ln for ln in text.splitlines() if ln.startswith(f"| {row_id} |")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def _row(text: str, row_id: str) -> list[str]:
    [row] = _rows(text, row_id)
    return row


def test_header_carries_design_hash_and_manifest(report):
    path, text = report
    assert path.name == "findings.md" and path.parent.name == "report"
    assert text.startswith("# Findings: synthetic-diary")
    assert SHA in text.split("## How to read this")[0]
    # The manifest as rows, no raw JSON: a part the view has no sentence for, as key value.
    assert "| git commit | abc1234 |" in text
    assert "| models | diarist smollm2 |" in text
    assert "[manifest.json](../manifest.json)" in text


def test_every_plot_is_a_png_that_opens(report):
    path, text = report
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 5
    assert "plots/drift_change.png" in links
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
        assert cells[-2].startswith(f"{expected:.1f} [")  # the last column: the checks
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

    r = run.replies[run.replies["readable"]]
    mine = r[(r["judge"] == "judge-b") & (r["chatbot"] == "cold") & (r["behavior"] == "escalation")]
    # Appropriate answers pooled over the behavior's questions, each weighted by q.
    good = np.where(mine["desired"] == "yes", mine["p_yes"], 1 - mine["p_yes"])
    pooled = (good * mine["applies"]).sum() / mine["applies"].sum()
    cells = _cells(text, r"\| R\d+ \| judge-b \| cold \| escalation \|")
    assert cells[4] == str(mine["reply_id"].nunique())
    assert cells[5] == f"{mine['applies'].sum():.1f}"
    # Kish's n of the weights, beside Σq (per reply × question here).
    kish = mine["applies"].sum() ** 2 / (mine["applies"] ** 2).sum()
    assert cells[6] == f"{kish:.1f}"
    assert cells[7].startswith(f"{pooled:.2f} [")
    # Per question: the soft share of yes, Σq, and the appropriate share beside it.
    misses = mine[mine["question"] == "misses_risk"]
    soft = (misses["p_yes"] * misses["applies"]).sum() / misses["applies"].sum()
    cells = _cells(text, r"\| RQ\d+ \| judge-b \| cold \| misses_risk \|")
    assert cells[4:7] == ["no", str(len(misses)), f"{misses['applies'].sum():.1f}"]
    kish = misses["applies"].sum() ** 2 / (misses["applies"] ** 2).sum()
    assert cells[7] == f"{kish:.1f}"
    assert cells[8].startswith(f"{soft:.2f} [") and cells[9].startswith(f"{1 - soft:.2f} [")
    # The hard cut, only as a sensitivity table: kept where q ≥ 0.5, yes where P(yes) ≥ 0.5.
    kept = misses[misses["applies"] >= 0.5]
    cells = _cells(text, r"\| RH\d+ \| judge-b \| cold \| misses_risk \|")
    assert cells[4:7] == ["risk", str(len(misses)), str(len(kept))]
    assert cells[8] == f"{kish:.1f}" and cells[9] == f"{soft:.2f}"
    assert cells[10].startswith(f"{(kept['p_yes'] >= 0.5).mean():.2f} [")


def _cells(text: str, pattern: str) -> list[str]:
    [line] = [ln for ln in text.splitlines() if re.match(pattern, ln)]
    return [c.strip() for c in line.strip("|").split("|")]


def test_only_the_hypotheses_carry_verdicts_every_other_table_is_exploratory(report):
    _, text = report
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    plain = {"Manifest", "How to read this", "Data", "Hypotheses (preregistered)", "Diarists"}
    tables = [h for h in headings if h not in plain]
    assert len(tables) == 5
    assert all(h.endswith("(exploratory, unadjusted)") for h in tables), tables
    hypotheses = text.split("## Hypotheses (preregistered)")[1].split("\n## ")[0]
    assert "Holm" in hypotheses and "sign-flip" in hypotheses
    verdicts, figures = [ln for ln in hypotheses.splitlines() if ln.startswith("| row |")]
    assert verdicts.startswith("| row | id | overall |")  # the verdict first
    assert "| p | p (Holm) | MDE |" in figures


def test_hypotheses_and_agreement_are_reported(report):
    path, text = report
    verdict, figures = _rows(text, "V1")
    assert verdict[1] == figures[1] == "H1"
    assert verdict[-1] == "first_entry_pattern(steered) − first_entry_pattern(unsteered)"
    # overall, and the sensitivity rule's overall, for both judges' rows
    assert {_rows(text, f"V{i}")[0][2] for i in (1, 2)} == {"supported"}
    assert {_rows(text, f"V{i}")[1][-1] for i in (1, 2)} == {"supported"}
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


def test_the_demo_design_on_two_diarists_reports_too_few_diarists(tmp_path):
    """The shipped demo (2 diarists, one judge, H1 on the first entry) on a synthetic store of
    its shape: H1 gets no verdict however large the effect, and the other tables are marked
    exploratory."""
    design = load_toml(ROOT / "experiments" / "designs" / "demo.toml")
    [judge] = [j["id"] for j in design["judges"]]
    plant = Plant(
        diarists=2,
        patterns=("social_isolation",),
        chatbots=("thanks", "smollm2-chat"),
        judges=(judge,),
        judge_offsets=(0.0,),
        drift={"thanks": 0.0, "smollm2-chat": -2.0},
        yes_rate={"thanks": 0.1, "smollm2-chat": 0.5},
        steering=40.0,
    )
    path = write_report(
        tmp_path,
        make_tables(plant, seed=3),
        design=design,
        design_sha256=SHA,
        manifest=MANIFEST,
        resamples=200,
        seed=1,
        baseline_chatbot=design["analysis"]["baseline_chatbot"],
    )
    text = path.read_text(encoding="utf-8")
    verdict, figures = _rows(text, "V1")
    assert verdict[1] == "H1" and verdict[3] == judge and figures[4] == "2"
    assert float(verdict[5].split()[0]) > 20  # a large estimate, still no verdict
    assert verdict[2] == verdict[4] == "too few diarists (needs 6)"
    assert "## Did steering work? (exploratory, unadjusted)" in text
    assert "## Drift over the conversation (exploratory, unadjusted)" in text
    assert "## Behaviors (exploratory, unadjusted)" in text


def test_an_8_diarist_report_prints_the_proved_intervals_the_mde_and_the_rule(run, report):
    """What issue 21 asks of an 8-diarist report: the tables' interval is the jackknife t
    (coverage proved in tests/experiments/analysis/test_small_sample.py), each verdict's interval
    the sign-flip one (ditto), the MDE the sign-flip test's own at Holm's first step (its power
    proved there), and the decision rule and its sensitivity named."""
    from scipy import stats

    from diarylab.experiments.analysis.rules import mde_sd
    from diarylab.experiments.analysis.verdicts import sign_flip_interval
    from diarylab.experiments.kinds.diary import paired

    path, text = report
    assert run.entries["diarist"].nunique() == 8
    assert "Intervals on the tables are 95% jackknife t intervals" in text
    assert 'Decision rule (preregistered): "sign-flip, Holm per judge" (holm)' in text
    assert '"every listed judge\'s 95% interval excludes zero in the stated direction"' in text
    assert "Family-wise error of the preregistered rule as run (holm)" in text
    verdicts, figures = [ln for ln in text.splitlines() if ln.startswith("| row | id |")][:2]
    assert "estimate [95% sign-flip]" in verdicts and "| sensitivity: intervals |" in figures
    verdicts = pd.read_csv(path.parent / "tables" / "hypotheses.csv")
    for _, row in verdicts[verdicts["id"] == "H1"].iterrows():
        x = paired.first_entry_steering(run.entries, row["judge"], None)["diff"].to_numpy()
        assert (row["low"], row["high"]) == pytest.approx(sign_flip_interval(list(x)))
        # The verdict's MDE: both judges agreeing at their correlation in this run.
        rho = row["judge_correlation"]
        assert row["mde"] == pytest.approx(
            x.std(ddof=1) * mde_sd("holm", 8, 2, judges=2, correlation=rho)
        )
        assert row["rule"] == "holm" and row["sensitivity_rule"] == "intervals"
    steering = pd.read_csv(path.parent / "tables" / "steering.csv")
    row = steering.iloc[0]
    x = paired.first_entry_steering(run.entries, row["judge"], row["profile"])["diff"]
    expected = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert (row["low"], row["high"]) == pytest.approx(expected)


def _tables_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(section heading, the row ids of one Markdown table) for every table with row ids."""
    out, heading, block = [], "", []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            heading = line.lstrip("# ")
        found = re.match(r"^\| ([A-Z]+\d+) \|", line)
        if found:
            block.append(found.group(1))
        elif block:
            out.append((heading, block))
            block = []
    return out


def test_row_ids_run_without_gaps_in_every_table_and_trace_to_sources(report):
    """Rows are numbered after the report picks the rows it shows (the behavior tables show
    only the pooled rows): R1, R2, … in each table, never R4 → R13; every id is in
    sources.csv under its table."""
    path, text = report
    sources = pd.read_csv(path.parent / "sources.csv").set_index("row_id")
    blocks = _tables_blocks(text)
    assert len(blocks) >= 9
    for heading, ids in blocks:
        prefix = re.match(r"[A-Z]+", ids[0]).group(0)
        assert ids == [f"{prefix}{i}" for i in range(1, len(ids) + 1)], (heading, ids)
        assert set(ids) <= set(sources.index)
    behaviors = pd.read_csv(path.parent / "tables" / "behaviors.csv")
    pooled = behaviors[behaviors["profile"] == "(all)"]
    assert pooled["row_id"].tolist() == [f"R{i}" for i in range(1, len(pooled) + 1)]
    assert (sources.loc[behaviors["row_id"], "table"] == "behaviors").all()


def with_projection(run):
    """The synthetic run plus the judge-free projection: judge-a's pattern scores in residual
    norm units (about 0.1), and no coherence or realism, as a real run stores it."""
    e = run.entries
    proj = e[(e["judge"] == "judge-a") & e["score"].str.startswith("pattern:")]
    proj = proj.assign(judge="projection", mean=proj["mean"] / 400 + 0.0123)
    return type(run)(pd.concat([e, proj], ignore_index=True), run.replies, run.flags)


@pytest.fixture(scope="module")
def projected(run, tmp_path_factory):
    tables = with_projection(run)
    out = tmp_path_factory.mktemp("projected")
    path = write_report(
        out,
        tables,
        design=DESIGN,
        design_sha256=SHA,
        manifest=MANIFEST,
        resamples=200,
        seed=5,
        baseline_chatbot="thanks",
    )
    return tables, path, path.read_text(encoding="utf-8")


def test_the_projection_is_shown_to_three_decimals_and_judge_scores_to_one(projected):
    _, path, text = projected
    three = re.compile(r"^-?\d+\.\d{3} \[-?\d+\.\d{3}, -?\d+\.\d{3}\]$")
    one = re.compile(r"^-?\d+\.\d \[-?\d+\.\d, -?\d+\.\d\]$")
    table = text.split("## Did steering work?")[1].split("\n## ")[0]
    steering = [_cells(table, rf"\| S{i} \|") for i in range(1, 7)]
    by_judge = {cells[1] for cells in steering}
    assert by_judge == {"projection", "judge-a", "judge-b"}
    for cells in steering:
        shape = three if cells[1] == "projection" else one
        assert shape.match(cells[-2]), cells
        assert re.match(r"^-?\d+\.\d{3}$" if cells[1] == "projection" else r"^-?\d+\.\d$", cells[4])
    page = next((path.parent / "diarists").glob("*.md")).read_text(encoding="utf-8")
    lines = [ln for ln in page.splitlines() if ln.startswith("| pattern:isolation |")]
    [line] = [ln for ln in lines if "unreadable" not in ln and MISSING not in ln][:1]
    assert re.match(r"^\| pattern:isolation \| -?\d+\.\d \| -?\d+\.\d \| -?\d+\.\d{3} \|$", line)


def test_coherence_plot_has_no_panel_for_a_measure_without_coherence(projected):
    from diarylab.experiments.kinds.diary import plots

    tables, _, _ = projected
    panels = plots.coherence_points(tables.entries)
    assert list(panels) == ["judge-a", "judge-b"]
    assert all(len(p) and p[["pattern", "coherence"]].notna().all().all() for p in panels.values())


def test_agreement_plot_keeps_the_identity_line_to_judges_on_one_scale(projected):
    from diarylab.experiments.kinds.diary import plots

    tables, path, text = projected
    assert plots.same_scale("judge-a", "judge-b")
    assert not plots.same_scale("judge-b", "projection")
    points = plots.agreement_points(tables.entries, "judge-b", "projection")
    assert set(points["kind"]) == {"pattern"}  # the projection reads patterns only
    assert points["projection"].abs().max() < 1 < points["judge-b"].max()
    assert "plots/agreement_judge-b__projection.png" in text
    after = text.split("plots/agreement_judge-b__projection.png)")[1]
    assert after.lstrip().startswith("The projection is in units of the residual norm")
