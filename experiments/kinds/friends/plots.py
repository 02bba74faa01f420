"""The friends report's figure: pattern scores letter by letter, one figure per judge. Panels:
a row per scored pattern, a column per writer profile; in each, a line per friend (profile, or
the fixed letter) with its bootstrap band over role cards, and dashed grey the two-unsteered
control for reference. Drawn with matplotlib's object API
(no pyplot state, headless); an empty table still gives a figure that says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from diarylab.experiments.kinds.friends.contrast import FIXED, UNSTEERED

DPI = 110


def _ordered(values: pd.Series, first: str | None = None, last: str | None = None) -> list[str]:
    found = sorted(str(v) for v in values.dropna().unique())
    head = [first] if first in found else []
    tail = [last] if last in found else []
    return head + [v for v in found if v not in (first, last)] + tail


def letters_plot(table: pd.DataFrame, judge: str, path: Path) -> Path:
    mine = table[table["judge"] == judge]
    path.parent.mkdir(parents=True, exist_ok=True)
    if mine.empty:
        fig = Figure(figsize=(4, 3))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.text(0.5, 0.5, "no data", ha="center", va="center")
        ax.set_title(f"pattern score by letter — {judge}")
        ax.set_axis_off()
        fig.savefig(path, dpi=DPI, format="png")
        return path
    scores = _ordered(mine["score"])
    writers = _ordered(mine["profile"], first=UNSTEERED)
    friends = _ordered(mine["friend_profile"], first=UNSTEERED, last=FIXED)
    fig = Figure(figsize=(3.6 * len(writers), 2.8 * len(scores)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(
        np.asarray(fig.subplots(len(scores), len(writers), squeeze=False, sharey="row"))
    )
    letters = sorted(mine["letter"].unique())
    for i, score in enumerate(scores):
        for j, writer in enumerate(writers):
            ax = axes[i, j]
            for f, friend in enumerate(friends):
                line = mine[
                    (mine["score"] == score)
                    & (mine["profile"] == writer)
                    & (mine["friend_profile"] == friend)
                ].sort_values("letter")
                if line.empty:
                    continue
                x = line["letter"].to_numpy()
                style = ":" if friend == FIXED else "-"
                ax.plot(x, line["estimate"], style, color=f"C{f}", marker="o", ms=3, label=friend)
                ax.fill_between(x, line["low"], line["high"], color=f"C{f}", alpha=0.15)
            baseline = mine[
                (mine["score"] == score)
                & (mine["profile"] == UNSTEERED)
                & (mine["friend_profile"] == UNSTEERED)
            ].sort_values("letter")
            if writer != UNSTEERED and not baseline.empty:
                ax.plot(
                    baseline["letter"].to_numpy(),
                    baseline["estimate"],
                    "--",
                    color="grey",
                    lw=1,
                    label="two unsteered",
                )
            ax.set_title(f"{score} score — writer {writer}", fontsize=8)
            ax.set_xticks(letters)
            ax.set_xlabel("the writer's letter")
            ax.set_ylabel("score (0–100)")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6, title="friend", title_fontsize=6)
    fig.suptitle(f"pattern scores letter by letter — {judge}", fontsize=10)
    fig.savefig(path, dpi=DPI, format="png")
    return path
