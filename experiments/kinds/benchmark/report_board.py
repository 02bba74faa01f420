"""The benchmark report's board tables in Markdown: the leaderboard per convention (with the
published scale where the design names anchors), the replies' flags, the paired chatbot
comparisons and the judges' severity and agreement. Split from report.py, which gathers the
report."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.verdicts import MIN_CLUSTERS
from diarylab.experiments.kinds.benchmark.leaderboard import Board, agreement

Shown = Callable[[pd.Series], str]


def leaderboard_section(b: Board, scale: str | None, title: str) -> list[str]:
    rows = pd.DataFrame(
        [
            {
                "judge": s.judge,
                "chatbot": s.chatbot,
                "score": md.interval(s.score, s.low, s.high, 3),
                scale or "published scale": md.interval(*s.mapped, 3) if s.mapped else md.MISSING,
                "scored": s.scored,
                "no score": ", ".join(f"{k} {v}" for k, v in s.excluded.items() if v) or "0",
            }
            for s in sorted(b.scores, key=lambda s: (s.judge, -_sortable(s.score)))
        ]
    )
    columns = ["judge", "chatbot", "score"]
    columns += [scale] if scale else []
    return [
        f"## Leaderboard — {title} ({b.convention} convention)\n",
        md.table(rows, _shown([*columns, "scored", "no score"])),
    ]


def _shown(columns: Iterable[str], digits: int | None = None) -> dict[str, Shown]:
    """Table columns printed as they are, or as numbers with `digits` decimals."""

    def show(c: str) -> Shown:
        if digits is None:
            return lambda r: str(r[c])
        return lambda r: md.number(r[c], digits)

    return {c: show(c) for c in columns}


def _sortable(value: float) -> float:
    return value if value == value else -1e9


def flags_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_no replies_\n"
    shown = frame.reset_index()
    return md.table(shown, _shown(shown.columns))


def comparisons_section(b: Board) -> str:
    rows = pd.DataFrame(
        [
            {
                "judge": c.judge,
                "pair": f"{c.a} − {c.b}",
                "difference": md.interval(c.difference, c.low, c.high, 3),
                "conversations": c.n,
                "p": md.number(c.p, 4) if c.n >= MIN_CLUSTERS else "too few conversations",
                "p (Holm)": md.number(c.p_holm, 4) if c.n >= MIN_CLUSTERS else md.MISSING,
            }
            for c in b.comparisons
        ]
    )
    compared = b.comparisons[0].quantity if b.comparisons else ""
    return (
        "## Paired comparisons (exploratory; sign-flip test, Holm-corrected per judge)\n\n"
        + (
            f"Difference, its 95% bootstrap interval and the p-value are all of one quantity: "
            f"the {compared}, over the conversations scored for both chatbots.\n\n"
            if compared
            else ""
        )
        + md.table(rows, _shown(rows.columns))
    )


def judges_section(b: Board) -> str:
    found = agreement(b.scores)
    severity = pd.DataFrame(
        [{"judge": j, "severity": md.number(v, 3)} for j, v in found.severity.items()]
    )
    tau = pd.DataFrame(
        [
            {"judges": f"{a} / {b2}", "Kendall τ": md.number(t, 3), "chatbots": n}
            for a, b2, t, n in found.tau
        ]
    )
    return (
        "## Judges\n\nSeverity: the judge's mean offset from the judges' mean score per chatbot "
        "(negative: stricter).\n\n"
        + md.table(severity, {"judge": "judge", "severity": "severity"})
        + "\nAgreement: Kendall τ between the judges' chatbot rankings.\n\n"
        + (md.table(tau, {c: c for c in tau.columns}) if len(tau) else "_one judge_\n")
    )
