"""The shared hypothesis shelf: one head (the every-judge rule), one evaluator. The diary and the
friends kinds, fed the same per-cluster values, give the same verdicts, each with its own
settable minimum of clusters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.analysis.hypotheses import (
    ClusterValues,
    HypothesisHead,
    UnknownName,
    evaluate_family,
    interval_verdict,
)
from diarylab.experiments.analysis.hypothesis_table import results_table
from diarylab.experiments.analysis.verdicts import holm, sign_flip, sign_flip_interval
from diarylab.experiments.kinds.diary import hypotheses as diary
from diarylab.experiments.kinds.diary.contrasts import Hypothesis
from diarylab.experiments.kinds.friends import verdicts as friends
from diarylab.experiments.kinds.friends.contrast import FriendsHypothesis

JUDGES = ("judge-a", "judge-b")
# Per hypothesis × judge: eight clusters' contrast values.
VALUES = {
    ("H1", "judge-a"): (4.0, 5.0, 3.5, 6.0, 4.5, 5.5, 3.0, 4.0),
    ("H1", "judge-b"): (2.0, 3.0, 1.5, 2.5, 3.5, 2.0, 1.0, 2.5),
    ("H2", "judge-a"): (0.5, -1.0, 1.5, -0.5, 0.0, 1.0, -1.5, 0.5),
    ("H2", "judge-b"): (-3.0, -2.0, -4.0, -2.5, -3.5, -1.0, -2.0, -3.0),
}


def _diary_hypotheses() -> list[Hypothesis]:
    contrast = {"kind": "first_entry_pattern", "profile": "steered"}
    return [
        Hypothesis.model_validate(
            {"id": hid, "says": f"{hid} holds", "direction": d, "judges": JUDGES}
            | {"contrast": contrast}
        )
        for hid, d in (("H1", "greater"), ("H2", "less"))
    ]


def _friends_hypotheses() -> list[FriendsHypothesis]:
    contrast = {
        "kind": "outcome",
        "score": "social_isolation",
        "of": {"writer": "other", "friend": "si"},
        "against": {"writer": "other", "friend": "fixed"},
    }
    return [
        FriendsHypothesis.model_validate(
            {"id": hid, "says": f"{hid} holds", "direction": d, "judges": JUDGES}
            | {"contrast": contrast}
        )
        for hid, d in (("H1", "greater"), ("H2", "less"))
    ]


def _table(values, column: str) -> pd.DataFrame:
    return pd.DataFrame(
        {column: [f"c{i}" for i in range(len(values))], "diff": values}
        | {"sources": [(f"{column}-{i}",) for i in range(len(values))]}
    )


@pytest.fixture
def same_values(monkeypatch):
    """Both kinds' per-cluster contrasts replaced by the same planted values, so what is
    compared is the evaluation that follows."""

    def diary_values(contrast, entries, judge):
        return _table(VALUES[(entries.attrs["hypothesis"].pop(0), judge)], "diarist")

    def friends_values(contrast, outcomes, judge):
        return _table(VALUES[(outcomes.attrs["hypothesis"].pop(0), judge)], "card")

    monkeypatch.setattr(diary, "per_diarist", diary_values)
    monkeypatch.setattr(diary, "_check_run_names", lambda h, e: None)
    monkeypatch.setattr(friends, "per_card", friends_values)


def _frame(order: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame()
    frame.attrs["hypothesis"] = order
    return frame


def _order(hypotheses) -> list[str]:
    return [h.id for h in hypotheses for _ in h.judges]


@pytest.mark.parametrize("minimum", [6, 9])
def test_diary_and_friends_give_the_same_verdicts_from_the_same_values(same_values, minimum):
    d_hyp, f_hyp = _diary_hypotheses(), _friends_hypotheses()
    settings = BootstrapSettings("diarist", resamples=200, seed=1)
    from_diary = diary.evaluate(d_hyp, _frame(_order(d_hyp)), settings, min_diarists=minimum)
    from_friends = friends.evaluate(f_hyp, _frame(_order(f_hyp)), seed=1, min_role_cards=minimum)
    for d, f in zip(from_diary, from_friends, strict=True):
        assert d.overall == f.overall
        for dv, fv in zip(d.verdicts, f.verdicts, strict=True):
            assert (dv.judge, dv.verdict, dv.test, dv.p_holm, dv.mde, dv.sd) == (
                fv.judge, fv.verdict, fv.test, fv.p_holm, fv.mde, fv.sd,
            )  # fmt: skip
    verdicts = [v.verdict for r in from_diary for v in r.verdicts]
    if minimum == 9:  # eight clusters: no verdict from either kind
        assert set(verdicts) == {"too few"}
    else:  # H1 up under both judges; H2: judge-a flat, judge-b down
        assert verdicts == ["supported", "supported", "inconclusive", "supported"]
        assert [r.overall for r in from_diary] == ["supported", "inconclusive"]
    words = (
        diary.results_table(from_diary)["judge_verdict"].tolist(),
        friends.results_table(from_friends)["judge_verdict"].tolist(),
    )
    if minimum == 9:
        assert words == (["too few diarists (needs 9)"] * 4, ["too few role cards (needs 9)"] * 4)


def test_the_evaluator_holms_per_judge_and_each_rule_reads_its_own_test():
    heads = [
        HypothesisHead.model_validate(
            {"id": hid, "says": "x", "direction": "greater", "judges": JUDGES}
        )
        for hid in ("H1", "H2")
    ]
    values = {key: ClusterValues(v, (f"{key[0]}:{key[1]}",)) for key, v in VALUES.items()}
    results = evaluate_family(heads, values, min_clusters=6, seed=0)
    for judge in JUDGES:
        raw = [sign_flip(VALUES[(h, judge)]).p_two_sided for h in ("H1", "H2")]
        got = [v.p_holm for r in results for v in r.verdicts if v.judge == judge]
        assert got == pytest.approx(list(holm(raw)))
    assert results[0].verdicts[0].verdict == "supported"
    assert results[0].verdicts[0].sources == ("H1:judge-a",)
    table = results_table(results, clusters="diarists", cluster_word="diarists")
    assert list(table["n_diarists"]) == [8] * 4 and list(table["says"]) == ["x"] * 4
    assert set(table["rule"]) == {"holm"} and set(table["sensitivity_rule"]) == {"intervals"}
    # The interval shown (and read by "intervals") is the sign-flip test inverted.
    for r in results:
        for v in r.verdicts:
            x = VALUES[(r.hypothesis.id, v.judge)]
            assert (v.interval.low, v.interval.high) == sign_flip_interval(list(x), seed=0)
            assert v.sensitivity == interval_verdict(v.interval, "greater", min_clusters=6)


def test_the_two_rules_differ_where_holm_is_stricter_and_the_design_picks_one():
    """Seven of eight clusters clearly up: the unadjusted 95% interval excludes zero, but with
    six hypotheses Holm's first step (0.05/6) needs all eight on one side."""
    x = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -1.5)
    heads = [
        HypothesisHead.model_validate(
            {"id": f"H{i}", "says": "x", "direction": "greater", "judges": ["judge-a"]}
        )
        for i in range(6)
    ]
    values = {(h.id, "judge-a"): ClusterValues(x) for h in heads}
    by_holm = evaluate_family(heads, values, min_clusters=6, rule="holm")
    by_intervals = evaluate_family(heads, values, min_clusters=6, rule="intervals")
    assert sign_flip(x).p_two_sided == pytest.approx(6 / 256)
    assert {r.overall for r in by_holm} == {"inconclusive"}
    assert {r.sensitivity for r in by_holm} == {"supported"}
    assert {r.overall for r in by_intervals} == {"supported"}
    assert {r.sensitivity for r in by_intervals} == {"inconclusive"}
    assert by_intervals[0].verdicts[0].interval.low > 0
    table = results_table(by_intervals, clusters="cards", cluster_word="role cards")
    assert set(table["rule"]) == {"intervals"} and set(table["overall"]) == {"supported"}
    assert set(table["sensitivity_overall"]) == {"inconclusive"}
    # The MDE is the design's rule's: stricter under Holm at m = 6.
    assert by_holm[0].verdicts[0].mde > by_intervals[0].verdicts[0].mde


def test_a_head_refuses_unknown_judges_and_a_judge_left_out():
    head = HypothesisHead.model_validate(
        {"id": "H1", "says": "x", "direction": "less", "judges": ["judge-a"]}
    )
    with pytest.raises(UnknownName, match="leaves out judge"):
        head.check_judges(JUDGES, "hypothesis H1")
    with pytest.raises(UnknownName, match="unknown judge 'judge-a'"):
        head.check_judges(["judge-z"], "hypothesis H1")
    head.check_judges(["judge-a"], "hypothesis H1")


def _heads(m: int) -> list[HypothesisHead]:
    return [
        HypothesisHead(id=f"H{i}", says=f"H{i} holds", direction="greater", judges=("judge-a",))
        for i in range(1, m + 1)
    ]


@pytest.mark.parametrize(
    ("m", "clusters", "expected"),
    [
        # m = 6: five at 8 clusters, one at 7 that Holm rejects at its last step (p_holm 0.047)
        (6, (8, 8, 8, 8, 8, 7), "supported"),
        # m = 2: one at 8, one at 6 (p_holm 0.031: Holm's second step is at 0.05)
        (2, (8, 6), "supported"),
    ],
)
def test_too_few_is_decided_at_the_level_holm_uses_for_the_hypothesis(m, clusters, expected):
    """A hypothesis Holm rejects never reads "too few": the clusters it needs are those of the
    step at which Holm judges it, not of the first step."""
    values = {
        (f"H{i}", "judge-a"): ClusterValues(tuple(float(v) for v in range(1, n + 1)))
        for i, n in enumerate(clusters, start=1)
    }
    results = evaluate_family(_heads(m), values, min_clusters=6, rule="holm")
    last = results[-1].verdicts[0]
    assert last.p_holm < 0.05 and last.verdict == expected
    assert last.needed < clusters[0]


def test_no_row_shows_a_holm_rejection_beside_too_few():
    """Random families (1–7 hypotheses, 5–10 clusters each, effects from none to large): every
    row Holm rejects has a verdict, and every "too few" row has an adjusted p of at least 0.05
    or fewer clusters than the design's minimum."""
    rng = np.random.default_rng(52)
    seen_too_few = seen_rejected_at_few = 0
    for _ in range(300):
        m = int(rng.integers(1, 8))
        values = {
            (f"H{i}", "judge-a"): ClusterValues(
                tuple(rng.normal(rng.choice([0.0, 1.0, 3.0]), 1.0, size=int(rng.integers(5, 11))))
            )
            for i in range(1, m + 1)
        }
        for result in evaluate_family(_heads(m), values, min_clusters=6, rule="holm"):
            v = result.verdicts[0]
            if v.p_holm < 0.05 and v.test.n >= 6:
                assert v.verdict in ("supported", "contradicted")
                seen_rejected_at_few += v.test.n < 8
            if v.verdict == "too few":
                seen_too_few += 1
                assert v.test.n < 6 or v.p_holm >= 0.05
                assert v.test.n < v.needed
    assert seen_too_few > 20 and seen_rejected_at_few > 5
