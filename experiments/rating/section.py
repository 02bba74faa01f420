"""The report's "Judges against people" section (Markdown; the HTML page renders the same
text), from a locked sample and its stored ratings. Exploratory: no hypothesis was
preregistered about it, and it says so."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from diarylab.experiments.rating.agreement import Agreement, items_for_width
from diarylab.experiments.rating.lock import LockedSample

# Interval half-widths the power note asks about: an agreement rate or AUC, a 0–100 score.
TARGET_RATE = 0.10
TARGET_POINTS = 10.0


def _num(x: float, digits: int = 2) -> str:
    return "—" if x is None or not math.isfinite(float(x)) else f"{float(x):.{digits}f}"


def _ci(row: pd.Series, name: str, digits: int = 2) -> str:
    est, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if est is None or not math.isfinite(float(est)):
        return "—"
    if low is None or not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return _num(est, digits)
    return f"{_num(est, digits)} [{_num(low, digits)}, {_num(high, digits)}]"


def _subsection(
    heading: str, text: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[str]:
    """A "### " heading, the paragraph that says what its table holds, and the table."""
    return [heading, text, *_table(header, rows)]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]


def _as_good(row: pd.Series, scale: str, enough: bool, min_diarists: int, diarists: int) -> str:
    if not enough:
        return f"too few diarists ({diarists} < {min_diarists})"
    low, high = row.get("gap_low"), row.get("gap_high")
    if low is None or not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "no interval"
    # yes/no: judge's agreement − raters' (below 0 is worse); scores: distance (above 0 worse)
    below = float(high) < 0 if scale == "yes_no" else float(low) > 0
    return "no" if below else "yes"


def rating_section(
    sample: LockedSample, result: Agreement | None, *, min_diarists: int, level: float
) -> list[str]:
    kinds = pd.Series([it.target_kind for it in sample.items]).value_counts()
    lines = [
        "## Judges against people (exploratory)\n",
        f"A blinded sample locked in `rating/sample.json` (sha256 `{sample.sha256[:16]}…`): "
        f"{len(sample.items)} texts ({kinds.get('entry', 0)} entries, {kinds.get('reply', 0)} "
        f"replies) in {len({it.stratum for it in sample.items})} strata of "
        f"{' × '.join(sample.strata)}, for {len(sample.raters)} raters; texts the judges "
        f"disagreed on were drawn up to {1 + sample.settings.boost:g}× as often, and each "
        "carries the weight 1 / its inclusion probability in every judge figure below. "
        "No hypothesis about these figures was preregistered.\n",
    ]
    if result is None or result.items == 0:
        return [*lines, "No ratings are imported yet (`diarylab rate import RUN FILES...`).\n"]
    enough = result.diarists >= min_diarists
    lines.append(
        f"Imported: {result.rater_count} raters, {result.items} items, {result.diarists} diarists. "
        f"Intervals: {level:.0%}, over diarists.\n"
    )
    if not result.raters.empty:
        lines += _subsection(
            "### Between raters\n",
            "AC1 (Gwet, irrCAC) and Krippendorff's alpha "
            "(nominal for yes/no, interval for 0–100), over the sample as drawn.\n",
            ["question or score", "items", "raters", "AC1", "alpha"],
            [
                [r["item"], str(r["items"]), str(r["raters"]), _ci(r, "ac1"), _ci(r, "alpha")]
                for _, r in result.raters.iterrows()
            ],
        )
    judges = result.judges
    yes_no = judges[judges["scale"] == "yes_no"] if not judges.empty else judges
    if not yes_no.empty:
        lines += _subsection(
            "### Each judge against the raters: yes/no questions\n",
            "AUC of the judge's P(yes) against the raters' majority (ties left out); "
            "how often the judge's call (P(yes) ≥ 0.5) agrees with a rater, beside how "
            'often two raters agree; their difference. "As good as a rater": the '
            "difference's interval does not lie below 0. Beside it, the same question asked "
            "of majorities: how often the judge's call agrees with the raters' majority (texts "
            "where they tie left out), and how often one rater agrees with the majority of the "
            "others. The verdict rests on the pairs: with two raters a majority exists only "
            "where they agree, which would favour the judge.\n",
            ["judge", "question", "items", "AUC", "judge agrees with a rater",
             "raters agree", "difference", "as good as a rater",
             "judge agrees with the majority", "a rater agrees with the others"],
            [
                [r["judge"], r["item"], str(r["items"]), _ci(r, "auc"), _ci(r, "judge_agrees"),
                 _ci(r, "raters_agree"), _ci(r, "gap"),
                 _as_good(r, "yes_no", enough, min_diarists, result.diarists),
                 _ci(r, "judge_majority"), _ci(r, "rater_others")]
                for _, r in yes_no.iterrows()
            ],
        )  # fmt: skip
    numbers = judges[judges["scale"] == "number"] if not judges.empty else judges
    if not numbers.empty:
        lines += _subsection(
            "### Each judge against the raters: 0–100 scores\n",
            "Spearman's ρ between the judge's reading and the raters' mean; the mean "
            "difference (judge − raters); the judge's mean distance from a rater beside "
            'two raters\' from each other. "As good as a rater": the distance '
            "difference's interval does not lie above 0.\n",
            ["judge", "score", "items", "Spearman ρ", "mean difference", "judge–rater distance",
             "rater–rater distance", "as good as a rater"],
            [
                [r["judge"], r["item"], str(r["items"]), _ci(r, "spearman"),
                 _ci(r, "difference", 1), _ci(r, "judge_distance", 1),
                 _ci(r, "raters_distance", 1),
                 _as_good(r, "number", enough, min_diarists, result.diarists)]
                for _, r in numbers.iterrows()
            ],
        )  # fmt: skip
    if not result.per_rater.empty:
        lines += _subsection(
            "### Each rater against each judge\n",
            "Pooled over questions (AUC of the judge's P(yes) against the rater's "
            "answers) and over scores (Spearman's ρ of ranks within each score): a rater "
            "near 0.5 and 0 answered as if at random.\n",
            ["judge", "rater", "answers", "AUC", "Spearman ρ"],
            [
                [r["judge"], r["rater"], str(r["answers"]), _ci(r, "auc"), _ci(r, "spearman")]
                for _, r in result.per_rater.iterrows()
            ],
        )
    if not result.calibration.empty:
        lines += _subsection(
            "### Calibration of P(yes)\n",
            "Per judge, the readings in each P(yes) bin "
            "against the raters' yes rate there (weighted).\n",
            ["judge", "P(yes) bin", "readings", "mean P(yes)", "raters' yes rate"],
            [
                [r["judge"], r["bin"], str(r["readings"]), _num(r["mean_p_yes"]),
                 _num(r["human_yes_rate"])]
                for _, r in result.calibration.iterrows()
            ],
        )  # fmt: skip
    lines += _power_note(sample, result)
    return lines


def _power_note(sample: LockedSample, result: Agreement) -> list[str]:
    strata = len({it.stratum for it in sample.items})
    out = []
    pooled = (
        result.judges[result.judges["item"] == "(all)"]
        if not result.judges.empty
        else result.judges
    )
    for _, r in pooled.iterrows():
        name, target = (
            ("gap", TARGET_RATE) if r["scale"] == "yes_no" else ("difference", TARGET_POINTS)
        )
        low, high = r.get(f"{name}_low"), r.get(f"{name}_high")
        if low is None or not (math.isfinite(float(low)) and math.isfinite(float(high))):
            continue
        need = items_for_width((float(high) - float(low)) / 2, int(r["items"]), target, strata)
        if need is None:
            continue
        what = "agreement difference" if r["scale"] == "yes_no" else "mean score difference"
        out.append(
            f"- {r['judge']}, {what}: ±{(float(high) - float(low)) / 2:.3g} at {r['items']} "
            f"items; ±{target:g} would take about {need[0]} items ({need[1]} per stratum, "
            f"{strata} strata), if the spread between diarists stays as it is."
        )
    if not out:
        return []
    return ["### How many items\n", *out, ""]
