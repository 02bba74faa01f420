"""Hypotheses: the contrast schema, design validation, names checked against the design (every
judge named), and the verdicts: sign-flip test, Holm per judge, too few diarists, every judge."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import model_validator

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.analysis.rules import mde_sd
from diarylab.experiments.analysis.verdicts import holm, minimum_detectable_effect
from diarylab.experiments.kinds.diary.contrasts import (
    DriftContrast,
    Hypotheses,
    Hypothesis,
    SteeringContrast,
    parse_hypotheses,
)
from diarylab.experiments.kinds.diary.hypotheses import evaluate, per_diarist, results_table
from diarylab.foundation.datafiles import DataModel, validate
from diarylab.foundation.errors import LabError
from diarylab.testing.synthetic_diary import Plant, make_tables

SETTINGS = BootstrapSettings("diarist", resamples=500, seed=3)
JUDGES = ["judge-a", "judge-b"]
STEER = {"kind": "first_entry_pattern", "profile": "steered"}
WARM_VS_THANKS = {"kind": "drift", "chatbot": "warm", "entry": 4, "baseline": "thanks"}


def _design(**changes):
    item = {
        "id": "H1",
        "says": "steering raises the first-entry pattern score",
        "direction": "greater",
        "judges": JUDGES,
        "contrast": STEER,
    } | changes
    return {"hypotheses": [item]}


def _one(contrast):
    [h] = parse_hypotheses(_design(contrast=contrast), "d.toml")
    return h.contrast


@pytest.mark.parametrize(
    ("table", "expected", "formula"),
    [
        (
            STEER,
            SteeringContrast(kind="first_entry_pattern", profile="steered"),
            "first_entry_pattern(steered) − first_entry_pattern(unsteered)",
        ),
        (
            {"kind": "first_entry_pattern"},
            SteeringContrast(kind="first_entry_pattern"),
            "first_entry_pattern(steered) − first_entry_pattern(unsteered)",
        ),
        (
            {"kind": "first_entry_pattern", "profile": "steer_isolation"},
            SteeringContrast(kind="first_entry_pattern", profile="steer_isolation"),
            "first_entry_pattern(profile=steer_isolation) − first_entry_pattern(unsteered)",
        ),
        (
            {"kind": "coherence", "profile": "steered"},
            SteeringContrast(kind="coherence"),
            "coherence(steered) − coherence(unsteered)",
        ),
        (
            {"kind": "realism", "profile": "p"},
            SteeringContrast(kind="realism", profile="p"),
            "realism(profile=p) − realism(unsteered)",
        ),
        (
            {"kind": "drift", "chatbot": "frontier-a", "entry": 4, "baseline": "thanks"},
            DriftContrast(kind="drift", chatbot="frontier-a", entry=4, baseline="thanks"),
            "drift(chatbot=frontier-a, entry=4) − drift(chatbot=thanks, entry=4)",
        ),
        (
            {"kind": "drift", "chatbot": "warm"},
            DriftContrast(kind="drift", chatbot="warm"),
            "drift(chatbot=warm)",
        ),
        (
            {"kind": "drift", "chatbot": "warm", "entry": 3, "profile": "p", "baseline": "thanks"},
            DriftContrast(kind="drift", chatbot="warm", entry=3, profile="p", baseline="thanks"),
            "drift(chatbot=warm, entry=3, profile=p) − drift(chatbot=thanks, entry=3, profile=p)",
        ),
        (
            {"kind": "drift_change", "chatbot": "warm", "entry": 4, "baseline": "thanks"},
            DriftContrast(kind="drift_change", chatbot="warm", entry=4, baseline="thanks"),
            "drift_change(chatbot=warm, entry=4) − drift_change(chatbot=thanks, entry=4)",
        ),
        (
            {"kind": "drift_change", "chatbot": "warm"},
            DriftContrast(kind="drift_change", chatbot="warm"),
            "drift_change(chatbot=warm)",
        ),
        (
            {"kind": "steered_vs_baseline", "chatbot": "warm", "baseline": "thanks", "entry": 2},
            DriftContrast(kind="steered_vs_baseline", chatbot="warm", baseline="thanks", entry=2),
            "steered(chatbot=warm, entry=2) − steered(chatbot=thanks, entry=2)",
        ),
    ],
)
def test_each_contrast_kind_is_accepted_and_prints_its_formula(table, expected, formula):
    got = _one(table)
    assert got == expected
    assert got.formula() == formula
    assert got.profile_id == (None if got.profile == "steered" else got.profile)


@pytest.mark.parametrize(
    ("contrast", "where", "says"),
    [
        # a contrast string (the old grammar) is refused with the table forms as the fix
        (
            "first_entry_pattern(steered) - first_entry_pattern(unsteered)",
            "contrast",
            'kind = "first_entry_pattern"',
        ),
        ({"profile": "steered"}, "contrast", "no kind"),
        ({"kind": "mean_pattern"}, "contrast.kind", "unknown kind 'mean_pattern'"),
        ({"kind": "first_entry_pattern", "profile": "unsteered"}, "contrast.profile", "twin"),
        ({"kind": "first_entry_pattern", "chatbot": "warm"}, "contrast.chatbot", "unknown field"),
        ({"kind": "coherence", "entry": 2}, "contrast.entry", "unknown field"),
        ({"kind": "realism", "profile": "two words"}, "contrast.profile", "pattern"),
        ({"kind": "drift", "entry": 4}, "contrast.chatbot", "missing"),
        ({"kind": "drift", "chatbot": "a", "entry": 1}, "contrast.entry", "at least"),
        ({"kind": "drift", "chatbot": "a", "entry": "4"}, "contrast.entry", "whole number"),
        ({"kind": "drift", "chatbot": "a", "entry": True}, "contrast.entry", "whole number"),
        ({"kind": "drift", "chatbot": "a", "colour": "red"}, "contrast.colour", "unknown field"),
        ({"kind": "drift", "chatbot": "a", "baseline": "a"}, "contrast.baseline", "itself"),
        ({"kind": "drift", "chatbot": "a", "profile": "unsteered"}, "contrast.profile", "twin"),
        ({"kind": "steered_vs_baseline", "chatbot": "a"}, "contrast", "none is given"),
        ({"kind": "drift_change", "chatbot": "a", "entry": 1}, "contrast.entry", "at least"),
        ("", "contrast", "a table now"),
        (["drift"], "contrast", "table"),
    ],
)
def test_bad_contrasts_are_refused_naming_the_field(contrast, where, says):
    with pytest.raises(LabError) as err:
        parse_hypotheses(_design(contrast=contrast), "d.toml")
    message = str(err.value)
    assert message.startswith(f"d.toml hypotheses[0].{where}: ")
    assert says in message
    assert "fix: " in message and len(message.splitlines()) == 1


def test_design_hypotheses_parse_and_bad_fields_are_named():
    [h] = parse_hypotheses(_design(), "d.toml")
    assert (h.id, h.direction, h.judges) == ("H1", "greater", ("judge-a", "judge-b"))
    assert h.contrast.kind == "first_entry_pattern"
    assert parse_hypotheses({}, "d.toml") == ()
    cases = [
        (_design(direction="up"), "hypotheses[0].direction: "),
        (_design(judges=[]), "hypotheses[0].judges: no judges"),
        (_design(judges=["judge-a", "judge-a"]), "hypotheses[0].judges: judge 'judge-a' listed"),
        (_design(judges="judge-a"), "hypotheses[0].judges: must be an array"),
        (_design(says=" "), "hypotheses[0].says: "),
        (_design(colour="red"), "hypotheses[0].colour: unknown field"),
        ({"hypotheses": _design()["hypotheses"] * 2}, "hypotheses: duplicate id 'H1'"),
        ({"hypotheses": [{"id": "H1"}]}, "hypotheses[0].says: missing"),
        ({"hypotheses": ["H1"]}, "hypotheses[0]: "),
        ({"hypotheses": {"id": "H1"}}, "hypotheses: must be an array"),
    ]
    for design, fragment in cases:
        with pytest.raises(LabError) as err:
            parse_hypotheses(design, "d.toml")
        assert f"d.toml {fragment}" in str(err.value)


def test_a_design_schema_embeds_the_hypotheses():
    class Design(DataModel):
        name: str
        hypotheses: Hypotheses = ()

    good = {"name": "d", "hypotheses": _design()["hypotheses"]}
    design = validate(Design, good, "d.toml")
    assert isinstance(design.hypotheses, tuple) and isinstance(design.hypotheses[0], Hypothesis)
    assert validate(Design, {"name": "d"}, "d.toml").hypotheses == ()
    second = _design(id="H2", contrast={"kind": "vibes"})["hypotheses"]
    with pytest.raises(LabError, match=r"^d.toml hypotheses\[1\].contrast.kind: unknown kind"):
        validate(Design, good | {"hypotheses": good["hypotheses"] + second}, "d.toml")


NAMES = {
    "judges": {"judge-a", "judge-b"},
    "profiles": {"unsteered", "steer_isolation"},
    "chatbots": {"thanks", "warm"},
}


def _hypothesis(contrast, judges=JUDGES):
    [h] = parse_hypotheses(_design(contrast=contrast, judges=judges), "d.toml")
    return h


@pytest.mark.parametrize(
    "contrast",
    [
        STEER,
        {"kind": "coherence", "profile": "steer_isolation"},
        WARM_VS_THANKS,
        {"kind": "drift", "chatbot": "thanks", "profile": "steer_isolation"},
    ],
)
def test_check_names_accepts_what_the_design_has(contrast):
    _hypothesis(contrast).check_names(**NAMES, entries=4)


@pytest.mark.parametrize(
    ("contrast", "judges", "names", "where", "says"),
    [
        ({"kind": "drift", "chatbot": "nope"}, JUDGES, NAMES, "contrast.chatbot", "chatbot 'nope'"),
        (WARM_VS_THANKS | {"baseline": "nope"}, JUDGES, NAMES, "contrast.baseline", "'nope'"),
        (
            {"kind": "realism", "profile": "steer_nothing"},
            JUDGES,
            NAMES,
            "contrast.profile",
            "unknown profile 'steer_nothing'",
        ),
        (STEER, ["judge-a", "ghost-judge"], NAMES, "judges", "unknown judge 'ghost-judge'"),
        (STEER, JUDGES, NAMES | {"profiles": {"unsteered"}}, "contrast.profile", "has none"),
        (WARM_VS_THANKS | {"entry": 5}, JUDGES, NAMES, "contrast.entry", "past the design's"),
        (STEER, ["judge-b"], NAMES, "judges", "leaves out judge(s) judge-a"),
    ],
)
def test_check_names_refuses_what_the_design_lacks(contrast, judges, names, where, says):
    h = _hypothesis(contrast, judges)
    with pytest.raises(LabError) as err:
        h.check_names(**names, entries=4)
    message = str(err.value)
    assert message.startswith(f"hypothesis H1.{where}: ") and says in message
    assert "fix: " in message and len(message.splitlines()) == 1
    with pytest.raises(LabError, match=r"^d.toml hypotheses\[0\]\."):
        h.check_names(**names, entries=4, where="d.toml hypotheses[0]")


def test_check_names_fix_lists_the_known_names():
    h = _hypothesis({"kind": "drift", "chatbot": "nope"})
    with pytest.raises(LabError, match="fix: name one of thanks, warm"):
        h.check_names(**NAMES)
    h = _hypothesis({"kind": "coherence", "profile": "steer_nothing"})
    with pytest.raises(LabError, match="fix: name one of steer_isolation, steered"):
        h.check_names(**NAMES)


def test_check_names_inside_a_design_schema_is_the_files_one_line_error():
    class Design(DataModel):
        chatbots: list[str]
        hypotheses: Hypotheses = ()

        @model_validator(mode="after")
        def _names(self):
            for h in self.hypotheses:
                h.check_names(judges=JUDGES, profiles=["steer_x"], chatbots=self.chatbots)
            return self

    raw = {"chatbots": ["thanks"]} | _design(contrast={"kind": "drift", "chatbot": "ghost"})
    with pytest.raises(LabError) as err:
        validate(Design, raw, "d.toml")
    assert str(err.value) == (
        "d.toml: hypothesis H1.contrast.chatbot: unknown chatbot 'ghost' — fix: name one of thanks"
    )


def test_hypotheses_are_frozen():
    h = _hypothesis(STEER)
    with pytest.raises(ValueError, match="frozen"):
        h.id = "H2"
    assert hash(h) == hash(_hypothesis(STEER))


def _hypotheses(*items):
    return parse_hypotheses({"hypotheses": list(items)})


def _h(hid, contrast, direction, judges=JUDGES):
    return {"id": hid, "says": hid, "contrast": contrast, "direction": direction, "judges": judges}


@pytest.fixture(scope="module")
def entries():
    return make_tables(Plant(), seed=6).entries


def test_verdicts_follow_the_planted_effects(entries):
    hs = _hypotheses(
        _h("steer", STEER, "greater"),
        _h("wrong", STEER, "less"),
        _h("coh", {"kind": "coherence", "profile": "steer_isolation"}, "less"),
        _h("null", {"kind": "drift_change", "chatbot": "cold", "entry": 2}, "greater"),
    )
    results = {r.hypothesis.id: r for r in evaluate(hs, entries, SETTINGS)}
    assert results["steer"].overall == "supported"
    assert results["wrong"].overall == "contradicted"
    assert results["coh"].overall == "supported"
    # Cold's planted change at entry 2 is +3 against entry noise of about 7: not found at 8.
    assert [v.verdict for v in results["null"].verdicts] == ["inconclusive"] * 2
    verdict = results["steer"].verdicts[0]
    assert verdict.test.n == 8 and verdict.test.exact
    # All 8 diarists positive: the smallest two-sided p, 2/256, times 4 hypotheses (Holm).
    assert verdict.test.p_two_sided == pytest.approx(2 / 256)
    assert verdict.p_holm == pytest.approx(4 * 2 / 256)
    assert verdict.interval.low > 0 and verdict.interval.clusters == 8
    assert verdict.sources and all(s.endswith("/e1") for s in verdict.sources)
    table = results_table(list(results.values()))
    assert len(table) == 2 * 4
    assert set(table["judge_verdict"]) == {"supported", "contradicted", "inconclusive"}
    formulas = dict(zip(table["id"], table["contrast"], strict=False))
    assert formulas["steer"] == "first_entry_pattern(steered) − first_entry_pattern(unsteered)"
    assert formulas["coh"] == "coherence(profile=steer_isolation) − coherence(unsteered)"
    assert formulas["null"] == "drift_change(chatbot=cold, entry=2)"


def test_holm_is_applied_per_judge_and_the_mde_is_at_its_first_step(entries):
    hs = _hypotheses(
        _h("steer", STEER, "greater"),
        _h("warm", WARM_VS_THANKS, "less"),
        _h("change", {"kind": "drift_change", "chatbot": "cold", "entry": 4}, "greater"),
    )
    table = results_table(evaluate(hs, entries, SETTINGS))
    for _, rows in table.groupby("judge"):
        assert list(rows["p_holm"]) == pytest.approx(holm(list(rows["p"])))
        assert (rows["p_holm"] >= rows["p"]).all()
    for h in hs:
        for judge in JUDGES:
            [row] = table[(table["id"] == h.id) & (table["judge"] == judge)].to_dict("records")
            values = per_diarist(h.contrast, entries, judge)["diff"]
            assert row["sd"] == pytest.approx(values.std(ddof=1))
            # The sign-flip test's own MDE at Holm's first step (m = 3), not the t formula,
            # for the verdict: both judges agreeing at the run's correlation between them.
            sd = values.std(ddof=1)
            rho = row["judge_correlation"]
            assert 0 <= rho <= 1
            assert row["mde"] == pytest.approx(
                sd * mde_sd("holm", len(values), 3, judges=2, correlation=rho)
            )
            assert row["mde"] >= sd * mde_sd("holm", len(values), 3)
            assert row["mde"] > minimum_detectable_effect(sd, len(values), alpha=0.05 / 3)


@pytest.mark.parametrize("diarists", [2, 3])
def test_two_or_three_diarists_give_too_few_diarists(diarists):
    """The issue's cases: differences like [1, 2] or [0.5, 3, 1] once read as supported."""
    few = make_tables(Plant(diarists=diarists, steering=40.0), seed=1).entries
    [result] = evaluate(_hypotheses(_h("H1", STEER, "greater")), few, SETTINGS)
    assert [v.verdict for v in result.verdicts] == ["too few"] * 2
    assert result.overall == "too few"
    assert all(v.interval.estimate > 0 and v.test.n == diarists for v in result.verdicts)


def test_the_design_minimum_sets_where_verdicts_start(entries):
    hs = _hypotheses(_h("H1", STEER, "greater"))
    [at_8] = evaluate(hs, entries, SETTINGS, min_diarists=8)
    [at_9] = evaluate(hs, entries, SETTINGS, min_diarists=9)
    assert (at_8.overall, at_9.overall) == ("supported", "too few")


def test_one_blind_judge_makes_the_verdict_inconclusive(entries):
    """Judge b cannot read the pattern (its pattern scores are noise): judge a alone supports
    the hypothesis, so overall it is inconclusive, not supported."""
    blind = entries.copy()
    rows = (blind["judge"] == "judge-b") & blind["score"].str.startswith("pattern:")
    blind.loc[rows, "mean"] = np.random.default_rng(0).normal(50, 10, rows.sum())
    [result] = evaluate(_hypotheses(_h("H1", STEER, "greater")), blind, SETTINGS)
    assert [v.verdict for v in result.verdicts] == ["supported", "inconclusive"]
    assert result.overall == "inconclusive"


def test_a_judge_without_data_gives_no_verdict(entries):
    [result] = evaluate(
        _hypotheses(_h("H1", STEER, "greater")),
        entries[~((entries["judge"] == "judge-b") & (entries["entry_index"] == 1))],
        SETTINGS,
    )
    assert [v.verdict for v in result.verdicts] == ["supported", "too few"]
    assert result.overall == "too few"


def test_names_missing_from_the_run_are_an_error(entries):
    for contrast, judges in [
        ({"kind": "drift", "chatbot": "nope", "entry": 4}, JUDGES),
        ({"kind": "coherence", "profile": "steer_nothing"}, JUDGES),
        ({"kind": "drift", "chatbot": "warm"}, ["judge-z"]),
    ]:
        with pytest.raises(LabError, match="hypothesis H9"):
            evaluate(_hypotheses(_h("H9", contrast, "greater", judges)), entries, SETTINGS)
