"""The benchmark report's view of what the graders wrote that could not be read: malformed
answers (no `criteria_met` the grader prompt asks for) counted per grader, the criteria each
left ungraded after every retry, and a few of the raw answers, shown as literal text; and the
names of HealthBench's tags and strata as the reader knows them ("theme: emergency referrals",
"axis: context awareness"), the CSV tables keeping the file's own ids."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.leaderboard import Board

EXAMPLES = 3  # raw answers shown per grader
LONGEST = 400  # characters of one raw answer shown (the CSV holds it whole)


def tag_label(tag: str) -> str:
    """'theme:emergency_referrals' -> 'theme: emergency referrals' (a tag without a kind
    keeps its words)."""
    kind, sep, name = str(tag).partition(":")
    if not sep:
        return kind.replace("_", " ")
    return f"{kind}: {name.replace('_', ' ')}"


def stratum_word(fmt: str) -> str:
    """What a sample's strata are: MentalHealthBench's acuity, HealthBench's theme."""
    return "theme" if fmt == "healthbench" else "acuity"


def stratum_label(stratum: str, fmt: str) -> str:
    return tag_label(f"{stratum_word(fmt)}:{stratum}")


def malformed_answers(store: Store) -> pd.DataFrame:
    """Every malformed answer a grader wrote, with whether its item stayed ungraded (no
    well-formed attempt at all)."""
    who = ("judge", "reply_id", "item")
    well_formed = set(store.select("grader_answers", who, where={"status": "ok"}))
    rows = [
        (*row[:5], row[:3] not in well_formed)
        for row in store.select(
            "grader_answers",
            (*who, "attempt", "text"),
            where={"status": "malformed"},
            order_by=("judge", "answer_id"),
        )
    ]
    columns = ["judge", "reply_id", "item", "attempt", "text", "ungraded"]
    return pd.DataFrame(rows, columns=columns).astype({"ungraded": bool})


def malformed_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per grader: malformed attempts, the items they touched and those left ungraded."""
    rows = []
    for judge, part in frame.groupby("judge", sort=True):
        items = part.drop_duplicates(["reply_id", "item"])
        rows.append((judge, len(part), len(items), int(items["ungraded"].sum())))
    columns = ["grader", "malformed answers", "criteria with one", "criteria left ungraded"]
    return pd.DataFrame(rows, columns=columns)


def malformed_section(frame: pd.DataFrame) -> str:
    head = (
        "## Malformed grader answers\n\nAnswers without a readable `criteria_met`: the "
        "criterion is asked again (sampling), and stays ungraded when every attempt is "
        "malformed (never guessed). Every one is in `tables/malformed_answers.csv`.\n\n"
    )
    if frame.empty:
        return head + "_none: every answer was well formed_\n"
    counts = malformed_counts(frame)
    parts = [head, md.table(counts, {c: c for c in counts.columns})]
    for judge, part in frame.groupby("judge", sort=True):
        parts.append(f"\nFirst {min(EXAMPLES, len(part))} of `{judge}`'s, as written:\n")
        for row in part.head(EXAMPLES).itertuples(index=False):
            cut = len(row.text) > LONGEST
            text = row.text[:LONGEST] + ("…" if cut else "")
            parts.append(
                f"\n`{row.reply_id}` {row.item}, attempt {row.attempt}"
                f"{' (cut here; whole in the CSV)' if cut else ''}:\n\n{literal(text)}"
            )
    return "".join(parts)


def literal(text: str) -> str:
    """Text shown as written: a fenced block longer than any run of backticks inside it, so
    nothing in a judge's answer can close it or be read as Markdown."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}\n"


def strata_section(b: Board, fmt: str) -> str:
    """Scores per stratum of the sample (acuity, or HealthBench's theme), by their names."""
    strata = pd.DataFrame([{"judge": s.judge, "chatbot": s.chatbot, **s.strata} for s in b.scores])
    shown: dict[str, Callable[[pd.Series], str]] = {}
    for c in strata.columns:
        if c in ("judge", "chatbot"):
            shown[c] = _text(c)
        else:
            shown[stratum_label(c, fmt)] = _score(c)
    return f"## Per {stratum_word(fmt)} (met reading)\n\n" + md.table(strata, shown)


def _text(c: str) -> Callable[[pd.Series], str]:
    return lambda r: str(r[c])


def _score(c: str) -> Callable[[pd.Series], str]:
    return lambda r: md.number(r[c], 3)
