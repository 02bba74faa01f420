"""The findings report: DIR/report/findings.md with its tables, PNG plots, per-diarist pages,
CSV copies of every table at full precision, and sources.csv mapping each row id in the
report to the store ids (entries, replies) its number was computed from.

Everything is computed before anything is written, and the report folder is swapped in whole,
so a bad hypothesis or a crash never leaves half a report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis import readings
from diarylab.experiments.analysis import usage as calls
from diarylab.experiments.analysis.bootstrap import BootstrapSettings, Method
from diarylab.experiments.analysis.html_page import write_page
from diarylab.experiments.analysis.rules import Rule
from diarylab.experiments.analysis.verdicts import MIN_CLUSTERS
from diarylab.experiments.engine.runfolder import replaced_folder
from diarylab.experiments.kinds.diary import behaviors, comparisons, html, plots
from diarylab.experiments.kinds.diary import projection_scores as projection
from diarylab.experiments.kinds.diary.agreement import judge_agreement
from diarylab.experiments.kinds.diary.contrasts import parse_hypotheses
from diarylab.experiments.kinds.diary.data_section import data_section
from diarylab.experiments.kinds.diary.frames import AnalysisTables, ordered
from diarylab.experiments.kinds.diary.hypotheses import hypothesis_table
from diarylab.experiments.kinds.diary.pages import diarist_page
from diarylab.experiments.kinds.diary.sections import Results, header, method, sections
from diarylab.rubric.behavior_rubric import load_behavior_rubric

# Row-id prefixes: a number in findings.md is found in sources.csv by its row id.
PREFIXES = {
    "hypotheses": "V",  # V for verdict: "H1" would read as a hypothesis id
    "steering": "S",
    "quality": "Q",
    "drift_change": "C",
    "drift_vs_baseline": "B",
    "steered_vs_baseline": "T",
    "drift": "D",
    "behaviors": "R",
    "behavior_questions": "RQ",
    "hard_cut": "RH",
    "agreement": "A",
}


# Tables findings.md shows only the all-profiles rows of (the per-profile rows are in tables/):
# those rows are numbered first, so the ids a reader sees run R1, R2, … without a gap.
POOLED_SHOWN = ("behaviors", "behavior_questions")


def shown_first(frame: pd.DataFrame) -> pd.DataFrame:
    """The pooled (all profiles) rows first, each group in its own order."""
    if frame.empty or "profile" not in frame:
        return frame
    pooled = frame["profile"] == comparisons.ALL_PROFILES
    return pd.concat([frame[pooled], frame[~pooled]], ignore_index=True)


OTHER_SCALE = (
    "The projection is in units of the residual norm and the judge's score is 0–100: each axis "
    "has its own range and there is no identity line; read the correlation, not the distance "
    "from y = x.\n"
)


def rubric_conditions() -> dict[str, str]:
    """Question id -> applies_when, for the conditioned questions of the shipped rubric."""
    return {q.id: q.applies_when for q in load_behavior_rubric().questions if q.applies_when}


def compute(
    tables: AnalysisTables,
    design: Mapping[str, Any],
    settings: BootstrapSettings,
    baseline: str,
    *,
    min_diarists: int = MIN_CLUSTERS,
    rule: Rule = "holm",
) -> Results:
    """Every number the report shows, as tables (pure: no files)."""
    hypotheses = parse_hypotheses(design, "design")
    e, r = tables.entries, tables.replies
    found = {
        "hypotheses": hypothesis_table(tables, design, settings, min_diarists, rule),
        "steering": comparisons.steering_effect(e, settings),
        "quality": comparisons.quality(e, settings),
        "drift_change": comparisons.drift_change(e, settings),
        "drift_vs_baseline": comparisons.drift_vs_baseline(e, settings, baseline),
        "steered_vs_baseline": comparisons.steered_vs_baseline(e, settings, baseline),
        "drift": comparisons.drift(e, settings),
        "behaviors": behaviors.behaviors(r, settings),
        "behavior_questions": behaviors.questions(r, settings),
        "hard_cut": behaviors.hard_cut(r, settings, rubric_conditions()),
        "agreement": judge_agreement(e, r, settings),
    }
    for name, frame in found.items():
        frame = shown_first(frame) if name in POOLED_SHOWN else frame
        ids = [f"{PREFIXES[name]}{i + 1}" for i in range(len(frame))]
        found[name] = frame.assign(row_id=ids) if len(frame) else frame.assign(row_id=[])
    return Results(
        found, comparisons.pattern_by_entry(e, settings), min_diarists, len(hypotheses), rule
    )


def _sources(res: Results) -> pd.DataFrame:
    rows = [
        {"row_id": row["row_id"], "table": name, "ids": md.join_ids(row["sources"])}
        for name, frame in res.tables.items()
        if len(frame)
        for _, row in frame.iterrows()
    ]
    return pd.DataFrame(rows, columns=["row_id", "table", "ids"])


def write_report(
    out_dir: Path,
    tables: AnalysisTables,
    *,
    design: dict,
    design_sha256: str,
    manifest: dict,
    resamples: int,
    seed: int,
    baseline_chatbot: str,
    cluster: str = "diarist",
    min_diarists: int = MIN_CLUSTERS,
    judge_readings: pd.DataFrame | None = None,
    bounds: Mapping[tuple[str, str, str], tuple[float, float]] | None = None,
    coverage_floor: float | None = None,
    decision_rule: Rule = "holm",
    interval: Method = "t",
    usage: pd.DataFrame | None = None,
    plan_lines: Sequence[str] = (),
    rating_lines: Sequence[str] = (),
    judge_boxes: Sequence[str] = (),
) -> Path:
    """Write out_dir/report/ and return the path of findings.md. judge_readings: the store's
    readings per judge × profile (readings.summarize), usage its calls and tokens per model
    (experiments/analysis/usage.py); None leaves that section out. bounds:
    each reading's certified interval (html_page.judgment_bounds), shown on index.html.
    judge_boxes: said at the top beside the embedded-judge box (a judge the raters found no
    better than chance: experiments/rating/chance_box.py)."""
    out_dir = Path(out_dir)
    settings = BootstrapSettings(cluster, resamples=resamples, seed=seed, method=interval)
    res = compute(
        tables, design, settings, baseline_chatbot, min_diarists=min_diarists, rule=decision_rule
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    with replaced_folder(out_dir / "report") as work:
        judges = ordered(tables.entries["judge"])
        figures = work / "plots"
        plots.pattern_by_entry(
            res.pattern_by_entry, figures / "pattern_by_entry.png", baseline_chatbot
        )
        plots.coherence_vs_pattern(tables.entries, figures / "coherence_vs_pattern.png")
        plots.drift_change(
            res.tables["drift_change"], figures / "drift_change.png", baseline_chatbot
        )
        plots.behavior_shares(
            res.tables["behaviors"], figures / "behavior_shares.png", baseline_chatbot
        )
        agreement = []
        for a, b in zip(judges, judges[1:], strict=False):
            png = plots.judge_agreement(tables.entries, a, b, figures / f"agreement_{a}__{b}.png")
            agreement.append(f"![{a} vs {b}](plots/{png.name})\n")
            if not plots.same_scale(a, b):
                agreement.append(OTHER_SCALE)
        (work / "tables").mkdir()
        for name, frame in res.tables.items():
            frame.assign(sources=frame["sources"].map(md.join_ids) if len(frame) else []).to_csv(
                work / "tables" / f"{name}.csv", index=False
            )
        res.pattern_by_entry.to_csv(work / "tables" / "pattern_by_entry.csv", index=False)
        reading_lines: list[str] = []
        if judge_readings is not None:
            judge_readings.to_csv(work / "tables" / "judge_readings.csv", index=False)
            reading_lines = readings.section(judge_readings, "profile", coverage_floor)
        usage_lines: list[str] = []
        if usage is not None:
            usage.to_csv(work / "tables" / "usage.csv", index=False)
            usage_lines = calls.section(usage, out_dir)
        sources = _sources(res)
        sources.to_csv(work / "sources.csv", index=False)
        (work / "diarists").mkdir()
        diarists = ordered(pd.concat([tables.entries["diarist"], tables.replies["diarist"]]))
        for diarist in diarists:
            page = diarist_page(
                diarist, tables.entries, tables.replies, tables.flags, baseline_chatbot
            )
            (work / "diarists" / f"{diarist}.md").write_text(page, encoding="utf-8")
        links = "\n".join(f"- [{d}](diarists/{d}.md)" for d in diarists)
        findings = "\n".join(
            [
                header(design, design_sha256, manifest, out_dir, judge_boxes),
                method(settings, baseline_chatbot, tables.entries["diarist"].nunique(), res),
                data_section(tables, judge_readings, design),
                *reading_lines,
                *usage_lines,
                *plan_lines,
                *sections(res, baseline_chatbot),
                *projection.section(res.tables["steering"], res.tables["agreement"]),
                *agreement,
                *rating_lines,
                "## Diarists\n",
                links + "\n",
            ]
        )
        (work / "findings.md").write_text(findings, encoding="utf-8")
        title = f"Findings: {design.get('design', {}).get('name', 'diary')}"
        write_page(work, findings, html.viewer(tables, sources, baseline_chatbot, title, bounds))
    return out_dir / "report" / "findings.md"
