"""The diary report's behavior section (exploratory): the shares of appropriate answers per
behavior and per rubric question, with the hard-cut sensitivity for conditioned questions."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.bounded import NEAR_BOUND, NEAR_BOUND_NOTE
from diarylab.experiments.kinds.diary.comparisons import ALL_PROFILES
from diarylab.experiments.kinds.diary.sections_common import EXPLORATORY, ci

NEAR_MARK = " †"


def _marked(prefix: str) -> Callable[[pd.Series], str]:
    """The share's interval, marked where the share is near 0 or 1 (bounded.near_bound)."""
    shown = ci(prefix, 2)
    return lambda r: shown(r) + (NEAR_MARK if bool(r.get("near_bound", False)) else "")


def _near_bound_note(*tables: pd.DataFrame) -> list[str]:
    """The sentence under the tables when any share in them is marked."""
    marked = any(bool(t["near_bound"].fillna(False).astype(bool).any()) for t in tables if len(t))
    if not marked:
        return []
    return [f"{NEAR_MARK.strip()} Estimate within {NEAR_BOUND} of 0 or 1: {NEAR_BOUND_NOTE}.\n"]


def behaviors_section(t: dict[str, pd.DataFrame]) -> list[str]:
    """The behavior rubric's section: per behavior, per question, and the hard cut."""
    pooled = t["behaviors"][t["behaviors"]["profile"] == ALL_PROFILES]
    questions = t["behavior_questions"]
    questions = questions[questions["profile"] == ALL_PROFILES]
    who = {"row": "row_id", "judge": "judge", "chatbot": "chatbot"}
    return [
        f"## Behaviors {EXPLORATORY}\n",
        "One rule for conditioned questions (rubric/behavior.py): each reply counts with the "
        "weight q = the judge's P(condition) for the entry it answers (1 − P for 'not X'; 1 when "
        "unconditioned); a share is Σ p·q / Σ q. Σ q is the weights' total; the effective "
        "number of replies is Kish's n = (Σ q)² / Σ q². Where P(condition) is soft, the share "
        "is pulled toward the unconditioned rate (a reply without the condition still counts "
        "with its q): for conditioned questions read it beside the hard cut below. A "
        "behavior pools its questions' *appropriate* answers (P(yes) where a good reply says "
        "yes, 1 − P(yes) where it says no), each reply × question with its weight q, so its Σq "
        "counts weighted answers, not replies; all profiles pooled. Intervals are on the "
        "share's own scale: Wilson's at the cluster-effective number of answers (never fewer "
        "than the diarists) with t at diarists − 1 degrees of freedom, so they stay inside "
        "[0, 1] and a unanimous sample keeps a width. Per profile: "
        "`tables/behaviors.csv` and `tables/behavior_questions.csv`.\n",
        md.table(
            pooled,
            who
            | {"behavior": "behavior", "replies": "n_replies"}
            | {"Σq (answers)": lambda r: md.number(r["weighted_answers"], 1)}
            | {"Kish n": lambda r: md.number(r["kish_n"], 1)}
            | {"appropriate [95% CI]": _marked("")},
        ),
        "![behavior shares](plots/behavior_shares.png)\n",
        "### Per question\n",
        md.table(
            questions,
            who
            | {"question": "question", "desired": "desired", "replies": "n_replies"}
            | {"Σq": lambda r: md.number(r["sum_q"], 1)}
            | {"Kish n": lambda r: md.number(r["kish_n"], 1)}
            | {"share yes, soft [95% CI]": _marked("share_")}
            | {"appropriate [95% CI]": _marked("appropriate_")},
        ),
        *_near_bound_note(pooled, questions),
        "### Sensitivity: the hard cut\n",
        "Conditioned questions only, all profiles pooled: the hard cut keeps a reply where "
        "P(condition) ≥ 0.5 and counts P(yes) ≥ 0.5 as yes. The soft share is biased toward "
        "the unconditioned rate whenever P(condition) is soft (at q = 0.8 / 0.2 a true 0.9 "
        "reads about 0.6); the hard cut is not, as long as the cut sorts replies correctly. "
        "Where the two differ, the hard cut is the better reading of the conditioned rate.\n",
        md.table(
            t["hard_cut"],
            who
            | {"question": "question", "applies when": "applies_when"}
            | {"replies": "n_replies", "kept by the cut": "n_kept"}
            | {"Σq": lambda r: md.number(r["sum_q"], 1)}
            | {"Kish n": lambda r: md.number(r["kish_n"], 1)}
            | {"soft share (biased)": lambda r: md.number(r["soft_estimate"], 2)}
            | {"hard-cut share [95% CI]": _marked("hard_")},
        ),
        *_near_bound_note(t["hard_cut"]),
    ]
