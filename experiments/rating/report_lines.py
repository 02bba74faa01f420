"""What a run folder's locked rating sample and its stored ratings say, for the report (its
"Judges against people" section: the kinds' reports call it) and for `diarylab status` (how far
the raters are). Both read the store only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.experiments.rating.lock import read_lock


@dataclass(frozen=True)
class RatingText:
    section: list[str]  # "Judges against people"; empty when no sample is drawn
    box: list[str]  # for the report's top: a judge the raters found no better than chance


def rating_text(folder: Path, store: Any, design: Any) -> RatingText:
    """The section and the box, from the design's interval method, resamples, seed and
    minimum of diarists, as its other sections use."""
    sample = read_lock(folder)
    if sample is None:
        return RatingText([], [])
    from diarylab.experiments.analysis.bootstrap import BootstrapSettings
    from diarylab.experiments.rating.agreement import agreement
    from diarylab.experiments.rating.chance_box import chance_box
    from diarylab.experiments.rating.section import rating_section
    from diarylab.experiments.rating.stored import judge_values, stored_ratings

    analysis = design.spec.analysis
    settings = BootstrapSettings(
        "diarist", resamples=design.resamples, seed=design.seed, method=analysis.interval
    )
    ratings = stored_ratings(store, sample)
    result = agreement(ratings, judge_values(store, sample), settings) if len(ratings) else None
    least = analysis.min_diarists
    return RatingText(
        rating_section(sample, result, min_diarists=least, level=settings.level),
        chance_box(result, min_diarists=least, level=settings.level),
    )


def rating_status(folder: Path, store: Any) -> dict[str, Any] | None:
    """The locked sample and how many of its answers each rater has stored (None: no sample):
    the sheets' raters first, then anyone else whose answers were imported (Label Studio)."""
    sample = read_lock(folder)
    if sample is None:
        return None
    from diarylab.experiments.rating.stored import stored_ratings

    wanted = sum(len(sample.questions_for(it.target_kind)) for it in sample.items)
    counts = stored_ratings(store, sample)["rater"].value_counts().to_dict()
    raters = [*sample.raters, *sorted(r for r in counts if r not in sample.raters)]
    return {
        "sample_sha256": sample.sha256,
        "texts": len(sample.items),
        "answers_per_rater": wanted,
        "stored": {r: int(counts.get(r, 0)) for r in raters},
    }


def rating_status_line(status: dict[str, Any]) -> str:
    stored = status["stored"]
    want = status["answers_per_rater"]
    each = ", ".join(
        f"{r} {'complete' if n >= want else f'{n} of {want}' if n else 'none'}"
        for r, n in stored.items()
    )
    return (
        f"rating: sample {status['sample_sha256'][:16]}… of {status['texts']} texts locked "
        f"(rating/sample.json); answers stored: {each}"
    )
