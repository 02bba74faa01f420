"""The friends report: DIR/report/findings.md (hypotheses with per-judge verdicts, the primary
outcome per writer group against both controls, identity-check rates), the letter-by-letter
plots, examples.md (whole exchanges picked by a stated rule), CSV copies of every table at full
precision and sources.csv (row id -> the letter ids behind it). Everything is computed before
anything is written, and the report folder is swapped in whole."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from diarylab.experiments.analysis import manifest_view, readings
from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis import usage as calls
from diarylab.experiments.analysis.bootstrap import METHOD_NAMES, BootstrapSettings
from diarylab.experiments.analysis.html_page import judgment_bounds, write_page
from diarylab.experiments.analysis.hypothesis_table import family_error_line
from diarylab.experiments.analysis.judge_caveat import caveat_box
from diarylab.experiments.analysis.rule_texts import hypotheses_text, rule_line
from diarylab.experiments.analysis.verdict_tables import verdict_tables
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.runfolder import replaced_folder
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.friends import html
from diarylab.experiments.kinds.friends.describe import (
    EXAMPLE_RULE,
    by_letter,
    example_pairs,
    group_label,
    identity_rates,
    versus_controls,
)
from diarylab.experiments.kinds.friends.examples_page import ends_at_sentence, examples_page
from diarylab.experiments.kinds.friends.outcomes import letter_table, writer_outcomes
from diarylab.experiments.kinds.friends.plots import letters_plot
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile
from diarylab.experiments.kinds.friends.verdicts import evaluate, results_table

PREFIXES = {"hypotheses": "V", "outcome": "O", "identity": "I", "by_letter": "L"}
Column = str | Callable[[pd.Series], str]


@dataclass(frozen=True)
class FriendsResults:
    tables: dict[str, pd.DataFrame]
    examples: dict[str, list[str]]
    letters: pd.DataFrame


def hypothesis_table(
    outcomes: pd.DataFrame, spec: FriendsDesignFile, settings: BootstrapSettings
) -> pd.DataFrame:
    """The preregistered hypotheses' verdicts per judge (the report's and open_run's)."""
    return results_table(
        evaluate(
            spec.hypotheses,
            outcomes,
            seed=settings.seed,
            min_role_cards=spec.analysis.min_role_cards,
            rule=spec.analysis.decision_rule,
        )
    )


def friends_settings(spec: FriendsDesignFile, design: Design, resamples: int) -> BootstrapSettings:
    return BootstrapSettings(
        spec.analysis.cluster_column, resamples, design.seed, method=spec.analysis.interval
    )


def compute(store: Store, spec: FriendsDesignFile, settings: BootstrapSettings) -> FriendsResults:
    """Every number the report shows (pure: reads the store, writes nothing)."""
    letters = letter_table(store)
    outcomes = writer_outcomes(letters, spec.outcome.letters)
    tables = {
        "hypotheses": hypothesis_table(outcomes, spec, settings),
        "outcome": versus_controls(outcomes, settings),
        "identity": identity_rates(letters, settings),
        "by_letter": by_letter(letters, settings),
    }
    for name, frame in tables.items():
        tables[name] = frame.assign(row_id=[f"{PREFIXES[name]}{i + 1}" for i in range(len(frame))])
    first_judge = spec.judges[0].id
    return FriendsResults(tables, example_pairs(outcomes, first_judge), letters)


def _ci(prefix: str = "", digits: int = 1) -> Column:
    return lambda r: md.interval(
        r[f"{prefix}estimate"], r[f"{prefix}low"], r[f"{prefix}high"], digits
    )


def _group_of(row: pd.Series) -> str:
    return group_label(row["profile"], row["friend_profile"])


_group: Column = _group_of


def _cards(row: pd.Series) -> str:
    """ "8" when every card the run wrote for is there, "6 of 8" when some were lost."""
    n, expected = int(row["n_cards"]), int(row.get("n_cards_expected", row["n_cards"]))
    return str(n) if n >= expected else f"{n} of {expected}"


def _p(name: str) -> Column:
    return lambda r: md.number(r[name], 4)


def _sections(
    res: FriendsResults, spec: FriendsDesignFile, settings: BootstrapSettings
) -> list[str]:
    t = res.tables
    rule = spec.analysis.decision_rule
    numbers = [str(k) for k in spec.outcome.letters]
    letters = ("letter " if len(numbers) == 1 else "letters ") + ", ".join(numbers)
    return [
        "## Hypotheses (preregistered)\n",
        f"Per judge, each hypothesis's contrast is computed per role card (the cluster) on the "
        f"primary outcome — each writer's mean score for the named pattern over their "
        f"{letters}, each writer group's profiles weighted equally within a card — and tested "
        "with the exact sign-flip test. "
        + hypotheses_text(
            spec.analysis.decision_rule,
            len(spec.hypotheses),
            spec.analysis.min_role_cards,
            "role cards",
        )
        + family_error_line(
            t["hypotheses"], rule, len(spec.hypotheses), clusters="cards", cluster_word="role cards"
        ),
        *verdict_tables(
            t["hypotheses"],
            rule,
            ("estimate [95% CI]", _ci()),
            ("cards", "n_cards"),
            {"p": _p("p"), "p (Holm)": _p("p_holm"), "MDE": "mde", "ρ": _p("judge_correlation")},
        ),
        "## Pattern scores letter by letter (descriptive)\n",
        "Mean score per letter of the writer, for each writer group — a condition seen from one "
        "writer: own profile → friend's profile, so seat A of condition X+Y and seat B of Y+X "
        "are both X → Y; `fixed` is the fixed letter — with interval bands over role cards. "
        "Every row: `tables/by_letter.csv`.\n",
        *(f"![pattern scores by letter, {j.id}](plots/letters_{j.id}.png)\n" for j in spec.judges),
        "## Primary outcome against both controls (exploratory)\n",
        f"Each writer's mean score over their {letters}, per writer group and scored pattern; "
        "then the same cards' difference from two unsteered friends, and from writers of the "
        "same profile whose friend sent only the fixed letter.\n",
        md.table(
            t["outcome"],
            {"row": "row_id", "judge": "judge", "writer → friend": _group, "score": "score"}
            | {"writers": "n_writers", "cards (of expected)": _cards}
            | {"outcome [95% CI]": _ci()}
            | {"− two unsteered [95% CI]": _ci("vs_unsteered_")}
            | {"− fixed friend [95% CI]": _ci("vs_fixed_")},
        ),
        "## Identity check (descriptive)\n",
        "Share of letters the judge says stay true to their writer's own life (P(yes) ≥ 0.5), "
        "and the mean P(yes), per writer group.\n",
        md.table(
            t["identity"],
            {"row": "row_id", "judge": "judge", "writer → friend": _group}
            | {"letters": "n_letters", "share [95% CI]": _ci("share_", 2)}
            | {"mean P(yes) [95% CI]": _ci("mean_p_", 2)},
        ),
        "## Example exchanges\n",
        f"{EXAMPLE_RULE} The exchanges are in [examples.md](examples.md).\n",
    ]


def _header(
    design: Design, manifest: Mapping[str, Any], settings: BootstrapSettings, folder: Path
) -> str:
    return "\n".join(
        [
            f"# Findings: {design.name} (two steered friends)\n",
            *caveat_box(design.raw),
            f"Design sha256: `{design.sha256}`\n",
            "## How to read this\n",
            f"Intervals in the descriptive tables are {settings.level:.0%} "
            f"{METHOD_NAMES[settings.method]} intervals over role cards ({_how(settings)}): a "
            "card's writers are not independent (same person, same voice). "
            + rule_line(design.spec.analysis.decision_rule)  # type: ignore[attr-defined]
            + " Comparisons stay within one judge. Unreadable judgments are left out and counted, "
            "never replaced. Only the hypotheses are preregistered; everything else is "
            "exploratory. The small-model demo numbers show the pipeline, not findings.\n",
            manifest_view.section(manifest, folder),
        ]
    )


def _how(settings: BootstrapSettings) -> str:
    if settings.method == "t":
        return (
            "estimate ± t(n − 1) × the leave-one-card-out jackknife SE; it covers 95% at 8 "
            "cards in the tests' simulations, where bootstrap intervals cover 85–89%"
        )
    return f"whole cards resampled, {settings.resamples} resamples, seed {settings.seed}"


def _data(store: Store, letters: pd.DataFrame) -> str:
    counts: dict[str, Any] = {
        "pairs": store.count("letters", distinct="pair_id"),
        "letters": store.count("letters"),
        "fixed letters (no model)": store.count("letters", null=["call_key"]),
        "letter judgments": len(letters),
        "unreadable letter judgments": int((~letters["readable"]).sum()),
    }
    for flag, n in sorted(store.flag_counts("letters").items()):
        counts[f"letters flagged {flag}"] = n
    return "## Data\n\n" + md.key_values(counts)


def _sources(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    rows = [
        {"row_id": row["row_id"], "table": name, "ids": md.join_ids(row["sources"])}
        for name, frame in tables.items()
        if "sources" in frame.columns
        for _, row in frame.iterrows()
    ]
    return pd.DataFrame(rows, columns=["row_id", "table", "ids"])


def write_friends_report(
    folder: Path, store: Store, design: Design, *, manifest: Mapping[str, Any], resamples: int
) -> Path:
    spec: FriendsDesignFile = design.spec  # type: ignore[assignment]
    settings = friends_settings(spec, design, resamples)
    res = compute(store, spec, settings)
    bounds = judgment_bounds(store)
    # Judge readings per judge × the writer's profile (a letter's judgments under its writer's).
    groups = {("letter", i): p for i, p in store.select("letters", ("letter_id", "profile"))}
    judge_readings = readings.summarize(readings.stored_readings(store, groups), first="unsteered")
    usage = calls.usage_table(store, folder)
    folder.mkdir(parents=True, exist_ok=True)
    with replaced_folder(folder / "report") as work:
        for judge in spec.judges:
            letters_plot(
                res.tables["by_letter"], judge.id, work / "plots" / f"letters_{judge.id}.png"
            )
        (work / "tables").mkdir()
        for name, frame in res.tables.items():
            if "sources" in frame.columns:
                frame = frame.assign(sources=frame["sources"].map(md.join_ids))
            frame.to_csv(work / "tables" / f"{name}.csv", index=False)
        judge_readings.to_csv(work / "tables" / "judge_readings.csv", index=False)
        usage.to_csv(work / "tables" / "usage.csv", index=False)
        sources = _sources(res.tables)
        sources.to_csv(work / "sources.csv", index=False)
        (work / "examples.md").write_text(
            examples_page(store, res.examples, res.letters, ends_at_sentence(spec)),
            encoding="utf-8",
        )
        findings = "\n".join(
            [
                _header(design, manifest, settings, folder),
                _data(store, res.letters),
                *readings.section(judge_readings, "profile", design.coverage_floor),
                *calls.section(usage, folder),
                *calls.plan_section(store, folder),
                *_sections(res, spec, settings),
            ]
        )
        (work / "findings.md").write_text(findings, encoding="utf-8")
        page = html.viewer(store, res.letters, sources, f"Findings: {design.name}", bounds)
        write_page(work, findings, page)
    return folder / "report" / "findings.md"
