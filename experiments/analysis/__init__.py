"""The shelf every experiment kind shares: intervals over clusters (jackknife t, cluster
bootstrap), verdicts that hold their error rate at few clusters, the decision rules and their
MDE, the hypothesis head and its one evaluator, Markdown
helpers and the judge-readings section. Nothing here knows a kind; a kind's own analysis and
report live in its folder (experiments/kinds/<kind>/)."""
