"""What a report says about its decision rule: the rule and its sensitivity by name, and the
paragraph under a hypotheses table (the cut-offs the verdicts use, the MDE, the interval)."""

from __future__ import annotations

from diarylab.experiments.analysis.rules import RULE_NAMES, Rule, needed_clusters, other_rule


def rule_line(rule: Rule) -> str:
    """The rule and its sensitivity, by name, as a report states them."""
    other = other_rule(rule)
    return (
        f'Decision rule (preregistered): "{RULE_NAMES[rule]}" ({rule}). Sensitivity, not the '
        f'verdict: "{RULE_NAMES[other]}" ({other}).'
    )


def hypotheses_text(rule: Rule, hypotheses: int, minimum: int, clusters: str) -> str:
    """What the hypotheses table says about its verdicts, for either rule (both kinds)."""
    holm = (
        f"the two-sided sign-flip p, Holm-adjusted across the {hypotheses} hypotheses per "
        "judge, below 0.05"
    )
    intervals = (
        "the judge's 95% sign-flip interval (the test inverted, unadjusted for the number of "
        "hypotheses) lies on one side of zero"
    )
    first, second = (holm, intervals) if rule == "holm" else (intervals, holm)
    m = max(1, hypotheses)
    needed = needed_clusters(rule, minimum, m)
    last = needed_clusters(rule, minimum, 1)
    if rule == "holm" and last < needed:
        cut_off = (
            f"a hypothesis with fewer {clusters} than its step of Holm's procedure can decide "
            f"with gets no verdict (too few {clusters}, with the count it needs): {needed} at "
            f"the first step (level 0.05/{m}), down to {last} at the last (0.05); the design's "
            f"minimum is {minimum}"
        )
    else:
        raised = (
            f" (the design's minimum is {minimum}; the rule cannot reach its level for "
            f"{hypotheses} hypotheses with fewer than {needed})"
            if needed > minimum
            else ""
        )
        cut_off = f"fewer than {needed} {clusters}{raised} give no verdict (too few {clusters})"
    return (
        f'Decision rule (preregistered): "{RULE_NAMES[rule]}" — per judge, {first} gives '
        "supported or contradicted (the side of zero names which), otherwise inconclusive; "
        f"{cut_off}. Overall: "
        "the judges' common verdict, inconclusive when they differ. The last column is the "
        f'sensitivity, labelled and not the verdict: the overall verdict under "'
        f'{RULE_NAMES[other_rule(rule)]}" ({second}). MDE: the smallest true contrast for which '
        "the verdict as run (every judge agreeing, the judges' per-"
        f"{clusters[:-1]} values correlated as in this run, shown as ρ) comes out supported "
        "with 80% power at this n, by seeded simulation of the sign-flip test on normal data "
        "(at Holm's first step for holm), times the judge's per-"
        f"{clusters[:-1]} SD. Estimate and interval are the per-{clusters[:-1]} mean and "
        "the 95% sign-flip interval.\n"
    )
