"""The findings report's text: header, how to read it, the data counts, and one section per
table. Only the preregistered hypotheses carry a verdict (by the design's decision rule, the
other rule beside it as a sensitivity); every other table is labelled exploratory
(unadjusted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from diarylab.experiments.analysis import manifest_view
from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.bootstrap import METHOD_NAMES, BootstrapSettings
from diarylab.experiments.analysis.hypothesis_table import family_error_line
from diarylab.experiments.analysis.judge_caveat import caveat_box
from diarylab.experiments.analysis.rule_texts import hypotheses_text, rule_line
from diarylab.experiments.analysis.rules import Rule
from diarylab.experiments.analysis.verdict_tables import verdict_tables
from diarylab.experiments.kinds.diary.behavior_section import behaviors_section
from diarylab.experiments.kinds.diary.sections_common import EXPLORATORY, Column, ci, measure_digits


@dataclass(frozen=True)
class Results:
    tables: dict[str, pd.DataFrame]  # name -> table with row_id and sources
    pattern_by_entry: pd.DataFrame
    min_diarists: int
    hypotheses: int  # how many preregistered hypotheses (Holm's m per judge)
    rule: Rule = "holm"


def _value(column: str) -> Column:
    """A score column at its measure's precision."""
    return lambda row: md.number(row[column], measure_digits(row))


def _checks(row: pd.Series) -> str:
    """Blank unless a check fires: more than a tenth of the diarists lost (the mean with them
    lowest / highest)."""
    places = measure_digits(row)
    notes = []
    low = row.get("lost_low", float("nan"))
    if low == low:  # not NaN
        lost = int(row["n_expected"]) - int(row["n_diarists"])
        notes.append(
            f"lost {lost} of {int(row['n_expected'])} diarists: mean "
            f"{md.number(low, places)} to {md.number(row['lost_high'], places)} with them "
            "lowest to highest"
        )
    return "; ".join(notes)


def _p(column: str) -> Column:
    return lambda row: md.number(row[column], 3)


def header(
    design: Mapping[str, Any],
    sha: str,
    manifest: Mapping[str, Any],
    folder: Path | None = None,
    boxes: Sequence[str] = (),
) -> str:
    name = design.get("design", {}).get("name", "unnamed design")
    return "\n".join(
        [
            f"# Findings: {name}\n",
            *caveat_box(design),
            *boxes,
            f"Design sha256: `{sha}`\n",
            manifest_view.section(manifest, folder),
        ]
    )


def method(settings: BootstrapSettings, baseline: str, diarists: int, res: Results) -> str:
    kind = METHOD_NAMES[settings.method]
    if settings.method == "t":
        how = (
            "estimate ± t(n − 1) × the leave-one-diarist-out jackknife SE (whole diarists left "
            "out, because one diarist's entries are not independent); in the tests' simulations "
            "it covers 95% at 8 diarists on normal and t3 data"
        )
    else:
        how = (
            f"a cluster bootstrap over diarists ({settings.resamples} resamples, seed "
            f"{settings.seed}: whole diarists resampled); at {diarists} diarists these run "
            "narrow (about 85–89% coverage for a nominal 95% at 8 diarists; nominal from about "
            "30)"
            if diarists < 30
            else f"a cluster bootstrap over diarists ({settings.resamples} resamples)"
        )
    return (
        "## How to read this\n\n"
        f"Intervals on the tables are {settings.level:.0%} {kind} intervals: {how}. "
        "On skewed per-diarist values the t interval misses on the side of the long tail; "
        "every row's CSV carries Hall's skewness-corrected interval (`robust_low`, "
        "`robust_high`) and the sample skewness as a sensitivity. No row is flagged: at 8 "
        "diarists a sample's own skewness marks the rows where the t interval already covers, "
        "not those where it misses (docs/statistics.md). Where a row lost more than a tenth "
        "of its diarists "
        "(unwritten or unreadable), the checks show its mean with the lost diarists set to the "
        "lowest and to the highest value observed: diarists lost for reasons tied to their "
        "scores bias the mean, and the bounds show how far. `tables/*.csv` give n_expected "
        "beside n_diarists on every row. "
        f"Verdicts on the {res.hypotheses} preregistered hypotheses come from an exact "
        "sign-flip test on the per-diarist values. "
        + rule_line(res.rule)
        + " The hypotheses section states how many diarists a verdict needs. "
        "Every other table is exploratory (unadjusted): about one interval in twenty excludes a "
        "true zero by chance, and there are many. Pattern scores are read against the same diarist "
        "unsteered (same entry, same chatbot). Comparisons stay within one judge; every judge "
        f"is shown. `{baseline}` is the fixed-reply baseline chatbot. Unreadable judgments are "
        "left out and counted, never replaced. Each row has a row id; `sources.csv` lists the "
        "entry and reply ids behind it, `tables/*.csv` hold every table at full precision, and "
        "the diarist pages show the texts with their scores.\n"
    )


def _hypotheses(res: Results) -> list[str]:
    return [
        "## Hypotheses (preregistered)\n",
        hypotheses_text(res.rule, res.hypotheses, res.min_diarists, "diarists")
        + family_error_line(
            res.tables["hypotheses"],
            res.rule,
            res.hypotheses,
            clusters="diarists",
            cluster_word="diarists",
        ),
        *verdict_tables(
            res.tables["hypotheses"],
            res.rule,
            ("estimate [95% sign-flip]", ci()),
            ("n", "n_diarists"),
            {"p": _p("p"), "p (Holm)": _p("p_holm"), "MDE": _value("mde")}
            | {"ρ": lambda row: md.number(row["judge_correlation"], 2)},
        ),
    ]


def _drift(t: dict[str, pd.DataFrame], paired_cols: dict[str, Column], baseline: str) -> list:
    where = {"row": "row_id", "judge": "judge", "profile": "profile", "chatbot": "chatbot"}
    where |= {"entry": "entry_index"}
    return [
        f"## Drift over the conversation {EXPLORATORY}\n",
        "### Drift as change\n",
        "Per diarist, Δk = [S(k) − U(k)] − [S(1) − U(1)]: the own-pattern gap between the "
        "steered entry (S) and the same diarist unsteered (U) at entry k under the chatbot, "
        "minus the gap at the shared first entry. Negative: the pattern faded after the "
        "replies; positive: it grew. `S change` and `U change` are S(k) − S(1) and "
        "U(k) − U(1).\n",
        md.table(
            t["drift_change"],
            where
            | {"n": "n_diarists", "S change": _value("steered"), "U change": _value("unsteered")}
            | {"Δk [95% CI]": ci()},
        ),
        "![drift as change](plots/drift_change.png)\n",
        "### Difference in differences against the baseline\n",
        f"Per diarist, Δk(chatbot) − Δk(`{baseline}`): the change under the chatbot minus the "
        "change under the fixed reply, at the same entry (a difference in differences). The "
        "first-entry gap is shared by every chatbot, so this equals "
        "[S(k) − U(k)](chatbot) − [S(k) − U(k)](baseline).\n",
        md.table(
            t["drift_vs_baseline"],
            where | {"n": "n_diarists", "difference in differences [95% CI]": ci()},
        ),
        "### Steered score against the baseline's\n",
        f"Per diarist, the steered own-pattern score under the chatbot minus the steered score "
        f"under `{baseline}`, same entry.\n",
        md.table(
            t["steered_vs_baseline"],
            where
            | {"n": "n_diarists", "chatbot S": _value("steered"), "baseline S": _value("unsteered")}
            | {"difference [95% CI]": ci()},
        ),
        "### Level of the gap\n",
        "S(k) − U(k), the gap itself at entry k under the chatbot (its change is Δk above).\n",
        md.table(t["drift"], where | paired_cols),
    ]


def sections(res: Results, baseline: str) -> list[str]:
    t = res.tables
    paired_cols: dict[str, Column] = {
        "n": "n_diarists",
        "steered": _value("steered"),
        "unsteered": _value("unsteered"),
        "steered − unsteered [95% CI]": ci(),
        "checks": _checks,
    }
    return [
        *_hypotheses(res),
        f"## Did steering work? {EXPLORATORY}\n",
        "First entry, score of the profile's own pattern, steered minus the same diarist "
        "unsteered.\n",
        md.table(
            t["steering"], {"row": "row_id", "judge": "judge", "profile": "profile"} | paired_cols
        ),
        "![pattern score by entry](plots/pattern_by_entry.png)\n",
        f"## Coherence and realism {EXPLORATORY}\n",
        md.table(
            t["quality"],
            {"row": "row_id", "judge": "judge", "profile": "profile", "score": "score"}
            | paired_cols,
        ),
        "![coherence vs pattern](plots/coherence_vs_pattern.png)\n",
        *_drift(t, paired_cols, baseline),
        *behaviors_section(t),
        f"## Judge agreement {EXPLORATORY}\n",
        "Entry scores per score kind; the rubric per question (pooled over questions, their "
        "different base rates would pass for agreement). Pearson's interval is through "
        "Fisher's z (jackknife over diarists, t): it never reaches ±1.\n",
        md.table(
            t["agreement"],
            {"row": "row_id", "judge a": "judge_a", "judge b": "judge_b", "score": "score"}
            | {
                "n": "n",
                "Pearson [95% CI]": ci("pearson", 2),
                "Spearman": lambda r: md.number(r["spearman"], 2),
            },  # fmt: skip
        ),
    ]
