"""The findings report: DIR/report/findings.md with its tables, PNG plots, per-diarist pages,
CSV copies of every table at full precision, and sources.csv mapping each row id in the
report to the store ids (entries, replies) its number was computed from.

Everything is computed before anything is written, and the report folder is swapped in whole,
so a bad hypothesis or a crash never leaves half a report."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.analysis import comparisons, plots, projection
from experiments.analysis import markdown as md
from experiments.analysis.comparisons import ALL_PROFILES, BootstrapSettings
from experiments.analysis.hypotheses import evaluate, parse_hypotheses, results_table
from experiments.analysis.pages import diarist_page
from experiments.analysis.tables import AnalysisTables, ordered

# Row-id prefixes: a number in findings.md is found in sources.csv by its row id.
PREFIXES = {
    "hypotheses": "V",  # V for verdict: "H1" would read as a hypothesis id
    "steering": "S",
    "quality": "Q",
    "drift": "D",
    "drift_vs_baseline": "B",
    "behaviors": "R",
    "agreement": "A",
}


@dataclass(frozen=True)
class Results:
    tables: dict[str, pd.DataFrame]  # name -> table with row_id and sources
    pattern_by_entry: pd.DataFrame


def compute(
    tables: AnalysisTables, design: Mapping[str, Any], settings: BootstrapSettings, baseline: str
) -> Results:
    """Every number the report shows, as tables (pure: no files)."""
    hypotheses = parse_hypotheses(design, "design")
    e, r = tables.entries, tables.replies
    found = {
        "hypotheses": results_table(evaluate(hypotheses, e, settings)),
        "steering": comparisons.steering_effect(e, settings),
        "quality": comparisons.quality(e, settings),
        "drift": comparisons.drift(e, settings),
        "drift_vs_baseline": comparisons.drift_vs_baseline(e, settings, baseline),
        "behaviors": comparisons.behaviors(r, settings),
        "agreement": comparisons.judge_agreement(e, r, settings),
    }
    for name, frame in found.items():
        ids = [f"{PREFIXES[name]}{i + 1}" for i in range(len(frame))]
        found[name] = frame.assign(row_id=ids) if len(frame) else frame.assign(row_id=[])
    return Results(found, comparisons.pattern_by_entry(e, settings))


Column = str | Callable[[pd.Series], str]


def _ci(prefix: str = "", digits: int = 1) -> Column:
    """'estimate [low, high]' from <prefix>estimate/low/high (or pearson, pearson_low/_high)."""
    names = [f"{prefix}estimate", f"{prefix}low", f"{prefix}high"]
    if prefix == "pearson":
        names = ["pearson", "pearson_low", "pearson_high"]
    return lambda row: md.interval(row[names[0]], row[names[1]], row[names[2]], digits)


def _header(design: Mapping[str, Any], sha: str, manifest: Mapping[str, Any]) -> str:
    name = design.get("design", {}).get("name", "unnamed design")
    return "\n".join(
        [
            f"# Findings: {name}\n",
            f"Design sha256: `{sha}`\n",
            "## Manifest\n",
            md.key_values(manifest) if manifest else "_empty manifest_\n",
        ]
    )


def _method(settings: BootstrapSettings, baseline: str, diarists: int) -> str:
    method = {"bca": "BCa", "percentile": "percentile"}[settings.method]
    few = (
        f"With {diarists} diarists these intervals run narrow (in simulation, about 88–89% "
        "coverage for a nominal 95% at 8 diarists; nominal from about 30): read them as showing "
        "clear effects, not subtle ones. "
        if diarists < 30
        else ""
    )
    return (
        "## How to read this\n\n"
        f"Intervals are {settings.level:.0%} {method} intervals from a cluster "
        f"bootstrap over diarists ({settings.resamples} resamples, seed {settings.seed}): whole "
        "diarists are resampled, because one diarist's entries are not independent. "
        f"{few}Pattern scores are read against the same diarist unsteered (same entry, "
        "same chatbot). Comparisons stay within one judge; both judges are shown. "
        f"`{baseline}` is the fixed-reply baseline chatbot. Unreadable judgments are left out "
        "and counted, never replaced. Each row has a row id; `sources.csv` lists the entry and "
        "reply ids behind it, `tables/*.csv` hold every table at full precision, and the "
        "diarist pages show the texts with their scores.\n"
    )


def _data(tables: AnalysisTables) -> str:
    e, r, f = tables.entries, tables.replies, tables.flags
    counts = {
        "diarists": e["diarist"].nunique(),
        "entries": e["entry_id"].nunique(),
        "entry judgments": len(e.drop_duplicates(["entry_id", "judge", "score"])),
        "unreadable entry judgments": int(
            (~e.drop_duplicates(["entry_id", "judge", "score"])["readable"].astype(bool)).sum()
        ),
        "replies": r["reply_id"].nunique(),
        "reply judgments": len(r),
        "unreadable reply judgments": int((~r["readable"].astype(bool)).sum()),
    }
    counts |= {f"flags: {k}": int(n) for k, n in f["kind"].value_counts().sort_index().items()}
    return "## Data\n\n" + md.key_values(counts)


def _sections(res: Results, baseline: str) -> list[str]:
    t = res.tables
    paired_cols = {
        "n": "n_diarists",
        "steered": "steered",
        "unsteered": "unsteered",
        "steered − unsteered [95% CI]": _ci(),
    }
    h = t["hypotheses"]
    behaviors = t["behaviors"]
    pooled = behaviors[(behaviors["level"] == "behavior") & (behaviors["profile"] == ALL_PROFILES)]
    return [
        "## Hypotheses\n",
        "A hypothesis is supported only if every listed judge's interval lies on the predicted "
        "side of zero; mixed if some do.\n",
        md.table(
            h,
            {"row": "row_id", "id": "id", "contrast": "contrast", "direction": "direction"}
            | {"judge": "judge", "n": "n_diarists", "estimate [95% CI]": _ci()}
            | {"judge verdict": "judge_verdict", "overall": "overall"},
        ),
        "## Did steering work?\n",
        "First entry, score of the profile's own pattern, steered minus the same diarist "
        "unsteered.\n",
        md.table(
            t["steering"], {"row": "row_id", "judge": "judge", "profile": "profile"} | paired_cols
        ),
        "![pattern score by entry](plots/pattern_by_entry.png)\n",
        "## Coherence and realism\n",
        md.table(
            t["quality"],
            {"row": "row_id", "judge": "judge", "profile": "profile", "score": "score"}
            | paired_cols,
        ),
        "![coherence vs pattern](plots/coherence_vs_pattern.png)\n",
        "## Drift over the conversation\n",
        "Own-pattern score at entry k, steered minus the same diarist unsteered under the same "
        "chatbot.\n",
        md.table(
            t["drift"],
            {"row": "row_id", "judge": "judge", "profile": "profile", "chatbot": "chatbot"}
            | {"entry": "entry_index"}
            | paired_cols,
        ),
        f"Each chatbot's drift minus the baseline `{baseline}`'s, same diarist and entry.\n",
        md.table(
            t["drift_vs_baseline"],
            {"row": "row_id", "judge": "judge", "profile": "profile", "chatbot": "chatbot"}
            | {"entry": "entry_index", "n": "n_diarists", "difference [95% CI]": _ci()},
        ),
        "## Behaviors (descriptive)\n",
        "Share of replies with P(yes) ≥ 0.5 and mean P(yes), pooled over a behavior's "
        "questions and over profiles. Per question and per profile: `tables/behaviors.csv`.\n",
        md.table(
            pooled,
            {"row": "row_id", "judge": "judge", "chatbot": "chatbot", "behavior": "item"}
            | {"replies": "n_replies", "share [95% CI]": _ci("share_", 2)}
            | {"mean P(yes) [95% CI]": _ci("mean_p_", 2)},
        ),
        "![behavior shares](plots/behavior_shares.png)\n",
        "## Judge agreement\n",
        md.table(
            t["agreement"],
            {"row": "row_id", "judge a": "judge_a", "judge b": "judge_b", "score": "score"}
            | {"n": "n", "Pearson [95% CI]": _ci("pearson", 2)}
            | {"Spearman": lambda r: md.number(r["spearman"], 2)},
        ),
    ]


def _sources(res: Results) -> pd.DataFrame:
    rows = [
        {"row_id": row["row_id"], "table": name, "ids": md.join_ids(row["sources"])}
        for name, frame in res.tables.items()
        if len(frame)
        for _, row in frame.iterrows()
    ]
    return pd.DataFrame(rows, columns=["row_id", "table", "ids"])


def write_report(
    out_dir: Path,
    tables: AnalysisTables,
    *,
    design: dict,
    design_sha256: str,
    manifest: dict,
    resamples: int,
    seed: int,
    baseline_chatbot: str,
) -> Path:
    """Write out_dir/report/ and return the path of findings.md."""
    out_dir = Path(out_dir)
    settings = BootstrapSettings(resamples=resamples, seed=seed)
    res = compute(tables, design, settings, baseline_chatbot)
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    try:
        judges = ordered(tables.entries["judge"])
        figures = work / "plots"
        plots.pattern_by_entry(
            res.pattern_by_entry, figures / "pattern_by_entry.png", baseline_chatbot
        )
        plots.coherence_vs_pattern(tables.entries, figures / "coherence_vs_pattern.png")
        plots.behavior_shares(
            res.tables["behaviors"], figures / "behavior_shares.png", baseline_chatbot
        )
        agreement = []
        for a, b in zip(judges, judges[1:], strict=False):
            png = plots.judge_agreement(tables.entries, a, b, figures / f"agreement_{a}__{b}.png")
            agreement.append(f"![{a} vs {b}](plots/{png.name})\n")
        (work / "tables").mkdir()
        for name, frame in res.tables.items():
            frame.assign(sources=frame["sources"].map(md.join_ids) if len(frame) else []).to_csv(
                work / "tables" / f"{name}.csv", index=False
            )
        res.pattern_by_entry.to_csv(work / "tables" / "pattern_by_entry.csv", index=False)
        _sources(res).to_csv(work / "sources.csv", index=False)
        (work / "diarists").mkdir()
        diarists = ordered(pd.concat([tables.entries["diarist"], tables.replies["diarist"]]))
        for diarist in diarists:
            page = diarist_page(
                diarist, tables.entries, tables.replies, tables.flags, baseline_chatbot
            )
            (work / "diarists" / f"{diarist}.md").write_text(page, encoding="utf-8")
        links = "\n".join(f"- [{d}](diarists/{d}.md)" for d in diarists)
        findings = "\n".join(
            [
                _header(design, design_sha256, manifest),
                _method(settings, baseline_chatbot, tables.entries["diarist"].nunique()),
                _data(tables),
                *_sections(res, baseline_chatbot),
                *projection.section(res.tables["steering"], res.tables["agreement"]),
                *agreement,
                "## Diarists\n",
                links + "\n",
            ]
        )
        (work / "findings.md").write_text(findings, encoding="utf-8")
        final = out_dir / "report"
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return final / "findings.md"
