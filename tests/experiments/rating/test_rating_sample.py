"""`diarylab rate sample` (experiments/rating/sample.py, lock.py, sheets.py): the draw takes each
text with exactly the probability it records (checked by simulation), so weighted estimates
are unbiased; texts the judges disagree on are drawn more often; the sample is locked and never
changes; the sheets show raters nothing that says who wrote a text or what a judge said."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import diarylab
from diarylab.experiments.cli import main
from diarylab.experiments.rating.lock import read_lock, sample_path
from diarylab.experiments.rating.sample import (
    STRATA,
    draw,
    inclusion_probabilities,
    rater_order,
    systematic_pps,
)
from diarylab.testing.rating_fixtures import EXAMPLE, example_with_sample, judge_readings


def test_systematic_pps_takes_each_unit_with_its_inclusion_probability():
    size = np.array([1.0, 1.0, 2.0, 4.0, 1.0, 8.0, 3.0, 1.0])
    pi = inclusion_probabilities(size, 4)
    assert pi.sum() == pytest.approx(4.0)
    assert pi.max() == 1.0  # the largest unit is taken for certain, the rest share 3 draws
    rng = np.random.default_rng(0)
    draws = 20_000
    taken = np.zeros(len(size))
    for _ in range(draws):
        chosen = systematic_pps(pi, rng)
        assert len(chosen) == 4 and len(set(chosen)) == 4
        taken[chosen] += 1
    se = np.sqrt(pi * (1 - pi) / draws) + 1e-9
    assert np.all(np.abs(taken / draws - pi) < 4 * se + 1e-3)


def _synthetic(n_diarists: int = 6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Texts and two judges' readings; the judges disagree on the first half of the diarists'
    texts, in every stratum."""
    texts, readings = [], []
    for d in range(n_diarists):
        for profile in ("unsteered", "social_isolation"):
            for e in (1, 2):
                tid = f"d{d}.{profile}.e{e}"
                texts.append(
                    dict(text_id=tid, table="entries", diarist=f"d{d}", profile=profile,
                         chatbot=None, entry=e, text=f"entry {tid}")
                )  # fmt: skip
                for judge, shift in (("a", 0.0), ("b", 40.0 if d < n_diarists // 2 else 0.0)):
                    readings.append(
                        dict(judge=judge, question="number", item="coherence",
                             target_kind="entry", target_id=tid, diarist=f"d{d}",
                             profile=profile, chatbot=None, entry=e, value=50.0 + shift)
                    )  # fmt: skip
    return pd.DataFrame(texts), pd.DataFrame(readings)


def test_texts_the_judges_disagree_on_are_drawn_more_and_weighted_back():
    texts, readings = _synthetic()
    disputed = {t for t in texts["text_id"] if int(t.split(".")[0][1:]) < 3}
    estimates, disputed_share = [], []
    for seed in range(400):
        items, strata = draw(texts, readings, n=6, seed=seed, boost=3.0)
        assert strata == STRATA  # 4 strata of 6 texts each
        assert len(items) == 6
        disputed_share.append(np.mean([it.target_id in disputed for it in items]))
        # Horvitz–Thompson estimate of how many texts are disputed: Σ weight × [disputed]
        estimates.append(sum(it.weight * (it.target_id in disputed) for it in items))
    # a disputed text is 4× as likely as another in its stratum (size 1 + 3 against 1), so
    # 4/5 of the draws are disputed where half the texts are ...
    assert np.mean(disputed_share) == pytest.approx(0.8, abs=0.03)
    # ... and the weights undo it: the weighted count is unbiased (12 of the 24 texts)
    assert np.mean(estimates) == pytest.approx(12.0, abs=0.6)


def test_finer_strata_when_the_sample_allows_and_every_stratum_drawn():
    texts, readings = _synthetic()
    items, strata = draw(texts, readings, n=3, seed=1, boost=0.0)
    assert strata == ("target_kind", "profile", "chatbot")  # 3 draws: entry dropped
    assert {it.stratum for it in items} == {"entry|social_isolation|-", "entry|unsteered|-"}
    items, strata = draw(texts, readings, n=8, seed=1, boost=0.0)
    assert strata == STRATA
    assert {it.stratum for it in items} == {
        "entry|social_isolation|-|1", "entry|social_isolation|-|2",
        "entry|unsteered|-|1", "entry|unsteered|-|2",
    }  # fmt: skip
    assert all(it.inclusion == pytest.approx(2 / 6) for it in items)
    assert all(it.disagreement is not None for it in items)


def test_each_rater_has_their_own_order_and_the_same_seed_gives_the_same():
    texts, readings = _synthetic()
    items, _ = draw(texts, readings, n=10, seed=3, boost=1.0)
    assert rater_order(items, "r1", 3) == rater_order(items, "r1", 3)
    assert rater_order(items, "r1", 3) != rater_order(items, "r2", 3)
    assert sorted(rater_order(items, "r2", 3)) == sorted(it.item_id for it in items)


def test_a_sample_is_locked_and_drawing_again_never_changes_it(tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "20", "--raters", "3", "--seed", "5")
    locked = sample_path(folder).read_bytes()
    html = (folder / "rating" / "sheets" / "r2.html").read_bytes()
    # the same settings: found, not drawn; the sheets are the same bytes
    assert main(["rate", "sample", str(folder), "--n", "20", "--raters", "3", "--seed", "5"]) == 0
    assert "already locked" in capsys.readouterr().out
    assert sample_path(folder).read_bytes() == locked
    assert (folder / "rating" / "sheets" / "r2.html").read_bytes() == html
    # other settings: refused, nothing changed
    assert main(["rate", "sample", str(folder), "--n", "21", "--raters", "3"]) == 2
    err = capsys.readouterr().err
    assert "already locked" in err and "--n 20 --raters 3 --seed 5" in err and "fix:" in err
    assert sample_path(folder).read_bytes() == locked
    # an edited lock is refused
    record = json.loads(locked)
    record["items"][0]["weight"] = 123.0
    sample_path(folder).write_text(json.dumps(record), encoding="utf-8")
    assert main(["rate", "import", str(folder), str(tmp_path / "x.json")]) == 2
    assert "changed after it was drawn" in capsys.readouterr().err
    assert sample.sha256 == json.loads(locked)["sample_sha256"]


def test_the_plan_line_counts_items_raters_and_minutes(capsys):
    assert main(["rate", "plan", "--n", "60", "--raters", "3", "--seconds-per-item", "90"]) == 0
    out = capsys.readouterr().out
    assert "60 items × 3 raters = 180 item ratings" in out
    assert "about 90 min per rater, 270 rater-minutes in all (at 90 s per item" in out
    assert main(["rate", "plan", "--n", "0", "--raters", "3"]) == 2
    assert "--n 0 must be above 0" in capsys.readouterr().err


def test_too_many_texts_or_a_negative_boost_is_one_clear_error(tmp_path, capsys):
    folder = tmp_path / "run"
    example_with_sample(folder)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(folder, other / "run", ignore=shutil.ignore_patterns("rating"))
    assert main(["rate", "sample", str(other / "run"), "--n", "999", "--raters", "2"]) == 2
    assert "more texts than the run has judged (60)" in capsys.readouterr().err
    assert main(["rate", "sample", str(other / "run"), "--n", "5", "--raters", "2",
                 "--boost", "-1"]) == 2  # fmt: skip
    assert "--boost -1" in capsys.readouterr().err
    assert not (other / "run" / "rating").exists()


def test_the_sheets_show_no_blinded_field(tmp_path):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "30", "--raters", "2")
    judged = judge_readings(folder)
    with diarylab.open_run(folder) as run:
        texts = run.texts()
    blinded = set(texts["profile"]) | set(texts["diarist"]) | set(texts["chatbot"].dropna())
    blinded |= set(texts["text_id"]) | {"smollm2-judge", "unsteered", "steer", "social_isolation"}
    numbers = {f"{v:.4f}" for (_, _, _), v in judged.items() if np.isfinite(v)}
    for name in ("r1.html", "r1.csv", "r2.html"):
        page = (folder / "rating" / "sheets" / name).read_text(encoding="utf-8")
        for text in texts["text"]:  # the texts themselves are what a rater must read
            page = page.replace(json.dumps(text, ensure_ascii=False)[1:-1], "")
            page = page.replace(text, "")
        found = sorted(word for word in blinded if word and word in page)
        assert not found, f"{name} shows {found}"
        assert not [n for n in numbers if n in page]
    # ... while each shows every item of the sample
    data = (folder / "rating" / "sheets" / "r1.html").read_text(encoding="utf-8")
    assert all(it.item_id in data for it in sample.items)
    csv = pd.read_csv(folder / "rating" / "sheets" / "r1.csv")
    assert set(csv["item_id"]) == {it.item_id for it in sample.items}
    assert csv["answer"].isna().all()


def test_label_studio_files_hold_every_item_and_question(tmp_path):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "20", "--raters", "2")
    ls = folder / "rating" / "label-studio"
    tasks = json.loads((ls / "replies.json").read_text()) + json.loads(
        (ls / "entries.json").read_text()
    )
    assert sorted(t["data"]["item_id"] for t in tasks) == sorted(it.item_id for it in sample.items)
    for kind, name in (("entry", "entries"), ("reply", "replies")):
        root = ET.fromstring((ls / f"{name}.xml").read_text())
        named = {el.get("name") for el in root if el.tag in ("Choices", "Number")}
        assert named == {q.key for q in sample.questions_for(kind)}
    assert read_lock(folder) == sample


def test_every_stratum_keeps_a_draw_when_the_minimum_overshoots():
    from diarylab.experiments.rating.sample import _allocate

    sizes = pd.Series({"big": 100, "small": 1, "tiny": 1})
    out = _allocate(sizes, 3)
    assert out.to_dict() == {"big": 1, "small": 1, "tiny": 1}
    out = _allocate(pd.Series({"a": 10, "b": 3, "c": 1}), 5)
    assert (
        out.sum() == 5 and (out >= 1).all() and (out <= pd.Series({"a": 10, "b": 3, "c": 1})).all()
    )


def test_an_unfinished_run_is_not_sampled(tmp_path, capsys):
    folder = tmp_path / "run"
    shutil.copytree(EXAMPLE, folder)
    (folder / "progress.json").write_text(json.dumps({"state": "running", "phases": []}))
    assert main(["rate", "sample", str(folder), "--n", "5", "--raters", "2"]) == 2
    err = capsys.readouterr().err
    assert "the run is not finished" in err and "fix:" in err
    assert not (folder / "rating").exists()
