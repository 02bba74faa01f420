"""Designs that would run and quietly not answer their question are refused, and a partly
written table keeps its defaults: a diarist `generation` table that gives only
max_new_tokens still samples at the diarist's temperature; a steered pattern left out of a list
of scored patterns is refused with the fix; a share written as a percentage gets a fix that
works."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diarylab.chatbots.specs import CHATBOT_GENERATION, LocalChatbotSpec
from diarylab.experiments.cli import main
from diarylab.experiments.engine.design import DiaristModel
from diarylab.foundation.datafiles import DataModel
from diarylab.model_access.settings import GenerationSettings
from diarylab.steering.settings import EXTRACTION_GENERATION, ExtractionSettings

FULL = Path("experiments/designs/diary-full.toml")


def test_a_partial_generation_table_keeps_the_fields_defaults():
    whole = DiaristModel.model_validate({"model": "x"}).generation
    part = DiaristModel.model_validate({"model": "x", "generation": {"max_new_tokens": 400}})
    assert part.generation.max_new_tokens == 400
    assert part.generation.temperature == whole.temperature == 0.9
    bot = LocalChatbotSpec.model_validate(
        {"id": "b", "kind": "local", "model": "x", "generation": {"max_new_tokens": 40}}
    )
    assert bot.generation.temperature == CHATBOT_GENERATION.temperature
    extraction = ExtractionSettings.model_validate({"generation": {"max_new_tokens": 12}})
    assert extraction.generation.top_p == EXTRACTION_GENERATION.top_p


def test_any_table_field_keeps_its_default_for_what_is_left_out():
    class Inner(DataModel):
        a: int = 1
        b: int = 2

    class Outer(DataModel):
        inner: Inner = Inner(a=5, b=6)

    assert Outer.model_validate({"inner": {"a": 7}}).inner == Inner(a=7, b=6)
    assert Outer.model_validate({"inner": {}}).inner == Inner(a=5, b=6)
    # a written value is never overridden, and the type's own defaults still apply elsewhere
    assert Outer.model_validate({"inner": {"b": 1}}).inner == Inner(a=5, b=1)
    assert GenerationSettings.model_validate({}).temperature == 0.0


def test_a_steered_pattern_no_entry_is_scored_for_is_refused(tmp_path, capsys):
    path = tmp_path / "design.toml"
    text = FULL.read_text(encoding="utf-8")
    path.write_text(text.replace('patterns = "all"', 'patterns = ["social_isolation"]'))
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "profiles[1].pattern" in err[0] and "'entitlement'" in err[0]
    assert "cannot tell whether steering worked" in err[0] and "[scores].patterns" in err[0]
    # scoring no pattern at all is a choice the design states (the judge-free projection
    # still measures steering), not a list with one left out
    path.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    )
    assert main(["design", "check", "--offline", str(path)]) == 0


@pytest.mark.parametrize(("given", "fixed"), [("50", "0.5"), ("75", "0.75")])
def test_a_share_written_as_a_percentage_gets_a_fix_that_works(given, fixed, tmp_path, capsys):
    path = tmp_path / "design.toml"
    text = FULL.read_text(encoding="utf-8")
    path.write_text(text.replace("coverage_floor = 0.5", f"coverage_floor = {given}"))
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "a share, not a percentage" in err and f"coverage_floor = {fixed}" in err
    path.write_text(text.replace("coverage_floor = 0.5", f"coverage_floor = {fixed}"))
    assert main(["design", "check", "--offline", str(path)]) == 0


def test_a_missing_profile_file_is_told_with_the_designs_other_mistakes(tmp_path, capsys):
    text = Path("experiments/designs/demo.toml").read_text(encoding="utf-8")
    text = text.replace(
        'profiles = ["unsteered", "social_isolation"]',
        'profiles = ["unsteered", "social_isolation", "missing.toml"]',
    ).replace("coverage_floor = 0.5", "coverage_floor = 7")
    path = tmp_path / "design.toml"
    path.write_text(text)
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2, err
    assert any("design.coverage_floor" in line for line in err)
    assert any("cast.profiles[2]: profile file 'missing.toml' not found" in line for line in err)


def test_the_friends_design_refuses_an_unscored_steered_pattern_too(tmp_path, capsys):
    text = Path("experiments/designs/friends.toml").read_text(encoding="utf-8")
    # the hypotheses about social isolation left out: they would be refused first
    head, *blocks = text.split("[[hypotheses]]")
    kept = [b for b in blocks if "social_isolation" not in b]
    text = "[[hypotheses]]".join([head, *kept])
    path = tmp_path / "friends.toml"
    scored = 'patterns = ["entitlement", "unrelenting_standards"]'
    path.write_text(text.replace('patterns = "all"', scored, 1))
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "profiles[0].pattern" in err[0] and "social_isolation" in err[0]


def test_a_design_too_few_clusters_can_never_decide_is_refused_unless_it_says_why(tmp_path, capsys):
    text = FULL.read_text(encoding="utf-8")
    cast, two = 'diarists = "all"', 'diarists = ["amara", "tomasz"]'
    path = tmp_path / "design.toml"
    path.write_text(text.replace(cast, two, 1))
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "[analysis]" in err[0] and "2 diarists, below the design's minimum of 6" in err[0]
    assert "could never answer its question" in err[0] and 'no_verdicts = "why"' in err[0]
    # each fix the message gives is a value that works: enough diarists, or the reason said
    path.write_text(
        text.replace(cast, two, 1).replace(
            "min_diarists = 6", 'min_diarists = 6\nno_verdicts = "a smoke run of the pipeline"'
        )
    )
    assert main(["design", "check", "--offline", str(path)]) == 0
    assert "as [analysis] no_verdicts says: a smoke run" in capsys.readouterr().out
    path.write_text(text)
    assert main(["design", "check", "--offline", str(path)]) == 0


@pytest.mark.parametrize(
    ("design", "minimum", "word"),
    [("diary-full.toml", "min_diarists", "diarists"), ("friends.toml", "min_role_cards", "cards")],
)
def test_a_minimum_no_design_reaches_is_refused_and_no_verdicts_says_why(
    design, minimum, word, tmp_path, capsys
):
    text = Path("experiments/designs", design).read_text(encoding="utf-8")
    text = re.sub(rf"^{minimum} = .*\n", "", text, flags=re.M)  # the design's own, if any
    path = tmp_path / design
    path.write_text(text.replace("[analysis]\n", f"[analysis]\n{minimum} = 100\n", 1))
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err
    assert "below the design's minimum of 100" in err and "no_verdicts" in err
    reason = 'no_verdicts = "a dry run of the pipeline"'
    path.write_text(text.replace("[analysis]\n", f"[analysis]\n{minimum} = 100\n{reason}\n", 1))
    assert main(["design", "check", "--offline", str(path)]) == 0
    assert "as [analysis] no_verdicts says: a dry run of the pipeline" in capsys.readouterr().out
