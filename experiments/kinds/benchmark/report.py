"""The benchmark report: folder/report/findings.md and its CSV tables, from the store.

A leaderboard per judge with bootstrap intervals (the published reading, met = P ≥ 0.5, and the
expected-points score), on the published scale too when the design names two anchors (flagged
when they are placeholders); per-axis scores in both conventions, HealthBench's tag scores and
per-acuity scores; refusals and empty replies (graded as returned); what grading left ungraded
or unreadable, per chatbot, with the sensitivity counting ungraded as not met; the judges'
written verdicts against their read probabilities; all paired chatbot comparisons
(Holm-corrected per judge; exploratory: no hypothesis was preregistered); each judge's severity
and the judges' ranking agreement; and the grader-validation table when the design asks for
one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from diarylab.experiments.analysis import manifest_view, readings
from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis import usage as calls
from diarylab.experiments.analysis.html_page import write_page
from diarylab.experiments.engine.runfolder import replaced_folder
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark import html
from diarylab.experiments.kinds.benchmark.calibrate import AnchorPoint
from diarylab.experiments.kinds.benchmark.inputs import conversations_of
from diarylab.experiments.kinds.benchmark.leaderboard import Board, board
from diarylab.experiments.kinds.benchmark.report_answers import (
    malformed_answers,
    malformed_section,
    strata_section,
    stratum_label,
    stratum_word,
)
from diarylab.experiments.kinds.benchmark.report_board import (
    comparisons_section,
    flags_table,
    judges_section,
    leaderboard_section,
)
from diarylab.experiments.kinds.benchmark.report_grading import (
    axes_section,
    sensitivity_section,
    tags_frame,
    tags_section,
    ungraded_by_chatbot,
    verdict_agreement,
    verdict_section,
)
from diarylab.experiments.kinds.benchmark.sample_store import stored_sample
from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile, Calibration
from diarylab.experiments.kinds.benchmark.scoring import ungraded_as_not_met
from diarylab.experiments.kinds.benchmark.tables import flags, graded_frame, grading_counts
from diarylab.experiments.kinds.benchmark.validation import validation_section

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import Design


def write_report(folder: Path, store: Store, design: Design, resamples: int) -> Path:
    from diarylab.experiments.engine.runfolder import read_manifest

    spec = cast(BenchmarkDesignFile, design.spec)
    table = spec.benchmark
    manifest = read_manifest(folder)
    ids = manifest.get("benchmark", {}).get("sample", {}).get("ids") or []
    conversations = stored_sample(store, ids) or conversations_of(design)
    judges = [j.id for j in spec.judges]
    graded = graded_frame(store, conversations, judges)
    anchors = _anchor_points(table.calibration)
    placeholder = bool(table.calibration) and any(
        a.placeholder
        for a in table.calibration.anchors  # type: ignore[union-attr]
    )
    boards = [
        board(graded, table.scoring, reading, resamples, design.seed, anchors)
        for reading in ("met", "expected")
    ]
    sensitivity = board(
        ungraded_as_not_met(graded), table.scoring, "met", resamples, design.seed, anchors
    )
    usage = calls.usage_table(store, folder)
    malformed = malformed_answers(store)
    criteria = sum(len(c.criteria) for c in conversations) * len(spec.chatbots)
    judge_readings = _judge_readings(store)
    verdicts = verdict_agreement(store, judges)
    scale = _scale(anchors is not None, placeholder)
    parts = [
        _header(design, manifest, resamples, table.format),
        manifest_view.section(manifest, folder),
        *_anchors_note(table.calibration, placeholder),
        *leaderboard_section(boards[0], scale, "published reading: met = P(met) ≥ 0.5"),
        *leaderboard_section(boards[1], scale, "expected points: Σ P(met) × points"),
        axes_section(boards[0]),
        tags_section(boards[0]),
        strata_section(boards[0], table.format),
        "## Replies flagged (graded as returned)\n",
        flags_table(flags(store)),
        "## Grading\n",
        md.table(
            grading_counts(store, judges, criteria),
            {c: c for c in grading_counts(store, judges, criteria).columns},
        ),
        malformed_section(malformed),
        sensitivity_section(graded, boards[0], sensitivity),
        verdict_section(verdicts),
        *readings.section(judge_readings, "chatbot", design.coverage_floor, UNREAD_WHY),
        *calls.section(usage, folder),
        *calls.plan_section(store, folder),
        comparisons_section(boards[0]),
        judges_section(boards[0]),
        validation_section(store, design, graded, resamples),
    ]
    out = Path(folder)
    with replaced_folder(out / "report") as work:
        (work / "tables").mkdir()
        graded.to_csv(work / "tables" / "graded_criteria.csv", index=False)
        judge_readings.to_csv(work / "tables" / "judge_readings.csv", index=False)
        verdicts.to_csv(work / "tables" / "verdict_agreement.csv", index=False)
        usage.to_csv(work / "tables" / "usage.csv", index=False)
        malformed.to_csv(work / "tables" / "malformed_answers.csv", index=False)
        ungraded_by_chatbot(graded).to_csv(work / "tables" / "ungraded.csv", index=False)
        _scores(sensitivity).to_csv(
            work / "tables" / "leaderboard_met_ungraded_as_not_met.csv", index=False
        )
        for b in boards:
            _scores(b).to_csv(work / "tables" / f"leaderboard_{b.reading}.csv", index=False)
            tags_frame(b).to_csv(work / "tables" / f"tag_scores_{b.reading}.csv", index=False)
            pd.DataFrame([c.__dict__ for c in b.comparisons]).to_csv(
                work / "tables" / f"comparisons_{b.reading}.csv", index=False
            )
        (work / "findings.md").write_text("\n".join(parts), encoding="utf-8")
        page = html.viewer(store, conversations, graded, f"Findings: {design.name}")
        write_page(work, "\n".join(parts), page)
    return out / "report" / "findings.md"


def _scores(b: Board) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in s.__dict__.items() if k != "tags"} for s in b.scores])


def _anchor_points(cal: Calibration | None) -> tuple[AnchorPoint, AnchorPoint] | None:
    if cal is None:
        return None
    points = []
    for a in cal.anchors:
        assert a.se is not None  # the schema requires it
        points.append(AnchorPoint(a.chatbot, a.published, a.se))
    return points[0], points[1]


def _scale(calibrated: bool, placeholder: bool) -> str | None:
    if not calibrated:
        return None
    return "published scale (PLACEHOLDER anchors)" if placeholder else "published scale"


def _anchors_note(cal: Calibration | None, placeholder: bool) -> list[str]:
    if cal is None:
        return []
    rows = pd.DataFrame(
        [
            {
                "anchor": a.chatbot,
                "published": md.number(a.published, 3),
                "se": md.number(a.se, 3),
                "source": a.source,
                "placeholder": "yes" if a.placeholder else "no",
            }
            for a in cal.anchors
        ]
    )
    warning = (
        "\n**The anchors' published scores are placeholders** (marked `placeholder = true` in "
        "the design): every number on the published scale below is a stand-in, not a finding. "
        "Replace them with the published values and their source.\n"
        if placeholder
        else ""
    )
    return ["## Calibration anchors\n", md.table(rows, {c: c for c in rows.columns}) + warning]


UNREAD_WHY = (
    "An unreadable criterion leaves the chatbot's score without it, and one chatbot's replies "
    "may be unreadable more often than another's, so missing readings are not random: compare "
    "these rows across chatbots before reading the leaderboard."
)


def _judge_readings(store: Store) -> pd.DataFrame:
    """Readings per judge × chatbot (a reply's criteria under its chatbot); the grader
    validation's whole-conversation questions under "(conversation)"."""
    groups = {("reply", r): c for r, c in store.select("bench_replies", ("reply_id", "chatbot"))}
    for (target,) in store.select(
        "judgments",
        ("target_id",),
        where={"target_kind": "conversation"},
        order_by=("target_id",),
        distinct=True,
    ):
        groups[("conversation", target)] = "(conversation)"
    return readings.summarize(readings.stored_readings(store, groups))


def _header(design: Design, manifest: dict[str, Any], resamples: int, fmt: str) -> str:
    bench = manifest.get("benchmark", {})
    sample = bench.get("sample", {})
    grader = manifest.get("grader_template", {})
    return (
        f"# Benchmark: {design.name}\n\n"
        + md.key_values(
            {
                "design sha256": design.sha256,
                "format": bench.get("format", "?"),
                "scoring convention": bench.get("convention", "?"),
                "data file sha256": sample.get("data_sha256", "?"),
                "conversations sampled": sample.get("size", "?"),
                f"sample allocation (by {stratum_word(fmt)})": ", ".join(
                    f"{stratum_label(k, fmt)} {n}" for k, n in sample.get("allocation", {}).items()
                ),
                "grader template": f"{grader.get('id', '?')} sha256 {grader.get('sha256', '?')}",
                "grader settings": {
                    "reference": "HealthBench's reference grader (system message, temperature "
                    "0.5, 2,048 tokens)",
                    "lab": "the lab's own (no added system message, temperature 0), not the "
                    "reference grader's",
                }.get(grader.get("defaults", "lab"), "?"),
                "grader system message": "yes" if grader.get("system_message") else "none",
                "grader generation": grader.get("generation", "?"),
                "bootstrap": f"{resamples} resamples of conversations, seed {design.seed}",
            }
        )
        + "\nDemo-sized runs on the embedded default model are not findings: a 135M judge is "
        "not a grader.\n"
    )
