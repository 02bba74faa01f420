"""Calibrating a pattern vector: sweep layers × strengths on held-out prompts, score every sample
with an injected scorer, and pick the setting with the most pattern whose mean coherence stays
at or above a floor. Writes the sweep table (CSV + Parquet), every sample, and a plot; the
caller turns the chosen setting into a profile file (steering/ does not know about profiles).

Every setting writes for the same prompts with the same seeds, so settings differ only in the
steering; strength 0 is the unsteered baseline, generated once and shared by every layer. Every
sample is written through the caller's `Writes` door (the store's, so a killed calibration reads
its texts back), then all of them go to the scorer in one call, which batches them through the
judge like any other judging phase."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.steering.apply import Positions, Scale, Steer
from diarylab.steering.extract import Scorer, TextScore
from diarylab.steering.vectors import PatternVector
from diarylab.steering.write_door import WriteRequest, Writes


@dataclass(frozen=True)
class Sample:
    layer: int | None  # None: the unsteered baseline
    strength: float
    prompt_index: int
    seed: int
    text: str
    pattern: float
    coherence: float


@dataclass(frozen=True)
class SweepRow:
    layer: int
    strength: float
    n: int
    pattern_mean: float
    pattern_sd: float
    coherence_mean: float
    coherence_sd: float
    passes_floor: bool


@dataclass(frozen=True)
class Calibration:
    rows: tuple[SweepRow, ...]
    samples: tuple[Sample, ...]
    floor: float
    scale: Scale
    positions: Positions
    chosen: SweepRow | None


def sweep(
    model: LocalModel,
    vector: PatternVector,
    prompts: Sequence[list[dict[str, str]]],
    *,
    layers: Sequence[int],
    strengths: Sequence[float],
    scorer: Scorer,
    writes: Writes,
    settings: GenerationSettings,
    seed: int,
    floor: float,
    scale: Scale = "relative",
    positions: Positions = "response",
) -> Calibration:
    """`prompts` are chats (system + user messages); `writes` writes them, batched as it likes."""
    if not prompts:
        raise LabError("no held-out prompts", where="calibration")
    if not layers or not strengths:
        raise LabError("give at least one layer and one strength", where="calibration")
    if not 0 <= floor <= 100:
        raise LabError(f"coherence floor {floor} is outside 0..100", where="calibration")
    vector.check_model(model.info())
    settings_grid: list[Steer | None] = [None]
    settings_grid += [
        Steer(vector, (layer,), float(s), scale, positions)
        for layer in layers
        for s in strengths
        if s != 0
    ]
    jobs = [(steer, i) for steer in settings_grid for i in range(len(prompts))]
    gens = writes([WriteRequest(prompts[i], seed + i, steer) for steer, i in jobs], settings)
    if len(gens) != len(jobs):
        raise ValueError(f"{len(gens)} texts written for {len(jobs)} requests")
    scores = _score(scorer, [g.text for g in gens])
    samples = [
        Sample(
            layer=steer.layers[0] if steer else None,
            strength=steer.strength if steer else 0.0,
            prompt_index=i,
            seed=seed + i,
            text=gen.text,
            pattern=float(score.pattern),
            coherence=float(score.coherence),
        )
        for (steer, i), gen, score in zip(jobs, gens, scores, strict=True)
    ]
    rows = summarise(samples, layers, floor)
    return Calibration(tuple(rows), tuple(samples), floor, scale, positions, choose(rows))


def _score(scorer: Scorer, texts: list[str]) -> list[TextScore]:
    scores = list(scorer(texts))
    if len(scores) != len(texts):
        raise ValueError(f"scorer returned {len(scores)} scores for {len(texts)} texts")
    return scores


def summarise(samples: Sequence[Sample], layers: Sequence[int], floor: float) -> list[SweepRow]:
    baseline = [s for s in samples if s.layer is None]
    groups: dict[tuple[int, float], list[Sample]] = {}
    for layer in layers:
        groups[(layer, 0.0)] = baseline
    for s in samples:
        if s.layer is not None:
            groups.setdefault((s.layer, s.strength), []).append(s)
    rows = []
    for (layer, strength), group in sorted(groups.items()):
        pattern_mean, pattern_sd = _mean_sd([s.pattern for s in group])
        coherence_mean, coherence_sd = _mean_sd([s.coherence for s in group])
        rows.append(
            SweepRow(
                layer=layer,
                strength=strength,
                n=len(group),
                pattern_mean=pattern_mean,
                pattern_sd=pattern_sd,
                coherence_mean=coherence_mean,
                coherence_sd=coherence_sd,
                passes_floor=coherence_mean >= floor,  # False for NaN: unreadable never passes
            )
        )
    return rows


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sd over readable scores (a judge's unreadable answer is NaN, left out)."""
    readable = [v for v in values if math.isfinite(v)]
    if not readable:
        return float("nan"), float("nan")
    sd = statistics.stdev(readable) if len(readable) > 1 else 0.0
    return statistics.fmean(readable), sd


def choose(rows: Sequence[SweepRow]) -> SweepRow | None:
    """The steered setting with the highest mean pattern score among those whose mean coherence
    is at or above the floor; on a tie, the gentler strength. None when none passes."""
    passing = [r for r in rows if r.strength != 0 and r.passes_floor]
    if not passing:
        return None
    return max(passing, key=lambda r: (r.pattern_mean, -abs(r.strength), -r.layer))


def write_outputs(calibration: Calibration, out_dir: Path, *, title: str) -> dict[str, Path]:
    """sweep.csv / sweep.parquet (one row per layer × strength), samples.csv / samples.parquet
    (every text with its scores) and sweep.png."""
    import pandas as pd

    out_dir.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame([asdict(r) for r in calibration.rows])
    table["chosen"] = [r == calibration.chosen for r in calibration.rows]
    samples = pd.DataFrame([asdict(s) for s in calibration.samples])
    samples["layer"] = samples["layer"].astype("Int64")  # None (baseline) stays a missing int
    paths = {
        "table_csv": out_dir / "sweep.csv",
        "table_parquet": out_dir / "sweep.parquet",
        "samples_csv": out_dir / "samples.csv",
        "samples_parquet": out_dir / "samples.parquet",
        "plot": out_dir / "sweep.png",
    }
    table.to_csv(paths["table_csv"], index=False)
    table.to_parquet(paths["table_parquet"], index=False)
    samples.to_csv(paths["samples_csv"], index=False)
    samples.to_parquet(paths["samples_parquet"], index=False)
    plot(calibration, paths["plot"], title=title)
    return paths


def plot(calibration: Calibration, path: Path, *, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for layer in sorted({r.layer for r in calibration.rows}):
        rows = [r for r in calibration.rows if r.layer == layer]
        xs = [r.strength for r in rows]
        top.plot(xs, [r.pattern_mean for r in rows], marker="o", label=f"layer {layer}")
        bottom.plot(xs, [r.coherence_mean for r in rows], marker="o", label=f"layer {layer}")
    bottom.axhline(calibration.floor, color="grey", linestyle="--", label="coherence floor")
    if calibration.chosen is not None:
        c = calibration.chosen
        top.plot([c.strength], [c.pattern_mean], "k*", markersize=14, label="chosen")
        bottom.plot([c.strength], [c.coherence_mean], "k*", markersize=14)
    top.set_ylabel("pattern (mean, 0–100)")
    bottom.set_ylabel("coherence (mean, 0–100)")
    unit = "× residual norm" if calibration.scale == "relative" else "× raw difference"
    bottom.set_xlabel(f"strength ({unit})")
    for ax in (top, bottom):
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
    top.legend(fontsize=8)
    top.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------- demo heuristic
def heuristic_scorer(markers: Sequence[str]) -> Scorer:
    """A word-counting stand-in for a judge, for demos and tests. It is NOT a judge and its
    numbers are not findings.

    pattern: share of words that belong to one of the marker phrases, scaled so that one marker
    word in twelve gives 100. coherence: share of distinct word trigrams (repetition loops score
    low) times the share of words made of letters; under five words scores 0."""
    phrases = [tuple(m.lower().split()) for m in markers if m.strip()]

    def score(texts: Sequence[str]) -> list[TextScore]:
        out = []
        for text in texts:
            words = re.findall(r"[a-z']+", text.lower())
            tokens = text.split()
            if len(words) < 5:
                out.append(TextScore(pattern=0.0, coherence=0.0))
                continue
            hits = sum(
                len(p)
                for i in range(len(words))
                for p in phrases
                if tuple(words[i : i + len(p)]) == p
            )
            trigrams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
            distinct = len(set(trigrams)) / len(trigrams)
            letters = sum(1 for t in tokens if re.search(r"[A-Za-z]", t)) / max(len(tokens), 1)
            pattern = min(100.0, 100.0 * 12 * hits / len(words))
            coherence = 100.0 * distinct * letters
            out.append(
                TextScore(pattern=pattern, coherence=coherence if math.isfinite(coherence) else 0.0)
            )
        return out

    return score
