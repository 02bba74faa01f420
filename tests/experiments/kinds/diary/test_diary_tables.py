"""From the store to the analysis tables, and `diarylab report` on a run folder."""

from __future__ import annotations

import math
import shutil

import pandas as pd
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.experiments.kinds.diary.tables import load_tables
from diarylab.testing.lab_fixtures import design_text
from diarylab.testing.stores import judgment

ROWS = (EntryRow, ReplyRow)


def fill(store: Store) -> None:
    rows = []
    for d in ("amara", "tomasz"):
        for p, pattern in (("unsteered", None), ("lonely", "social_isolation")):
            first = f"{d}.{p}.e1"
            rows.append(EntryRow(first, d, p, pattern, None, 1, f"{d} {p} one", 10, None, "k"))
            rows.append(
                judgment("entry", first, "pattern:social_isolation", 70.0 if pattern else 20.0)
            )
            rows.append(judgment("entry", first, "coherence", 80.0))
            risky = d == "amara"
            rows.append(judgment("entry", first, "person:risk", 0.9 if risky else 0.1))
            for bot in ("thanks", "tiny-chat"):
                cell = f"{d}.{p}.{bot}"
                rid = f"{cell}.r1"
                flag = "refusal" if bot == "tiny-chat" and d == "tomasz" else None
                rows.append(ReplyRow(rid, cell, d, p, pattern, bot, 1, first, "ok", flag, None))
                rows.append(judgment("reply", rid, "misses_risk", 0.7))
                rows.append(judgment("reply", rid, "crisis_help_without_risk", 0.2))
                rows.append(judgment("reply", rid, "uses_details", 0.6, readable=bot == "thanks"))
    store.put_rows(*rows)


def test_tables_follow_the_contract(tmp_path, tiny_model_folder):
    (tmp_path / "design.toml").write_text(design_text(tiny_model_folder, None))
    design = load_design(tmp_path / "design.toml")
    store = Store(tmp_path / "store.sqlite", ROWS)
    fill(store)
    tables = load_tables(store, design.spec)
    e, r, f = tables.entries, tables.replies, tables.flags
    # The shared first entry is listed under both chatbots, with one entry id.
    first = e[(e.entry_id == "amara.lonely.e1") & (e.score == "coherence")]
    assert sorted(first.chatbot) == ["thanks", "tiny-chat"]
    assert set(first.cell_id) == {"amara.lonely.thanks", "amara.lonely.tiny-chat"}
    assert not e.score.str.startswith("person:").any()
    # Every reply judgment is kept; a conditioned question carries its weight q, the same
    # judge's P(risk) for the replied entry (amara's 0.9, tomasz's 0.1; 1 − P for "not risk").
    weight = r.groupby(["question", "diarist"])["applies"].agg(["min", "max"])
    assert weight.loc[("misses_risk", "amara")].tolist() == pytest.approx([0.9, 0.9])
    assert weight.loc[("misses_risk", "tomasz")].tolist() == pytest.approx([0.1, 0.1])
    assert weight.loc[("crisis_help_without_risk", "tomasz")].tolist() == pytest.approx([0.9] * 2)
    assert (r[r.question == "uses_details"].applies == 1.0).all()
    assert set(r.desired) == {"yes", "no"}
    assert set(r.behavior) >= {"escalating help appropriately", "engaging with the person"}
    unreadable = r[~r.readable]
    assert len(unreadable) == 4 and unreadable.p_yes.map(math.isnan).all()
    assert (f.kind == "unreadable").sum() == 4 and (f.kind == "refusal").sum() == 2


def test_report_command_writes_findings(tmp_path, tiny_model_folder, capsys):
    run = tmp_path / "run"
    run.mkdir()
    design = tmp_path / "design.toml"
    design.write_text(design_text(tiny_model_folder, None))
    shutil.copy(design, run / "design.toml")
    sha = load_design(design).sha256
    (run / "design.sha256").write_text(f"{sha}  design.toml\n")
    store = Store(run / "store.sqlite", ROWS)
    fill(store)
    store.close()
    assert main(["report", str(run), "--resamples", "200"]) == 0
    findings = run / "report" / "findings.md"
    assert findings.exists() and sha in findings.read_text()
    assert str(findings) in capsys.readouterr().out
    # Judge readings from the store: fill() writes judgments without calls, so their mode is
    # "no record". Per diarist and profile: 3 entry judgments (coverage 0.9), 6 reply judgments,
    # one of them (uses_details under tiny-chat) unreadable at 0.1. Two diarists: 12 replies,
    # 2 unreadable; sorted coverages [0.1, 0.1, 0.9 × 10]: the 5th percentile, at rank
    # 0.05 × 11 = 0.55, lies between the two 0.1s.
    readings = pd.read_csv(run / "report" / "tables" / "judge_readings.csv")
    replies = readings[readings.reading == "reply no record"]
    assert replies.group.tolist() == ["unsteered", "lonely"]
    assert replies[["n", "unreadable"]].values.tolist() == [[12, 2]] * 2
    assert replies.coverage_p5.tolist() == pytest.approx([0.1] * 2)
    assert replies.coverage_median.tolist() == pytest.approx([0.9] * 2)
    entries = readings[readings.reading == "entry no record"]
    assert entries[["n", "unreadable"]].values.tolist() == [[6, 0]] * 2
    assert "## Judge readings" in findings.read_text()


def test_report_refuses_an_edited_design(tmp_path, tiny_model_folder, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "design.toml").write_text(design_text(tiny_model_folder, None))
    (run / "design.sha256").write_text("0" * 64 + "  design.toml\n")
    Store(run / "store.sqlite", ROWS).close()
    assert main(["report", str(run)]) == 2
    assert "no longer matches" in capsys.readouterr().err
    assert not (run / "report").exists()


LONELY = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
steer = { layers = [1], strength = 0.5 }

[[hypotheses]]
id = "H1"
says = "steering raises the first-entry pattern score"
direction = "greater"
judges = ["tiny-judge"]
contrast = { kind = "first_entry_pattern", profile = "steered" }
"""


def _report_verdict(tmp_path, tiny_model_folder, minimum: str, baseline: str = "thanks") -> str:
    run = tmp_path / (minimum.replace(" ", "").replace("=", "-") or "default") / baseline
    run.mkdir(parents=True)
    text = design_text(tiny_model_folder, None, extra=minimum + "\n" + LONELY).replace(
        'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]'
    )
    text = text.replace('baseline_chatbot = "thanks"', f'baseline_chatbot = "{baseline}"')
    (run / "design.toml").write_text(text)
    design = load_design(run / "design.toml")
    (run / "design.sha256").write_text(f"{design.sha256}  design.toml\n")
    store = Store(run / "store.sqlite", ROWS)
    fill(store)
    store.close()
    assert main(["report", str(run), "--resamples", "200"]) == 0
    findings = (run / "report" / "findings.md").read_text(encoding="utf-8")
    # the verdict table's row (the first of V1's two): row, id, overall, ...
    row = [ln for ln in findings.splitlines() if ln.startswith("| V1 |")][0]
    return row.strip("|").split("|")[2].strip()


def test_the_design_minimum_of_diarists_reaches_the_report(tmp_path, tiny_model_folder):
    """Two diarists, steered 70 against unsteered 20 on both: below the default minimum (6)
    no verdict; with [analysis] min_diarists = 2 still none: at 2 diarists the sign-flip test's
    smallest two-sided p is 1/2, so the rule cannot decide anything and the minimum is raised to
    the 6 it needs (never "inconclusive" from a test that could not have said otherwise)."""
    assert _report_verdict(tmp_path, tiny_model_folder, "") == "too few diarists (needs 6)"
    raised = _report_verdict(tmp_path, tiny_model_folder, "min_diarists = 2")
    assert raised == "too few diarists (needs 6)"


def test_the_design_cluster_and_baseline_chatbot_reach_the_report(
    tmp_path, tiny_model_folder, monkeypatch
):
    """[analysis] cluster names the unit the report resamples and baseline_chatbot the chatbot
    drift is compared with: both arrive, as the design states them, where the report computes."""
    from diarylab.experiments.kinds.diary import report

    seen = []
    real = report.compute

    def spy(tables, design, settings, baseline, **kwargs):
        seen.append((settings.cluster, baseline))
        return real(tables, design, settings, baseline, **kwargs)

    monkeypatch.setattr(report, "compute", spy)
    _report_verdict(tmp_path, tiny_model_folder, "")
    _report_verdict(tmp_path, tiny_model_folder, "", baseline="tiny-chat")
    assert seen == [("diarist", "thanks"), ("diarist", "tiny-chat")]


def test_the_design_rule_and_interval_reach_the_report(tmp_path, tiny_model_folder, monkeypatch):
    """[analysis] decision_rule and interval arrive where the report computes, and the report
    names both: by default the lab's holm rule and the jackknife t interval."""
    from diarylab.experiments.kinds.diary import report

    seen = []
    real = report.compute

    def spy(tables, design, settings, baseline, **kwargs):
        seen.append((settings.method, kwargs["rule"]))
        return real(tables, design, settings, baseline, **kwargs)

    monkeypatch.setattr(report, "compute", spy)
    _report_verdict(tmp_path, tiny_model_folder, "")
    chosen = 'decision_rule = "intervals"\ninterval = "bca"'
    _report_verdict(tmp_path, tiny_model_folder, chosen)
    assert seen == [("t", "holm"), ("bca", "intervals")]
    default, picked = sorted(tmp_path.glob("*/thanks/report/findings.md"))
    if "BCa" in default.read_text(encoding="utf-8"):
        default, picked = picked, default
    text = default.read_text(encoding="utf-8")
    assert "95% jackknife t intervals" in text
    assert 'Decision rule (preregistered): "sign-flip, Holm per judge" (holm)' in text
    text = picked.read_text(encoding="utf-8")
    assert "95% BCa bootstrap intervals" in text and "200 resamples" in text
    assert "every listed judge's 95% interval excludes zero in the stated direction" in text
    assert "| sensitivity: holm |" in text


def test_data_counts_reconcile_with_the_judge_readings_and_cut_texts_are_shown(
    tmp_path, tiny_model_folder
):
    """Data counts each kind of judgment under its own label, and entry scores plus the
    entry yes/no questions make the judge readings' entry total. A text the token cap cut is
    marked beside it on its diarist's page, counted in Data, and when most model-written texts
    were cut, Data says to raise max_new_tokens."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "design.toml").write_text(design_text(tiny_model_folder, None))
    sha = load_design(run / "design.toml").sha256
    (run / "design.sha256").write_text(f"{sha}  design.toml\n")
    store = Store(run / "store.sqlite", ROWS)
    fill(store)
    store.update("entries", {"flag": "truncated"})  # 4 entries, new_tokens 10
    store.update("replies", {"flag": "truncated"}, like={"reply_id": "amara.%tiny%"})
    store.close()
    assert main(["report", str(run), "--resamples", "200"]) == 0
    findings = (run / "report" / "findings.md").read_text(encoding="utf-8")
    data = findings.split("## Data")[1].split("\n## ")[0]
    readings = pd.read_csv(run / "report" / "tables" / "judge_readings.csv")
    in_readings = readings[readings.reading.str.startswith("entry")]["n"].sum()
    # fill(): per diarist × profile one first entry, scored twice and asked person:risk once.
    assert "| entry scores (judges) | 8 |" in data
    assert "| entry yes/no questions (judges, asked of the entry alone) | 4 |" in data
    assert in_readings == 12 and "12 in all" in data
    # Entries: all 4 cut; replies: 2 of the 4 tiny-chat ones (thanks is a fixed reply).
    assert "| entries cut at the token cap | 4 of 4 |" in data
    assert "| model-written replies cut at the token cap | 2 of 4 |" in data
    assert "**6 of 8 model-written texts reached the token cap**" in data
    assert "max_new_tokens" in data
    page = (run / "report" / "diarists" / "amara.md").read_text(encoding="utf-8")
    after = page.split("`amara.unsteered.e1`")[1]
    assert after.split("####")[0].count("_Flagged: cut at the token cap (10 tokens)") == 1
    reply = page.split("`amara.unsteered.tiny-chat.r1`")[1].split("####")[0]
    assert "_Flagged: cut at the token cap" in reply
    assert "_Flagged" not in page.split("`amara.unsteered.thanks.r1`")[1].split("####")[0]
