"""The report's PNG figures. Each function takes a finished table and a path, draws with
matplotlib's object API (Figure + Agg canvas, no pyplot state, works headless) and returns the
path. Every figure is drawn even when its table is empty, saying so, so the report's links
never dangle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from diarylab.experiments.kinds.diary.comparisons import ALL_PROFILES
from diarylab.experiments.kinds.diary.frames import SHARED, UNSTEERED, ordered, usable
from diarylab.experiments.kinds.diary.schema import PROJECTION

DPI = 110


def _figure(
    rows: int, cols: int, width: float = 4.2, height: float = 3.2
) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(np.asarray(fig.subplots(rows, cols, squeeze=False)))
    return fig, axes


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png")
    return path


def _empty(path: Path, title: str) -> Path:
    fig, axes = _figure(1, 1)
    axes[0, 0].text(0.5, 0.5, "no data", ha="center", va="center")
    axes[0, 0].set_title(title)
    axes[0, 0].set_axis_off()
    return _save(fig, path)


def _color(chatbots: list[str], chatbot: str) -> str:
    return f"C{chatbots.index(chatbot) % 10}"


def pattern_by_entry(table: pd.DataFrame, path: Path, baseline: str | None = None) -> Path:
    """Own-pattern score by entry: one panel per steered profile × judge, a line per chatbot
    with its bootstrap band; dashed, the same diarists unsteered under that chatbot."""
    if table.empty:
        return _empty(path, "pattern score by entry")
    steered = table[table["profile"] != UNSTEERED]
    profiles, judges = ordered(steered["profile"]), ordered(table["judge"])
    chatbots = ordered(table.loc[table["chatbot"] != SHARED, "chatbot"], first=baseline)
    fig, axes = _figure(len(profiles), len(judges))
    for i, profile in enumerate(profiles):
        for j, judge in enumerate(judges):
            ax: Axes = axes[i, j]
            mine = table[(table["judge"] == judge) & (table["of"] == profile)]
            for who, style in ((profile, "-"), (UNSTEERED, "--")):
                rows = mine[mine["profile"] == who]
                first = rows[rows["chatbot"] == SHARED]
                for chatbot in chatbots:
                    line = pd.concat([first, rows[rows["chatbot"] == chatbot]])
                    line = line.sort_values("entry_index")
                    if line.empty:
                        continue
                    color = _color(chatbots, chatbot)
                    label = chatbot if who == profile else None
                    x = line["entry_index"].to_numpy()
                    ax.plot(x, line["estimate"], style, color=color, marker="o", ms=3, label=label)
                    if who == profile:
                        ax.fill_between(x, line["low"], line["high"], color=color, alpha=0.15)
            ax.set_title(f"{profile} — {judge}", fontsize=9)
            ax.set_xlabel("entry")
            ax.set_ylabel(
                "projection (× residual norm)" if judge == PROJECTION else "pattern score (0–100)"
            )
            ax.set_xticks(sorted(table["entry_index"].unique()))
    axes[0, 0].legend(fontsize=7, title="chatbot (dashed: unsteered)", title_fontsize=7)
    return _save(fig, path)


def drift_change(table: pd.DataFrame, path: Path, baseline: str | None = None) -> Path:
    """Δk by entry: one panel per steered profile × judge, a line per chatbot with its
    bootstrap band; zero (no change since the first entry) dotted."""
    if table.empty:
        return _empty(path, "drift as change")
    profiles, judges = ordered(table["profile"]), ordered(table["judge"])
    chatbots = ordered(table["chatbot"], first=baseline)
    fig, axes = _figure(len(profiles), len(judges))
    for i, profile in enumerate(profiles):
        for j, judge in enumerate(judges):
            ax: Axes = axes[i, j]
            mine = table[(table["judge"] == judge) & (table["profile"] == profile)]
            for chatbot in chatbots:
                line = mine[mine["chatbot"] == chatbot].sort_values("entry_index")
                if line.empty:
                    continue
                color, x = _color(chatbots, chatbot), line["entry_index"].to_numpy()
                ax.plot(x, line["estimate"], "-", color=color, marker="o", ms=3, label=chatbot)
                ax.fill_between(x, line["low"], line["high"], color=color, alpha=0.15)
            ax.axhline(0, color="grey", lw=0.8, ls=":")
            ax.set_title(f"{profile} — {judge}", fontsize=9)
            ax.set_xlabel("entry k")
            ax.set_ylabel("Δk = [S(k) − U(k)] − [S(1) − U(1)]")
            ax.set_xticks(sorted(table["entry_index"].unique()))
    axes[0, 0].legend(fontsize=7, title="chatbot", title_fontsize=7)
    return _save(fig, path)


def behavior_shares(table: pd.DataFrame, path: Path, baseline: str | None = None) -> Path:
    """Share of appropriate answers per behavior (conditioned, Σ p·q / Σ q), per chatbot, all
    profiles pooled; one panel per judge, bars with their bootstrap intervals."""
    rows = table[table["profile"] == ALL_PROFILES]
    if rows.empty:
        return _empty(path, "behavior shares")
    judges, behaviors = ordered(rows["judge"]), ordered(rows["behavior"])
    chatbots = ordered(rows["chatbot"], first=baseline)
    fig, axes = _figure(1, len(judges), width=5.5)
    width = 0.8 / len(chatbots)
    for j, judge in enumerate(judges):
        ax: Axes = axes[0, j]
        for c, chatbot in enumerate(chatbots):
            part = rows[(rows["judge"] == judge) & (rows["chatbot"] == chatbot)]
            part = part.set_index("behavior").reindex(behaviors)
            est = part["estimate"].to_numpy(dtype=float)
            err = np.abs(np.vstack([est - part["low"], part["high"] - est]))
            x = np.arange(len(behaviors)) + (c - (len(chatbots) - 1) / 2) * width
            ax.bar(
                x, est, width, yerr=err, capsize=2, color=_color(chatbots, chatbot), label=chatbot
            )
        ax.set_xticks(np.arange(len(behaviors)), behaviors, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of appropriate answers")
        ax.set_title(judge, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    return _save(fig, path)


def _entry_points(entries: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Per entry (shared first entry once): own-pattern score (unsteered: the mean of its
    pattern scores) and coherence, for one judge."""
    rows = usable(entries[entries["judge"] == judge], "mean")
    rows = rows.drop_duplicates(["entry_id", "score"])
    own = rows[
        (rows["score"] == "pattern:" + rows["pattern"].fillna(""))
        | ((rows["profile"] == UNSTEERED) & rows["score"].str.startswith("pattern:"))
    ]
    pattern = own.groupby(["entry_id", "profile"])["mean"].mean().rename("pattern")
    coherence = rows[rows["score"] == "coherence"].set_index(["entry_id", "profile"])["mean"]
    return pd.concat([pattern, coherence.rename("coherence")], axis=1).dropna().reset_index()


def coherence_points(entries: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Judge -> its points for coherence_vs_pattern, for the judges that scored both coherence
    and a pattern on some entry (the projection scores no coherence: it gets no panel)."""
    out = {}
    for judge in ordered(entries["judge"]):
        points = _entry_points(entries, judge)
        if len(points):
            out[judge] = points
    return out


def coherence_vs_pattern(entries: pd.DataFrame, path: Path) -> Path:
    """Does pushing the pattern cost coherence? One point per entry, one panel per judge."""
    panels = coherence_points(entries)
    if entries.empty or not panels:
        return _empty(path, "coherence vs pattern")
    profiles = ordered(entries["profile"], first=UNSTEERED)
    fig, axes = _figure(1, len(panels))
    for j, (judge, points) in enumerate(panels.items()):
        ax: Axes = axes[0, j]
        for p, profile in enumerate(profiles):
            mine = points[points["profile"] == profile]
            ax.scatter(
                mine["pattern"], mine["coherence"], s=10, alpha=0.6, color=f"C{p}", label=profile
            )
        ax.set_xlabel("own-pattern score (unsteered: mean over patterns)")
        ax.set_ylabel("coherence")
        ax.set_title(judge, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    return _save(fig, path)


def agreement_points(entries: pd.DataFrame, judge_a: str, judge_b: str) -> pd.DataFrame:
    """The entries both judges read, one row per entry × score: columns entry_id, score, kind
    (patterns pooled as "pattern"), judge_a, judge_b."""
    rows = usable(entries[entries["judge"].isin([judge_a, judge_b])], "mean")
    rows = rows.drop_duplicates(["entry_id", "judge", "score"]).assign(
        kind=lambda d: d["score"].where(~d["score"].str.startswith("pattern:"), "pattern")
    )
    wide = rows.pivot_table(index=["entry_id", "score", "kind"], columns="judge", values="mean")
    if judge_a not in wide or judge_b not in wide:
        return pd.DataFrame(columns=["entry_id", "score", "kind", judge_a, judge_b])
    return wide[[judge_a, judge_b]].dropna().reset_index()


def same_scale(judge_a: str, judge_b: str) -> bool:
    """Whether the two read on one scale (0–100), so the identity line means agreement: the
    projection is in units of the residual norm, where y = x says nothing."""
    return PROJECTION not in (judge_a, judge_b)


def _axis_label(judge: str) -> str:
    return f"{judge} (× residual norm)" if judge == PROJECTION else f"{judge} (0–100)"


def judge_agreement(entries: pd.DataFrame, judge_a: str, judge_b: str, path: Path) -> Path:
    """The two judges' readings of the same entries, one panel per score (patterns pooled);
    the identity line only where both read on the 0–100 scale, each axis its own range."""
    wide = agreement_points(entries, judge_a, judge_b)
    kinds = ordered(wide["kind"]) if len(wide) else []
    if not kinds:  # no entry both judges read: nothing to plot, not a crash
        return _empty(path, f"{judge_a} vs {judge_b}")
    fig, axes = _figure(1, len(kinds), width=3.6, height=3.4)
    for k, kind in enumerate(kinds):
        ax: Axes = axes[0, k]
        part = wide[wide["kind"] == kind]
        ax.scatter(part[judge_a], part[judge_b], s=8, alpha=0.5)
        if same_scale(judge_a, judge_b):
            ax.plot([0, 100], [0, 100], color="grey", lw=0.8, ls=":")
        r = np.corrcoef(part[judge_a], part[judge_b])[0, 1] if len(part) > 2 else np.nan
        ax.set_title(f"{kind} (n={len(part)}, r={r:.2f})", fontsize=9)
        ax.set_xlabel(_axis_label(judge_a))
        ax.set_ylabel(_axis_label(judge_b))
    return _save(fig, path)
