"""The report's "Judges against people" section from a run folder's locked sample and the
ratings and judgments its store holds (the kinds' reports call it; it reads the store only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from diarylab.experiments.rating.lock import read_lock


def rating_lines(folder: Path, store: Any, design: Any) -> list[str]:
    """The section, or nothing when no sample is drawn: the design's interval method,
    resamples, seed and minimum of diarists, as its other sections use."""
    sample = read_lock(folder)
    if sample is None:
        return []
    from diarylab.experiments.analysis.bootstrap import BootstrapSettings
    from diarylab.experiments.rating.agreement import agreement
    from diarylab.experiments.rating.section import rating_section
    from diarylab.experiments.rating.stored import judge_values, stored_ratings

    analysis = design.spec.analysis
    settings = BootstrapSettings(
        "diarist", resamples=design.resamples, seed=design.seed, method=analysis.interval
    )
    ratings = stored_ratings(store, sample)
    result = agreement(ratings, judge_values(store, sample), settings) if len(ratings) else None
    return rating_section(sample, result, min_diarists=analysis.min_diarists, level=settings.level)
