"""The shelf every experiment kind shares: intervals over clusters (jackknife t, cluster
bootstrap), verdicts that hold their error rate at few clusters, the decision rules and their
MDE, the hypothesis head and its one evaluator, Markdown
helpers and the judge-readings section. Nothing here knows a kind; a kind's own analysis and
report live in its folder (experiments/kinds/<kind>/)."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "bootstrap",
    "bounded",
    "html_page",
    "hypotheses",
    "hypothesis_table",
    "judge_caveat",
    "manifest_view",
    "markdown",
    "plan_vs_run",
    "readings",
    "rule_texts",
    "rules",
    "skew",
    "usage",
    "verdict_tables",
    "verdicts",
]
