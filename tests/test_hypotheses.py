"""Hypotheses: the contrast language, design validation, and the both-judges verdict rule."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.analysis.comparisons import BootstrapSettings
from experiments.analysis.hypotheses import (
    SUPPORTED_CONTRASTS,
    Contrast,
    evaluate,
    overall_verdict,
    parse_contrast,
    parse_hypotheses,
    results_table,
)
from foundation.errors import LabError
from tests.synthetic_diary import Plant, make_tables

SETTINGS = BootstrapSettings(resamples=500, seed=3)
JUDGES = ["judge-a", "judge-b"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "first_entry_pattern(steered) - first_entry_pattern(unsteered)",
            Contrast("first_entry_pattern", ""),
        ),
        (
            "first_entry_pattern(profile=steer_isolation) - first_entry_pattern(unsteered)",
            Contrast("first_entry_pattern", "", profile="steer_isolation"),
        ),
        (
            "drift(chatbot=frontier-a, entry=4) - drift(chatbot=thanks, entry=4)",
            Contrast("drift", "", chatbot="frontier-a", baseline="thanks", entry=4),
        ),
        ("drift(chatbot=warm)", Contrast("drift", "", chatbot="warm")),
        (
            "drift(chatbot=warm, profile=p, entry=3) - drift(chatbot=thanks, entry=3, profile=p)",
            Contrast("drift", "", profile="p", chatbot="warm", baseline="thanks", entry=3),
        ),
        ("coherence(steered) - coherence(unsteered)", Contrast("coherence", "")),
        ("realism(profile=p) - realism(unsteered)", Contrast("realism", "", profile="p")),
    ],
)
def test_supported_contrasts_parse(text, expected):
    got = parse_contrast(text)
    assert got == Contrast(**{**expected.__dict__, "text": text})


@pytest.mark.parametrize(
    "text",
    [
        "mean_pattern(steered) - mean_pattern(unsteered)",
        "first_entry_pattern(steered)",
        "first_entry_pattern(steered) - first_entry_pattern(steered)",
        "first_entry_pattern(steered, profile=p) - first_entry_pattern(unsteered)",
        "coherence(steered) - realism(unsteered)",
        "drift(entry=4)",
        "drift(chatbot=a, entry=4) - drift(chatbot=b, entry=3)",
        "drift(chatbot=a, entry=1)",
        "drift(chatbot=a, colour=red)",
        "drift(chatbot=a) - drift(chatbot=b) - drift(chatbot=c)",
        "",
    ],
)
def test_unknown_contrasts_are_refused_with_the_field_and_the_forms(text):
    with pytest.raises(LabError) as err:
        parse_contrast(text, "design.toml [[hypotheses]] #2.contrast")
    message = str(err.value)
    assert "design.toml [[hypotheses]] #2.contrast" in message
    assert all(form in message for form in SUPPORTED_CONTRASTS)


def _design(**changes):
    item = {
        "id": "H1",
        "says": "steering raises the first-entry pattern score",
        "contrast": "first_entry_pattern(steered) - first_entry_pattern(unsteered)",
        "direction": "greater",
        "judges": JUDGES,
    } | changes
    return {"hypotheses": [item]}


def test_design_hypotheses_parse_and_bad_fields_are_named():
    [h] = parse_hypotheses(_design(), "d.toml")
    assert (h.id, h.direction, h.judges) == ("H1", "greater", ("judge-a", "judge-b"))
    assert h.contrast.kind == "first_entry_pattern"
    assert parse_hypotheses({}, "d.toml") == ()
    cases = [
        (_design(direction="up"), "#1.direction"),
        (_design(contrast="first_entry_pattern(x)"), "#1.contrast"),
        (_design(judges=[]), "judges"),
        ({"hypotheses": _design()["hypotheses"] * 2}, "#2.id"),
        ({"hypotheses": [{"id": "H1"}]}, "missing field"),
        ({"hypotheses": ["H1"]}, "#1"),
    ]
    for design, fragment in cases:
        with pytest.raises(LabError, match="d.toml") as err:
            parse_hypotheses(design, "d.toml")
        assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("supports", "overall"),
    [
        ([True, True], "supported"),
        ([True, False], "mixed"),
        ([False, True], "mixed"),
        ([False, False], "not supported"),
        ([True, None], "mixed"),
        ([None, None], "not supported"),
        ([True], "supported"),
    ],
)
def test_overall_verdict_needs_every_listed_judge(supports, overall):
    assert overall_verdict(supports) == overall


def _hypotheses(*items):
    return parse_hypotheses({"hypotheses": list(items)})


def _h(hid, contrast, direction, judges=JUDGES):
    return {"id": hid, "says": hid, "contrast": contrast, "direction": direction, "judges": judges}


@pytest.fixture(scope="module")
def entries():
    return make_tables(Plant(), seed=6).entries


def test_verdicts_follow_the_planted_effects(entries):
    hs = _hypotheses(
        _h("steer", "first_entry_pattern(steered) - first_entry_pattern(unsteered)", "greater"),
        _h("warm", "drift(chatbot=warm, entry=4) - drift(chatbot=thanks, entry=4)", "less"),
        _h("wrong", "drift(chatbot=warm, entry=4) - drift(chatbot=thanks, entry=4)", "greater"),
        _h("coh", "coherence(profile=steer_isolation) - coherence(unsteered)", "less"),
        _h(
            "single",
            "first_entry_pattern(steered) - first_entry_pattern(unsteered)",
            "greater",
            ["judge-b"],
        ),
    )
    results = {r.hypothesis.id: r for r in evaluate(hs, entries, SETTINGS)}
    assert results["steer"].overall == "supported"
    assert results["warm"].overall == "supported"
    assert results["wrong"].overall == "not supported"
    assert results["coh"].overall == "supported"
    assert [v.judge for v in results["single"].verdicts] == ["judge-b"]
    verdict = results["steer"].verdicts[0]
    assert verdict.interval.low > 0 and verdict.interval.clusters == 8
    assert verdict.sources and all(s.endswith("/e1") for s in verdict.sources)
    table = results_table(list(results.values()))
    assert len(table) == 2 * 4 + 1
    assert set(table["judge_verdict"]) == {"supports", "does not"}


def test_one_blind_judge_makes_the_verdict_mixed(entries):
    """Judge b cannot read the pattern (its pattern scores are noise): judge a alone supports
    the hypothesis, so it is mixed, not supported."""
    blind = entries.copy()
    rows = (blind["judge"] == "judge-b") & blind["score"].str.startswith("pattern:")
    blind.loc[rows, "mean"] = np.random.default_rng(0).normal(50, 10, rows.sum())
    [result] = evaluate(
        _hypotheses(
            _h("H1", "first_entry_pattern(steered) - first_entry_pattern(unsteered)", "greater")
        ),
        blind,
        SETTINGS,
    )
    assert [v.supports for v in result.verdicts] == [True, False]
    assert result.overall == "mixed"


def test_a_judge_without_data_does_not_support(entries):
    [result] = evaluate(
        _hypotheses(
            _h("H1", "first_entry_pattern(steered) - first_entry_pattern(unsteered)", "greater")
        ),
        entries[~((entries["judge"] == "judge-b") & (entries["entry_index"] == 1))],
        SETTINGS,
    )
    assert [v.supports for v in result.verdicts] == [True, None]
    assert result.overall == "mixed"


def test_names_missing_from_the_run_are_an_error(entries):
    for contrast, judges in [
        ("drift(chatbot=nope, entry=4)", JUDGES),
        ("coherence(profile=steer_nothing) - coherence(unsteered)", JUDGES),
        ("drift(chatbot=warm)", ["judge-z"]),
    ]:
        with pytest.raises(LabError, match="hypothesis H9"):
            evaluate(_hypotheses(_h("H9", contrast, "greater", judges)), entries, SETTINGS)
