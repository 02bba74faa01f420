"""Preregistered hypotheses, the part every kind shares: the head of a [[hypotheses]] table (id,
words, predicted direction, judges, and the rule that every judge of the design is listed) and
the one evaluator of a family of hypotheses.

A kind adds its own `contrast` to the head and computes, per hypothesis and judge, the
contrast's value for each cluster (a diarist, a role card). The evaluator does the rest, the
same way for every kind: the exact sign-flip test on the per-cluster values
(experiments/analysis/verdicts.py), its two-sided p Holm-adjusted across the hypotheses that
name the judge (per judge, never across judges), the minimum detectable effect at Holm's first
step, the judge's verdict (none from fewer clusters than the design's minimum, or than the
level of the hypothesis's own step of Holm's procedure can use) and the overall
verdict (every judge must agree). The interval shown beside a verdict is the kind's choice; the
verdict never reads it."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

import numpy as np
from pydantic import AfterValidator, BeforeValidator, Field

from diarylab.experiments.analysis.bootstrap import Interval
from diarylab.experiments.analysis.rules import (
    RULES,
    Rule,
    holm_step_needs,
    judge_correlation,
    mde,
    needed_clusters,
    other_rule,
    rounded_correlation,
)
from diarylab.experiments.analysis.verdicts import (
    ALPHA,
    MIN_CLUSTERS,
    Direction,
    SignFlip,
    Verdict,
    decide,
    holm,
    overall,
    sign_flip,
    sign_flip_interval,
)
from diarylab.foundation.datafiles import FIX_MARK, DataModel, NonEmpty, Slug
from diarylab.foundation.errors import LabError


class UnknownName(LabError, ValueError):
    """A hypothesis naming something its design lacks. Also a ValueError, so that raised in a
    design schema's validator it becomes that file's one-line error like any other."""


def known(what: str, name: str, names: Iterable[str], where: str) -> None:
    """Refuse `name` unless it is one of `names`, listing them in the fix."""
    names = set(names)
    if name not in names:
        raise UnknownName(
            f"unknown {what} {name!r}",
            where=where,
            fix=f"name one of {', '.join(sorted(names)) or '(none defined)'}",
        )


def as_tuple(value: Any) -> Any:
    """TOML arrays arrive as lists; the strict schema keeps tuples (frozen models)."""
    if isinstance(value, list):
        return tuple(value)
    if not isinstance(value, tuple):
        raise ValueError(f"must be an array, got {value!r}{FIX_MARK}write [ ... ]")
    return value


def _judge_ids(judges: tuple[str, ...]) -> tuple[str, ...]:
    if not judges:
        raise ValueError(f'no judges{FIX_MARK}list at least one judge id, e.g. judges = ["..."]')
    repeated = sorted({j for j in judges if judges.count(j) > 1})
    if repeated:
        raise ValueError(f"judge {repeated[0]!r} listed twice{FIX_MARK}list each judge once")
    return judges


JudgeIds = Annotated[tuple[Slug, ...], BeforeValidator(as_tuple), AfterValidator(_judge_ids)]


class HypothesisHead(DataModel):
    """What every kind's hypothesis has; a kind's schema adds `contrast`."""

    id: Slug = Field(description="names the hypothesis in the report (e.g. H1)")
    says: NonEmpty = Field(description="the hypothesis in words")
    direction: Literal["greater", "less"] = Field(description="the predicted sign of the contrast")
    judges: JudgeIds = Field(
        description="every judge id of the design; all must agree for an overall verdict "
        "(default: the design's [[judges]], so adding a judge edits no hypothesis)"
    )

    def formula(self) -> str:
        """The contrast as a formula (a kind's hypothesis reads it off its contrast)."""
        return self.id

    def check_judges(self, judges: Iterable[str], at: str) -> None:
        """Every judge listed exists, and none of the design's is left out: listing fewer
        would let one judge's reading carry the verdict alone."""
        judge_ids = set(judges)
        for judge in self.judges:
            known("judge", judge, judge_ids, f"{at}.judges")
        left_out = sorted(judge_ids - set(self.judges))
        if left_out:
            raise UnknownName(
                f"leaves out judge(s) {', '.join(left_out)}: a verdict needs every judge of the "
                "design",
                where=f"{at}.judges",
                fix=f"list every judge: judges = [{', '.join(map(repr, sorted(judge_ids)))}]",
            )


def unique_ids(hypotheses: tuple[HypothesisHead, ...]) -> tuple[HypothesisHead, ...]:
    """An AfterValidator for a design's hypotheses: every id once."""
    seen: dict[str, int] = {}
    for i, h in enumerate(hypotheses):
        if h.id in seen:
            raise ValueError(
                f"duplicate id {h.id!r} (hypotheses[{seen[h.id]}] and hypotheses[{i}])"
                f"{FIX_MARK}give each hypothesis its own id"
            )
        seen[h.id] = i
    return hypotheses


H = TypeVar("H", bound=HypothesisHead)


@dataclass(frozen=True)
class ClusterValues:
    """One hypothesis's contrast under one judge: its value for each cluster (NaN: missing),
    and the store ids it was computed from."""

    values: tuple[float, ...]
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeVerdict:
    judge: str
    interval: Interval  # the 95% sign-flip interval ("intervals" reads it)
    test: SignFlip  # what "holm" reads
    sd: float  # per-cluster SD of the contrast (ddof 1)
    p_holm: float  # the two-sided p, Holm-adjusted across the hypotheses naming this judge
    mde: float  # minimum detectable effect of the design's rule, 80% power (simulated)
    verdict: Verdict  # under the design's rule
    sources: tuple[str, ...]
    sensitivity: Verdict = "too few"  # under the other rule
    # The clusters a verdict needs under each rule: the design's minimum, raised where the
    # family is too large for the test to reach its level with fewer.
    needed: int = 0
    sensitivity_needed: int = 0
    judge_correlation: float = float("nan")  # the MDE's correlation between the judges


@dataclass(frozen=True)
class HypothesisVerdict(Generic[H]):
    hypothesis: H
    verdicts: tuple[JudgeVerdict, ...]
    overall: Verdict
    rule: Rule = "holm"
    sensitivity: Verdict = "too few"  # overall, under the other rule


IntervalRule = Callable[[np.ndarray], Interval]


def inverted_sign_flip(seed: int = 0, alpha: float = ALPHA) -> IntervalRule:
    """The sign-flip test inverted at `alpha` (equal-tailed, unadjusted): the interval every
    kind shows beside a verdict and the "intervals" rule reads."""

    def interval(values: np.ndarray) -> Interval:
        low, high = sign_flip_interval(list(values), alpha=alpha, seed=seed)
        mean = float(np.mean(values)) if len(values) else math.nan
        return Interval(mean, low, high, 1 - alpha, "sign-flip", 0, len(values))

    return interval


def interval_verdict(
    interval: Interval, direction: Direction, *, min_clusters: int = MIN_CLUSTERS
) -> Verdict:
    """The "intervals" rule for one judge: the interval on the predicted side of zero."""
    if interval.clusters < min_clusters or math.isnan(interval.low):
        return "too few"
    if interval.excludes_zero(direction):
        return "supported"
    if interval.excludes_zero("less" if direction == "greater" else "greater"):
        return "contradicted"
    return "inconclusive"


def evaluate_family(
    hypotheses: Sequence[H],
    values: Mapping[tuple[str, str], ClusterValues],
    *,
    min_clusters: int,
    rule: Rule = "holm",
    alpha: float = ALPHA,
    seed: int = 0,
) -> tuple[HypothesisVerdict[H], ...]:
    """Every hypothesis under each of its judges, from `values[(hypothesis id, judge)]`, decided
    by `rule` (the other rule kept as the sensitivity). A judge's family is the hypotheses that
    name it (every hypothesis, in a checked design)."""
    if rule not in RULES:
        raise ValueError(f"unknown decision rule {rule!r}; use one of {', '.join(RULES)}")
    interval = inverted_sign_flip(seed, alpha)
    clean = {
        key: np.asarray([v for v in cv.values if not math.isnan(v)], dtype=float)
        for key, cv in values.items()
    }
    tests = {key: sign_flip(x.tolist(), seed=seed) for key, x in clean.items()}
    adjusted: dict[tuple[str, str], float] = {}
    family_size: dict[str, int] = {}
    # The clusters each hypothesis needs under each rule: Holm's at its own step.
    needs: dict[tuple[str, str], dict[Rule, int]] = {}
    for judge in sorted({j for h in hypotheses for j in h.judges}):
        keys = [(h.id, judge) for h in hypotheses if judge in h.judges]
        p_values = [tests[k].p_two_sided for k in keys]
        adjusted |= dict(zip(keys, holm(p_values), strict=True))
        family_size[judge] = len(keys)
        unadjusted = needed_clusters("intervals", min_clusters, len(keys), alpha)
        steps = holm_step_needs(p_values, [tests[k].n for k in keys], min_clusters, alpha)
        for key, step in zip(keys, steps, strict=True):
            needs[key] = {"holm": step, "intervals": unadjusted}
    results = []
    for h in hypotheses:
        verdicts = []
        rho = judge_correlation([values[(h.id, j)].values for j in h.judges])
        for judge in h.judges:
            key = (h.id, judge)
            x, test, p_holm = clean[key], tests[key], adjusted[key]
            sd = float(np.std(x, ddof=1)) if len(x) >= 2 else math.nan
            shown = interval(x)
            needed = needs[key]
            by_rule = {
                "holm": decide(test, p_holm, h.direction, min_clusters=needed["holm"], alpha=alpha),
                "intervals": interval_verdict(shown, h.direction, min_clusters=needed["intervals"]),
            }
            verdicts.append(
                JudgeVerdict(
                    judge=judge,
                    interval=shown,
                    test=test,
                    sd=sd,
                    p_holm=p_holm,
                    mde=mde(
                        sd,
                        rule,
                        test.n,
                        family_size[judge],
                        alpha,
                        judges=len(h.judges),
                        correlation=rho,
                    ),
                    verdict=by_rule[rule],
                    sources=tuple(sorted(set(values[key].sources))),
                    sensitivity=by_rule[other_rule(rule)],
                    needed=needed[rule],
                    sensitivity_needed=needed[other_rule(rule)],
                    judge_correlation=rounded_correlation(rho) if len(h.judges) > 1 else math.nan,
                )
            )
        results.append(
            HypothesisVerdict(
                h,
                tuple(verdicts),
                overall([v.verdict for v in verdicts]),
                rule,
                overall([v.sensitivity for v in verdicts]),
            )
        )
    return tuple(results)
