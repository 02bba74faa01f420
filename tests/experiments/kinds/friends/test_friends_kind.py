"""A reduced friends design end to end on the tiny model: design check, run (letters, every
judgment), the report with its plot, and a second run that makes no model call."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.running.runner import run_design
from diarylab.testing.friends_fixtures import friends_design
from diarylab.testing.stores import opened, requests


def test_a_reduced_friends_design_runs_and_reports(
    tmp_path, tiny_model_folder, capsys, monkeypatch
):
    path = friends_design(tmp_path, tiny_model_folder)
    assert main(["design", "check", str(path)]) == 0
    checked = capsys.readouterr().out
    assert "1 steered conditions = 4 pairs + 8 control pairs" in checked
    out = tmp_path / "run"
    first = run_design(load_design(path), out, progress=False)
    # 4 steered + 4 unsteered pairs write 6 letters each; the fixed friend's 4 pairs 3 + 3 fixed
    model_letters = 4 * 6 + 4 * 6 + 4 * 3
    assert first.rows == {"letters": model_letters + 4 * 3, "judgments": model_letters * 2}
    assert first.calls_made == model_letters + model_letters * 2
    again = run_design(load_design(path), out, progress=False)
    assert again.calls_made == 0 and again.rows == first.rows

    with opened(out) as store:
        items = {i for (i,) in store.select("judgments", ["item"], distinct=True)}
        fixed = {i for (i,) in store.select("letters", ["letter_id"], null=["call_key"])}
        judged = {t for (t,) in store.select("judgments", ["target_id"])}
        request = requests(store, "diarist")[0]
    assert items == {"pattern:social_isolation", "identity"}
    assert fixed and not fixed & judged  # the fixed friend's letters are not judged
    # A letter's call key holds the full effective decoding settings, as a diary entry's does.
    assert request["generation"]["pinned"]["repetition_penalty"] == 1.0
    assert request["generation"]["sampler"] in {"row-seeded-gumbel", "greedy"}

    assert main(["status", str(out)]) == 0
    status = capsys.readouterr().out
    assert f"letters    {first.rows['letters']}" in status and "unreadable judgments 0" in status
    assert main(["export", str(out)]) == 0
    assert (out / "export" / "tables" / "letters.parquet").is_file()
    texts = pd.read_parquet(out / "export" / "texts.parquet")
    assert set(texts["table"]) == {"letters"} and texts["diarist"].notna().all()
    from diarylab.experiments.kinds.friends import report as friends_report

    clusters_resampled = []
    compute = friends_report.compute

    def spy(store, spec, settings):
        clusters_resampled.append((settings.cluster, settings.method))
        return compute(store, spec, settings)

    monkeypatch.setattr(friends_report, "compute", spy)
    assert main(["report", str(out)]) == 0
    # [analysis] cluster = "role_card" resamples the tables' role-card column, by the
    # design's interval method.
    assert clusters_resampled == [("card", "bca")]
    report = out / "report"
    findings = (report / "findings.md").read_text()
    for heading in (
        "## Hypotheses (preregistered)",
        "## Pattern scores letter by letter",
        "## Primary outcome against both controls",
        "## Identity check",
        "## Example exchanges",
        "## Manifest",
        "## Model calls and tokens",
    ):
        assert heading in findings
    # The manifest as rows (no raw JSON, no machine path) and the calls per model.
    manifest = findings.split("## Manifest")[1].split("\n## ")[0]
    assert "| data file letter_template | sha256 " in manifest and "{" not in manifest
    assert str(tmp_path) not in findings
    usage = pd.read_csv(report / "tables" / "usage.csv")
    assert {"diarist", "judge"} <= set(usage["role"])
    # The report follows the second run, which made no call: every call is the first run's.
    assert (usage["made_last_run"] == 0).all() and usage["made_earlier"].sum() == first.calls_made
    assert "| V1 | H1 |" in findings and "| V2 | H2 |" in findings
    assert "too few role cards" in findings  # 2 cards: no verdict
    # 2 cards can decide nothing: no family-wise error is stated for verdicts that cannot be.
    assert "Family-wise error" not in findings
    assert "tiny-social_isolation → fixed" in findings and "unsteered → unsteered" in findings
    png = report / "plots" / "letters_tiny-judge.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert "](plots/letters_tiny-judge.png)" in findings
    examples = (report / "examples.md").read_text()
    assert examples.count("## ") >= 3 and "fixed letter" in examples
    # The notebook's verdicts are the report's hypotheses table (row ids aside).
    import diarylab

    with diarylab.open_run(out) as results:
        verdicts = results.verdicts()
    shipped = pd.read_csv(report / "tables" / "hypotheses.csv")
    assert list(verdicts["id"]) == list(shipped["id"]) == ["H1", "H2"]
    assert list(verdicts["judge_verdict"]) == list(shipped["judge_verdict"])
    for table in ("hypotheses", "outcome", "identity", "by_letter"):
        assert (report / "tables" / f"{table}.csv").stat().st_size > 0
    verdicts = (report / "tables" / "hypotheses.csv").read_text()
    assert "too few role cards" in verdicts and "diarists" not in verdicts  # as the markdown
    sources = (report / "sources.csv").read_text()
    assert "V1,hypotheses," in sources
    _check_judge_readings(out, findings)
    # [analysis] resamples and interval = "bca" reach the report, and so does decision_rule.
    assert (
        "BCa bootstrap intervals over role cards (whole cards resampled, 200 resamples, seed 11)"
        in findings
    )
    assert (
        "Decision rule (preregistered): \"every listed judge's 95% interval excludes zero"
        in findings
    )
    assert "sensitivity: holm" in findings
    assert set(pd.read_csv(report / "tables" / "hypotheses.csv")["rule"]) == {"intervals"}
    # [outcome].letters picks the letters the primary outcome averages, and only those.
    clusters = _cluster_outcomes(out)
    assert set(clusters["card"]) == {"amara", "tomasz"} and clusters["outcome"].notna().all()
    for letters in ([3], [2, 3]):
        table = _outcome_letters(out, letters)["hypotheses"]
        used = {int(i[-1]) for ids in table["sources"] for i in ids}
        assert used == set(letters)
    # [analysis] min_role_cards reaches the verdicts: the count a verdict needs is the design's
    # minimum, raised to what the rule's test needs for its family (6 cards for "intervals",
    # whose smallest one-sided p at 5 cards is 1/32 > 0.025): 2 cannot decide either way.
    needs = {
        m: set(_outcome_letters(out, [2, 3], min_role_cards=m)["hypotheses"]["judge_verdict"])
        for m in (2, 9)
    }
    assert needs == {2: {"too few role cards (needs 6)"}, 9: {"too few role cards (needs 9)"}}


def _outcome_letters(folder, letters, min_role_cards=None):
    """The report's tables computed with [outcome].letters set to `letters` (and, given,
    [analysis].min_role_cards)."""
    from diarylab.experiments.analysis.bootstrap import BootstrapSettings
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.kinds.friends.report import compute
    from diarylab.experiments.kinds.friends.schema import Outcome

    design = load_design(folder / "design.toml")
    spec = design.spec.model_copy(update={"outcome": Outcome(letters=letters)})
    if min_role_cards is not None:
        analysis = spec.analysis.model_copy(update={"min_role_cards": min_role_cards})
        spec = spec.model_copy(update={"analysis": analysis})
    store = Store(folder / "store.sqlite", design.kind.row_types)
    try:
        return compute(store, spec, BootstrapSettings("card", resamples=100, seed=1)).tables
    finally:
        store.close()


def _cluster_outcomes(folder):
    """Per judge × card × writer group × pattern: the card's mean primary outcome over the
    design's [outcome].letters, from the public outcome functions the report uses."""
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.kinds.friends.kind import friends_spec
    from diarylab.experiments.kinds.friends.outcomes import (
        card_outcomes,
        letter_table,
        writer_outcomes,
    )

    design = load_design(folder / "design.toml")
    store = Store(folder / "store.sqlite", design.kind.row_types)
    try:
        letters = friends_spec(design).outcome.letters
        return card_outcomes(writer_outcomes(letter_table(store), letters))
    finally:
        store.close()


def _check_judge_readings(out, findings: str) -> None:
    """Judge readings per judge × writer profile, counted again here from the store: the tiny
    local judge reads every letter exactly, in mode local."""
    import pandas as pd

    with opened(out) as store:
        profiles = dict(store.select("letters", ["letter_id", "profile"]))
        judged = store.select("judgments", ["target_id", "item", "readable"])
    tally: Counter[tuple[str, str]] = Counter()
    unreadable: Counter[tuple[str, str]] = Counter()
    for target, item, readable in judged:
        group = (profiles[target], f"letter {'score' if item.startswith('pattern:') else 'yes/no'}")
        tally[group] += 1
        unreadable[group] += 1 - readable
    want = {group: (n, unreadable[group]) for group, n in tally.items()}
    got = pd.read_csv(out / "report" / "tables" / "judge_readings.csv")
    assert set(got["mode"]) == {"local"} and (got["exact_share"] == 1.0).all()
    assert got.group.iloc[0] == "unsteered" and set(got.judge) == {"tiny-judge"}
    assert {
        (g, r): (n, u) for g, r, n, u in got[["group", "reading", "n", "unreadable"]].values
    } == want
    assert (
        "## Judge readings" in findings
        and "| tiny-judge | unsteered | letter score | local |" in findings
    )
