"""Whether a design's hypotheses can be supported at its cluster count, checked before anything
runs (`design check` and the start of `run`), and the minimum detectable effect its decision
rule implies.

At 8 clusters the smallest two-sided sign-flip p is 2/256, so Holm's first step (0.05/m) can
reject nothing once m ≥ 7: a run would spend its budget on a family that can only come back
inconclusive. Such a design is refused with the fix. So is a design with fewer clusters than its
own minimum (every verdict would read "too few"), unless it says why it runs anyway
([analysis] no_verdicts, as the demo does); the check then says so."""

from __future__ import annotations

from collections import Counter

from diarylab.experiments.analysis.rules import (
    DEFAULT_JUDGE_CORRELATION,
    RULE_NAMES,
    can_support,
    fewest_clusters,
    mde_sd,
    most_hypotheses,
    one_sided_level,
    other_rule,
    smallest_p,
)
from diarylab.experiments.engine.contract import Design, PilotSupport
from diarylab.foundation.errors import LabError


def power_lines(design: Design) -> list[str]:
    """One line per judge family: the rule, n, m and the MDE in SDs of the per-cluster contrast.
    Raises a LabError when the design's rule can never support a hypothesis."""
    hypotheses = design.spec.preregistered()
    kind = design.kind
    analysis = design.spec.analysis
    rule, minimum = getattr(analysis, "decision_rule", None), getattr(analysis, "min_clusters", 0)
    if not hypotheses or not isinstance(kind, PilotSupport) or rule is None:
        return []
    n, word = kind.clusters(design), kind.cluster_word
    if n < minimum:
        why = getattr(analysis, "no_verdicts", None)
        if why is None:
            raise LabError(
                f"{n} {word}s, below the design's minimum of {minimum}: every hypothesis would "
                f'read "too few {word}s", so the run could never answer its question',
                where=f"{design.path} [analysis]",
                fix=f"use at least {minimum} {word}s, or, for a run not meant to decide "
                '(a demo, a smoke run), add no_verdicts = "why" to [analysis]',
            )
        return [
            f"{n} {word}s, below the design's minimum of {minimum}: every hypothesis will read "
            f'"too few {word}s" (no verdict), as [analysis] no_verdicts says: {why}'
        ]
    families = Counter(j for h in hypotheses for j in getattr(h, "judges", ()))
    judges = max((len(getattr(h, "judges", ())) for h in hypotheses), default=1)
    rho = DEFAULT_JUDGE_CORRELATION
    lines = []
    for judge, m in sorted(families.items()):
        if not can_support(rule, n, m):
            level = one_sided_level(rule, m)
            raise LabError(
                f"{m} hypotheses name judge {judge!r}: at {n} {word}s the rule "
                f'"{RULE_NAMES[rule]}" can never support one (the smallest two-sided sign-flip '
                f"p is {2 * smallest_p(n):.4g}; Holm's first step needs below "
                f"{2 * level:.4g})",
                where=f"{design.path} [[hypotheses]]",
                fix=f"preregister at most {most_hypotheses(n)} hypotheses per judge at {n} "
                f"{word}s, or use at least {fewest_clusters(rule, m)} {word}s",
            )
        other = other_rule(rule)
        needed = max(minimum, fewest_clusters(rule, m))
        raised = (
            f"; verdicts need {needed} {word}s (the minimum of {minimum} is raised by the "
            f'family of {m}): losing {n - needed + 1} makes every verdict "too few"'
            if needed > minimum
            else ""
        )
        who = (
            f"all {judges} judges agreeing at ρ = {rho:.2f} between them, assumed: `diarylab "
            f"pilot` measures it; one judge alone: {mde_sd(rule, n, m):.2f} SD; "
            if judges > 1
            else ""
        )
        lines.append(
            f"judge {judge}: {m} hypotheses at {n} {word}s; rule {rule}: the verdict is "
            f"supported with 80% power at {mde_sd(rule, n, m, judges=judges, correlation=rho):.2f}"
            f" SD of the per-{word.replace(' ', '-')} contrast ({who}sensitivity {other}: "
            f"{_sd(mde_sd(other, n, m, judges=judges, correlation=rho))}){raised}"
        )
    return lines


def _sd(value: float) -> str:
    return "never supports" if value == float("inf") else f"{value:.2f} SD"
