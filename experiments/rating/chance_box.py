"""The box at the top of a report whose judge the raters found no better than chance: on the
rating sample, over all its questions, the judge's P(yes) does not rank the raters' majority
above chance (the AUC's interval reaches 0.5), or its 0–100 readings do not rank with the
raters' mean (Spearman's ρ's interval reaches 0). The section "Judges against people" holds
the figures; the box puts the consequence where a reader starts. Said only from enough
diarists: an interval from fewer is not one to act on."""

from __future__ import annotations

import math

import pandas as pd

from diarylab.experiments.rating.agreement import Agreement

# scale -> (the statistic, its value at chance, its name in the box)
CHANCE = {"yes_no": ("auc", 0.5, "AUC"), "number": ("spearman", 0.0, "Spearman's ρ")}


def chance_box(result: Agreement | None, *, min_diarists: int, level: float) -> list[str]:
    if result is None or result.judges.empty or result.diarists < min_diarists:
        return []
    pooled = result.judges[result.judges["item"] == "(all)"]
    found: dict[str, list[str]] = {}
    for _, row in pooled.iterrows():
        said = _at_chance(row)
        if said:
            found.setdefault(str(row["judge"]), []).append(said)
    if not found:
        return []
    named = "; ".join(f"`{judge}`: {', '.join(says)}" for judge, says in found.items())
    return [
        f"> **{'This judge is' if len(found) == 1 else 'These judges are'} no better than "
        f"chance against people.** On the rating sample ({result.items} items, "
        f"{result.rater_count} raters, {result.diarists} diarists; {level:.0%} intervals) — "
        f"{named}. What rests on {'its' if len(found) == 1 else 'their'} readings below "
        '(verdicts, intervals, shares) measures the judge, not the diarists; see "Judges '
        'against people".\n'
    ]


def _at_chance(row: pd.Series) -> str:
    stat, chance, name = CHANCE[str(row["scale"])]
    est, low, high = (row.get(f"{stat}{end}") for end in ("", "_low", "_high"))
    if any(v is None or not math.isfinite(float(v)) for v in (est, low, high)):
        return ""
    if float(low) > chance:
        return ""
    scale = "yes/no questions" if row["scale"] == "yes_no" else "0–100 scores"
    return (
        f"{scale} {name} {float(est):.2f} [{float(low):.2f}, {float(high):.2f}] (chance {chance:g})"
    )
