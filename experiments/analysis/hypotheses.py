"""Preregistered hypotheses: a small language of named contrasts, and verdicts per judge.

A hypothesis names a contrast the lab knows how to compute per diarist (so it can be
bootstrapped over diarists), a predicted direction, and the judges that must agree. A judge
supports it when its 95% interval lies wholly on the predicted side of zero; the hypothesis is
"supported" only if every listed judge supports it, "not supported" if none does, and "mixed"
otherwise. Unknown contrast forms are refused when the design is read, not after a run."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from experiments.analysis import paired
from experiments.analysis.bootstrap import Interval, cluster_bootstrap, mean_of
from experiments.analysis.comparisons import BootstrapSettings
from foundation.datafiles import field, string_list
from foundation.errors import LabError

SUPPORTED_CONTRASTS = (
    "first_entry_pattern(steered) - first_entry_pattern(unsteered)",
    "first_entry_pattern(profile=P) - first_entry_pattern(unsteered)",
    "drift(chatbot=X[, entry=K][, profile=P])",
    "drift(chatbot=X[, entry=K][, profile=P]) - drift(chatbot=B[, entry=K][, profile=P])",
    "coherence(steered) - coherence(unsteered)   (or profile=P in place of steered)",
    "realism(steered) - realism(unsteered)   (or profile=P in place of steered)",
)
SUPPORTED = "first_entry_pattern", "drift", "coherence", "realism"
_TERM = re.compile(r"^\s*([a-z_]+)\s*\(([^()]*)\)\s*$")
Kind = Literal["first_entry_pattern", "drift", "coherence", "realism"]


@dataclass(frozen=True)
class Contrast:
    """What a contrast computes. profile None pools the steered profiles; entry None averages
    entries 2 onward; baseline set means 'minus the same diarist's drift under the baseline'."""

    kind: Kind
    text: str
    profile: str | None = None
    chatbot: str | None = None
    baseline: str | None = None
    entry: int | None = None


@dataclass(frozen=True)
class Hypothesis:
    id: str
    says: str
    contrast: Contrast
    direction: Literal["greater", "less"]
    judges: tuple[str, ...]


@dataclass(frozen=True)
class JudgeVerdict:
    judge: str
    interval: Interval
    supports: bool | None  # None: no data for this judge
    sources: tuple[str, ...]


@dataclass(frozen=True)
class HypothesisResult:
    hypothesis: Hypothesis
    verdicts: tuple[JudgeVerdict, ...]
    overall: str  # "supported" | "not supported" | "mixed"


def _refuse(text: str, where: str, why: str) -> LabError:
    forms = "; ".join(SUPPORTED_CONTRASTS)
    return LabError(f"contrast {text!r}: {why}", where=where, fix=f"write one of: {forms}")


def _arguments(body: str, text: str, where: str) -> tuple[set[str], dict[str, str]]:
    words: set[str] = set()
    named: dict[str, str] = {}
    for part in (p.strip() for p in body.split(",") if p.strip()):
        key, eq, value = (s.strip() for s in part.partition("="))
        if not eq:
            words.add(key)
        elif key in ("profile", "chatbot", "entry") and value and key not in named:
            named[key] = value
        else:
            raise _refuse(text, where, f"unexpected argument {part!r}")
    return words, named


def parse_contrast(text: str, where: str = "contrast") -> Contrast:
    """Parse one of SUPPORTED_CONTRASTS; anything else is a LabError naming `where`."""
    sides = [s for s in re.split(r"\s+-\s+", text.strip())]
    if not 1 <= len(sides) <= 2:
        raise _refuse(text, where, "expected 'term' or 'term - term'")
    terms = []
    for side in sides:
        match = _TERM.match(side)
        if not match or match.group(1) not in SUPPORTED:
            raise _refuse(text, where, f"unknown term {side.strip()!r}")
        terms.append((match.group(1), *_arguments(match.group(2), text, where)))
    kinds = {t[0] for t in terms}
    if len(kinds) != 1:
        raise _refuse(text, where, "both sides must be the same kind of term")
    kind = terms[0][0]
    if kind == "drift":
        return _drift(text, where, terms)
    if len(terms) != 2 or terms[1][1] != {"unsteered"} or terms[1][2]:
        raise _refuse(text, where, f"the right side must be {kind}(unsteered)")
    words, named = terms[0][1], terms[0][2]
    if set(named) - {"profile"} or not ((words == {"steered"}) ^ ("profile" in named)):
        raise _refuse(text, where, f"the left side must be {kind}(steered) or {kind}(profile=P)")
    return Contrast(kind=kind, text=text, profile=named.get("profile"))  # type: ignore[arg-type]


def _drift(text: str, where: str, terms: list[tuple[str, set[str], dict[str, str]]]) -> Contrast:
    if any(words or "chatbot" not in named for _, words, named in terms):
        raise _refuse(text, where, "drift terms take chatbot=X and optionally entry=K, profile=P")
    left = terms[0][2]
    if len(terms) == 2:
        right = terms[1][2]
        if {k: v for k, v in left.items() if k != "chatbot"} != {
            k: v for k, v in right.items() if k != "chatbot"
        }:
            raise _refuse(text, where, "both drift terms must name the same entry and profile")
    entry = left.get("entry")
    if entry is not None and not (entry.isdigit() and int(entry) >= 2):
        raise _refuse(text, where, f"entry must be a whole number ≥ 2, got {entry!r}")
    return Contrast(
        kind="drift",
        text=text,
        profile=left.get("profile"),
        chatbot=left["chatbot"],
        baseline=terms[1][2]["chatbot"] if len(terms) == 2 else None,
        entry=int(entry) if entry is not None else None,
    )


def parse_hypotheses(design: Mapping[str, Any], where: str = "design") -> tuple[Hypothesis, ...]:
    """The design's [[hypotheses]], validated (ids unique, direction known, contrast supported)."""
    items = design.get("hypotheses", [])
    if not isinstance(items, list):
        raise LabError(
            "hypotheses must be an array of tables", where=where, fix="use [[hypotheses]]"
        )
    out: list[Hypothesis] = []
    for i, item in enumerate(items):
        w = f"{where} [[hypotheses]] #{i + 1}"
        if not isinstance(item, dict):
            raise LabError("must be a table", where=w, fix="write it as a [[hypotheses]] table")
        direction = field(item, "direction", str, w)
        if direction not in ("greater", "less"):
            raise LabError(
                f"direction {direction!r}", where=f"{w}.direction", fix="use 'greater' or 'less'"
            )
        hypothesis = Hypothesis(
            id=field(item, "id", str, w),
            says=field(item, "says", str, w),
            contrast=parse_contrast(field(item, "contrast", str, w), f"{w}.contrast"),
            direction=direction,  # type: ignore[arg-type]
            judges=tuple(string_list(item, "judges", w, min_items=1)),
        )
        if hypothesis.id in {h.id for h in out}:
            raise LabError(f"duplicate id {hypothesis.id!r}", where=f"{w}.id", fix="rename one")
        out.append(hypothesis)
    return tuple(out)


def per_diarist(contrast: Contrast, entries: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The contrast's value for each diarist under one judge (column 'diff', with sources)."""
    if contrast.kind == "first_entry_pattern":
        return paired.first_entry_steering(entries, judge, contrast.profile)
    if contrast.kind == "drift":
        assert contrast.chatbot is not None
        return paired.drift(
            entries, judge, contrast.profile, contrast.chatbot, contrast.entry, contrast.baseline
        )
    return paired.quality(entries, judge, contrast.profile, contrast.kind)


def _check_names(hypothesis: Hypothesis, entries: pd.DataFrame) -> None:
    """A name the run does not contain would silently yield 'no data'; say so instead."""
    c, where = hypothesis.contrast, f"hypothesis {hypothesis.id}"
    named = [("profile", c.profile), ("chatbot", c.chatbot), ("chatbot", c.baseline)]
    for column, value in named + [("judge", j) for j in hypothesis.judges]:
        if value is not None and value not in set(entries[column].astype(str)):
            present = ", ".join(sorted(set(entries[column].astype(str))))
            raise LabError(
                f"names {column} {value!r}, which this run does not contain",
                where=where,
                fix=f"use one of {present}",
            )


def overall_verdict(supports: Sequence[bool | None]) -> str:
    """Every judge must support it; a judge without data does not support it."""
    if supports and all(s is True for s in supports):
        return "supported"
    if not any(s is True for s in supports):
        return "not supported"
    return "mixed"


def evaluate(
    hypotheses: Sequence[Hypothesis], entries: pd.DataFrame, settings: BootstrapSettings
) -> tuple[HypothesisResult, ...]:
    results = []
    for hypothesis in hypotheses:
        _check_names(hypothesis, entries)
        verdicts = []
        for judge in hypothesis.judges:
            table = per_diarist(hypothesis.contrast, entries, judge)
            interval = cluster_bootstrap(
                table,
                mean_of("diff"),
                resamples=settings.resamples,
                seed=settings.seed,
                level=settings.level,
                method=settings.method,
            )
            defined = bool(pd.notna(interval.low) and pd.notna(interval.high))
            supports = interval.excludes_zero(hypothesis.direction) if defined else None
            sources = tuple(sorted(set().union(*table["sources"]))) if len(table) else ()
            verdicts.append(JudgeVerdict(judge, interval, supports, sources))
        overall = overall_verdict([v.supports for v in verdicts])
        results.append(HypothesisResult(hypothesis, tuple(verdicts), overall))
    return tuple(results)


RESULT_COLUMNS = [
    "id", "contrast", "direction", "judge", "estimate", "low", "high", "n_diarists",
    "judge_verdict", "overall", "sources",
]  # fmt: skip


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge, with the overall verdict repeated beside each."""
    rows = [
        {"id": r.hypothesis.id, "contrast": r.hypothesis.contrast.text}
        | {"direction": r.hypothesis.direction, "judge": v.judge}
        | {"estimate": v.interval.estimate, "low": v.interval.low, "high": v.interval.high}
        | {"n_diarists": v.interval.clusters}
        | {"judge_verdict": {True: "supports", False: "does not", None: "no data"}[v.supports]}
        | {"overall": r.overall, "sources": v.sources}
        for r in results
        for v in r.verdicts
    ]
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
