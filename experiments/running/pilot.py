"""Sizing a study from a pilot, for every kind that supports it (experiments/engine/tasks.py,
PilotSupport): run a reduced copy of a design (its first N clusters) into its own folder with
the same engine, write one text's prompt per cluster and profile again R times (which text is
the kind's choice: the diary's first entry, a friends writer's first outcome letter), and
report per preregistered contrast and judge: the per-cluster SD of the contrast, the noise of
a single text's score (the same prompt written R times), and the minimum detectable effect of
the full design at 80% power under the design's decision rule, for the sign-flip test itself
(experiments/analysis/rules.py: seeded simulation; for "holm" at the first Holm step's level
alpha / m, m = the design's number of hypotheses; for "intervals" at the unadjusted 95%)."""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from diarylab.experiments.analysis.rules import (
    DEFAULT_JUDGE_CORRELATION,
    Rule,
    judge_correlation,
    mde,
    one_sided_level,
    rounded_correlation,
)
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.contract import Design, PilotSupport, RunContext
from diarylab.experiments.engine.runfolder import RESULTS, STORE_FILE
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import TextNoise
from diarylab.experiments.running.runner import JudgeSet, run_design
from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.errors import LabError
from diarylab.foundation.toml_writing import dump_toml

POWER = 0.8
DESIGN_FILE = "pilot-design.toml"


@dataclass(frozen=True)
class PilotRow:
    hypothesis: str
    judge: str
    pilot_clusters: int
    mean: float
    cluster_sd: float
    text_noise_sd: float
    noise_prompts: int
    repeats: int
    full_clusters: int
    hypotheses: int
    alpha: float  # the two-sided level the rule tests at (Holm's first step for "holm")
    mde: float
    rule: str = "holm"
    judges: int = 1  # every judge must agree: the MDE is the verdict's
    judge_correlation: float = math.nan  # between the judges' per-cluster contrasts, measured


@dataclass(frozen=True)
class PilotResult:
    folder: Path
    rows: tuple[PilotRow, ...]
    cluster_word: str = "diarist"
    text_word: str = "entry"

    def table(self) -> str:
        head = (
            f"hypothesis  judge  pilot n  mean  per-{self.cluster_word.replace(' ', '-')} SD  "
            f"single-{self.text_word} SD (prompts×R)  verdict MDE at full n"
        )
        lines = [head]
        for r in self.rows:
            lines.append(
                f"{r.hypothesis}  {r.judge}  {r.pilot_clusters}  {_f(r.mean)}  "
                f"{_f(r.cluster_sd)}  {_f(r.text_noise_sd)} ({r.noise_prompts}×{r.repeats})  "
                f"{_f(r.mde)} (n={r.full_clusters}, {r.rule}, α={r.alpha:.4g}, "
                f"{r.judges} judge{'s' if r.judges > 1 else ''}{_rho(r)})"
            )
        return "\n".join(lines)


def _rho(row: PilotRow) -> str:
    if row.judges < 2:
        return ""
    if math.isnan(row.judge_correlation):
        return f", ρ {DEFAULT_JUDGE_CORRELATION:.2f} assumed: not measurable here"
    return f", ρ {row.judge_correlation:.2f} measured"


def _f(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"


def default_pilot_folder(design: Design, clusters: int) -> Path:
    return RESULTS / f"{design.name}-pilot-{design.sha256[:10]}-n{clusters}"


def supports_pilot(design: Design) -> PilotSupport:
    kind = design.kind
    if not isinstance(kind, PilotSupport):
        raise LabError(
            f"the {kind.name!r} kind cannot run a pilot yet",
            where=f"{design.path} design.kind",
            fix="pilots need the kind to implement PilotSupport (experiments/engine/tasks.py)",
        )
    return kind


def check_pilot(design: Design, clusters: int, repeats: int) -> PilotSupport:
    kind = supports_pilot(design)
    full = kind.clusters(design)
    if not 2 <= clusters <= full:
        raise LabError(
            f"--diarists {clusters} is outside 2..{full}",
            where="diarylab pilot",
            fix=f"a pilot needs at least 2 {kind.cluster_word}s to estimate an SD and at most "
            f"the design's {full}",
        )
    if repeats < 2:
        raise LabError(
            f"--repeats {repeats} is below 2",
            where="diarylab pilot",
            fix="write each prompt at least twice to see its noise",
        )
    if not design.hypotheses:
        raise LabError(
            "the design preregisters no hypotheses: a pilot has nothing to size",
            where=f"{design.path} [[hypotheses]]",
            fix="add the hypotheses the study will test",
        )
    kind.pilot_design(design, clusters)  # the kind's own refusal, before any folder is made
    return kind


def reduced_design(design: Design, clusters: int, folder: Path) -> Design:
    """The design cut to its first `clusters` clusters, written into `folder` (a changed one
    is refused: the folder holds a pilot of another design)."""
    kind = supports_pilot(design)
    text = (
        f"# A pilot of {design.path.name} (sha256 {design.sha256}), written by diarylab pilot.\n"
        + dump_toml(kind.pilot_design(design, clusters))
    )
    path = folder / DESIGN_FILE
    if path.exists() and path.read_text(encoding="utf-8") != text:
        raise LabError(
            "holds a pilot of another design or size",
            where=str(path),
            fix="give another --out folder",
        )
    if not path.exists():
        write_atomic(path, text)
    return load_design(path)


def run_pilot(
    design: Design,
    clusters: int,
    *,
    repeats: int = 4,
    out: Path | None = None,
    progress: bool = True,
) -> PilotResult:
    kind = check_pilot(design, clusters, repeats)
    folder = Path(out) if out else default_pilot_folder(design, clusters)
    if folder.exists() and not folder.is_dir():
        raise LabError("is a file", where=str(folder), fix="give --out a folder")
    pilot = reduced_design(design, clusters, folder)
    noise: list[TextNoise] = []

    def resample(run: RunContext, judges: JudgeSet) -> None:
        store = Store(folder / f"repeats-{repeats}.sqlite", pilot.kind.row_types)
        try:
            noise.extend(kind.resample(run, judges.get, repeats, store))
        finally:
            store.close()

    run_design(pilot, folder / "run", progress=progress, after=resample)
    store = Store(folder / "run" / STORE_FILE, pilot.kind.row_types)
    try:
        samples = kind.contrast_samples(store, pilot)
    finally:
        store.close()
    full = kind.clusters(design)
    m = len(design.hypotheses)
    rule: Rule = getattr(design.spec.analysis, "decision_rule", "holm")
    alpha = 2 * one_sided_level(rule, m)
    by_noise = {(n.judge, n.family): n for n in noise}
    by_hypothesis: dict[str, list[tuple[float, ...]]] = {}
    for s in samples:
        by_hypothesis.setdefault(s.hypothesis, []).append(tuple(s.values))
    measured = {h: judge_correlation(series) for h, series in by_hypothesis.items()}
    rows = []
    for s in samples:
        judges = len(by_hypothesis[s.hypothesis])
        rho = measured[s.hypothesis]
        sd = statistics.stdev(s.values) if len(s.values) >= 2 else math.nan
        n = by_noise.get((s.judge, s.family))
        rows.append(
            PilotRow(
                hypothesis=s.hypothesis,
                judge=s.judge,
                pilot_clusters=len(s.values),
                mean=statistics.fmean(s.values) if s.values else math.nan,
                cluster_sd=sd,
                text_noise_sd=n.sd if n else math.nan,
                noise_prompts=n.prompts if n else 0,
                repeats=repeats,
                full_clusters=full,
                hypotheses=m,
                alpha=alpha,
                mde=mde(sd, rule, full, m, power=POWER, judges=judges, correlation=rho),
                rule=rule,
                judges=judges,
                judge_correlation=rounded_correlation(rho) if not math.isnan(rho) else math.nan,
            )
        )
    result = PilotResult(folder, tuple(rows), kind.cluster_word, kind.text_word)
    _write(result, design, clusters)
    return result


def _write(result: PilotResult, design: Design, clusters: int) -> None:
    buffer = io.StringIO()
    fields = list(PilotRow.__dataclass_fields__)
    writer = csv.DictWriter(buffer, fieldnames=fields)
    writer.writeheader()
    for row in result.rows:
        writer.writerow(asdict(row))
    write_atomic(result.folder / "pilot.csv", buffer.getvalue())
    cluster, noun = result.cluster_word, result.text_word
    per = cluster.replace(" ", "-")
    text = (
        f"# Pilot of {design.name} ({clusters} {cluster}s)\n\n"
        f"Per preregistered contrast and judge: the per-{per} SD of the contrast in this pilot, "
        f"the SD of a single {noun}'s score when the same prompt is written again "
        "(pooled within prompts), and the minimum detectable effect of the full design "
        "(80% power of the verdict as the design reaches it — every judge agreeing, the "
        "judges' correlation as measured in this pilot, under the design's decision rule, for "
        "holm at the first Holm step's level alpha/m — for the sign-flip test itself, by "
        "seeded simulation on normal data). An "
        f"SD from a few {cluster}s is itself very uncertain: treat the MDE as an order of "
        "magnitude.\n\n```\n" + result.table() + "\n```\n"
    )
    write_atomic(result.folder / "pilot.md", text)
