"""Agreement between people and judges (experiments/rating/agreement.py, section.py), on the
shipped example run: a sample drawn, two raters' answers imported — one a noisy copy of the
judge, one at random — and the report shows high agreement for the first and near zero for the
second, with intervals; AC1 and alpha are the reference packages' own values on the same
table; no "as good as a rater" verdict is printed from too few diarists."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC

import diarylab
from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.cli import main
from diarylab.experiments.frames.columns import FRAMES
from diarylab.experiments.rating.agreement import agreement, items_for_width
from diarylab.experiments.rating.stored import judge_values, stored_ratings
from diarylab.testing.rating_fixtures import (
    example_with_sample,
    judge_readings,
    page_file,
    simulated_answers,
)


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("agree") / "run"
    sample = example_with_sample(folder, "--n", "40", "--raters", "2", "--seed", "2")
    judged = judge_readings(folder)
    files = [
        page_file(folder.parent / f"{rater}.json", sample, rater,
                  simulated_answers(sample, judged, noisy_copy=rater == "r1", seed=i))
        for i, rater in enumerate(("r1", "r2"))
    ]  # fmt: skip
    assert main(["rate", "import", str(folder), *map(str, files)]) == 0
    with diarylab.open_run(folder) as run:
        ratings = stored_ratings(run.store, sample)
        values = judge_values(run.store, sample)
    settings = BootstrapSettings("diarist", resamples=200, seed=0, method="t")
    return folder, sample, ratings, agreement(ratings, values, settings)


def test_ac1_and_alpha_are_the_packages_values_on_the_same_table(rated):
    _, _, ratings, result = rated
    for item in ("uses_details", "person:risk", "coherence"):
        wide = ratings[ratings["item"] == item].pivot_table(
            index="item_id", columns="rater", values="value"
        )
        row = result.raters.set_index("item").loc[item]
        alpha_level = "interval" if item == "coherence" else "nominal"
        want_alpha = krippendorff.alpha(
            reliability_data=wide.to_numpy().T, level_of_measurement=alpha_level
        )
        assert row["alpha"] == pytest.approx(want_alpha, abs=1e-12)
        if item != "coherence":
            words = wide.replace({1.0: "yes", 0.0: "no"}).astype(object)
            want_ac1 = CAC(words).gwet()["est"]["coefficient_value"]
            assert row["ac1"] == pytest.approx(float(want_ac1), abs=1e-12)


def test_a_noisy_copy_agrees_with_the_judge_and_a_random_rater_does_not(rated):
    _, _, _, result = rated
    per_rater = result.per_rater.set_index("rater")
    copy, coin = per_rater.loc["r1"], per_rater.loc["r2"]
    assert copy["auc"] > 0.85 and copy["spearman"] > 0.8
    assert abs(coin["auc"] - 0.5) < 0.12 and abs(coin["spearman"]) < 0.3
    # with intervals (two diarists: wide, but there)
    for row in (copy, coin):
        assert row["auc_low"] <= row["auc"] <= row["auc_high"]
        assert np.isfinite(row["spearman_low"]) and np.isfinite(row["spearman_high"])
    # the two raters agree about as well as chance: AC1 and alpha near zero on average
    assert abs(result.raters["alpha"].mean()) < 0.25
    assert abs(result.raters["ac1"].dropna().mean()) < 0.3


def test_the_report_shows_the_section_with_intervals_and_no_verdict_from_two_diarists(rated):
    folder, sample, _, _ = rated
    assert main(["report", str(folder)]) == 0
    findings = (folder / "report" / "findings.md").read_text(encoding="utf-8")
    section = findings[findings.index("## Judges against people (exploratory)") :]
    section = section[: section.index("## Diarists")]
    assert sample.sha256[:16] in section
    assert "### Between raters" in section and "### Each rater against each judge" in section
    rater_rows = [
        line for line in section.splitlines() if re.match(r"\| smollm2-judge \| r\d \|", line)
    ]
    assert len(rater_rows) == 2 and all("[" in line for line in rater_rows)
    assert "too few diarists (2 < 6)" in section
    assert "| yes |" not in section and "| no |" not in section
    assert "### How many items" in section
    assert "judge agrees with the majority" in section
    page = (folder / "report" / "index.html").read_text(encoding="utf-8")
    assert "Judges against people" in page


def test_no_ratings_yet_says_so(tmp_path):
    folder = tmp_path / "run"
    example_with_sample(folder, "--n", "10", "--raters", "2")
    assert main(["report", str(folder)]) == 0
    findings = (folder / "report" / "findings.md").read_text(encoding="utf-8")
    assert "No ratings are imported yet (`diarylab rate import RUN FILES...`)." in findings


def test_the_power_note_scales_the_half_width_by_the_root_of_the_items():
    assert items_for_width(0.2, 100, 0.1, 10) == (400, 40)
    assert items_for_width(float("nan"), 100, 0.1, 10) is None


def test_judge_as_good_as_a_rater_is_decided_from_the_interval():
    """With enough diarists the verdict is printed: a judge that copies the raters' majority
    is as good as a rater; one that answers the opposite is not."""
    from diarylab.experiments.rating.section import _as_good

    good = pd.Series({"gap_low": -0.05, "gap_high": 0.1})
    bad = pd.Series({"gap_low": -0.4, "gap_high": -0.2})
    assert _as_good(good, "yes_no", True, 6, 8) == "yes"
    assert _as_good(bad, "yes_no", True, 6, 8) == "no"
    assert _as_good(bad, "yes_no", False, 6, 2) == "too few diarists (2 < 6)"
    far = pd.Series({"gap_low": 3.0, "gap_high": 9.0})  # scores: the judge farther from raters
    assert _as_good(far, "number", True, 6, 8) == "no"


def test_a_rater_against_the_majority_of_the_others():
    from diarylab.experiments.rating.agreement import _agrees_with_others

    assert _agrees_with_others(np.array([1.0, 1.0, 1.0, 0.0])) == 0.75
    assert _agrees_with_others(np.array([1.0, 1.0, 0.0])) == 0.0  # two of three see a tie
    assert _agrees_with_others(np.array([1.0, 0.0])) == 0.0  # two raters: the other one
    assert np.isnan(_agrees_with_others(np.array([1.0])))


def test_open_run_gives_the_ratings_as_a_typed_frame_and_export_writes_it(rated, tmp_path):
    folder, sample, ratings, _ = rated
    with diarylab.open_run(folder) as run:
        frame = run.ratings()
        run.export(tmp_path / "out")
    assert list(frame.columns) == [c.name for c in FRAMES["ratings"]]
    assert len(frame) == len(ratings) and set(frame["rater"]) == {"r1", "r2"}
    by_item = {it.item_id: it for it in sample.items}
    row = frame.iloc[0]
    assert row["diarist"] == by_item[row["item_id"]].diarist
    assert row["weight"] == pytest.approx(1 / row["inclusion"])
    assert (frame["pattern"].isna() == (frame["profile"] == "unsteered")).all()
    read = pd.read_parquet(tmp_path / "out" / "ratings.parquet")
    pd.testing.assert_frame_equal(read, frame, check_dtype=False)


def _judges_table(rows):
    columns = ["judge", "scale", "item", "auc", "auc_low", "auc_high", "spearman",
               "spearman_low", "spearman_high"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def test_a_judge_no_better_than_chance_gets_the_box_and_a_good_one_none():
    from diarylab.experiments.rating.agreement import Agreement
    from diarylab.experiments.rating.chance_box import chance_box

    nan = float("nan")
    judges = _judges_table([
        ["coin", "yes_no", "(all)", 0.52, 0.41, 0.63, nan, nan, nan],
        ["coin", "number", "(all)", nan, nan, nan, 0.05, -0.2, 0.3],
        ["coin", "yes_no", "uses_details", 0.9, 0.8, 0.95, nan, nan, nan],  # one question alone
        ["sharp", "yes_no", "(all)", 0.91, 0.84, 0.96, nan, nan, nan],
        ["sharp", "number", "(all)", nan, nan, nan, 0.7, 0.55, 0.8],
    ])  # fmt: skip
    empty = pd.DataFrame()
    result = Agreement(empty, judges, empty, empty, diarists=8, items=60, rater_count=3)
    (box,) = chance_box(result, min_diarists=6, level=0.95)
    assert box.startswith("> **This judge is no better than chance against people.**")
    assert "`coin`: yes/no questions AUC 0.52 [0.41, 0.63] (chance 0.5), 0–100 scores" in box
    assert "Spearman's ρ 0.05 [-0.20, 0.30] (chance 0)" in box
    assert "sharp" not in box
    # from too few diarists, nothing is said
    assert chance_box(result, min_diarists=9, level=0.95) == []
    sharp = Agreement(empty, judges[judges["judge"] == "sharp"], empty, empty, 8, 60, 3)
    assert chance_box(sharp, min_diarists=6, level=0.95) == []


def test_the_box_opens_the_report_and_its_page(rated, monkeypatch):
    """What chance_box says stands at the top of findings.md and index.html, before the
    design's hash; the example (two diarists) says nothing of the kind by itself."""
    from diarylab.experiments.rating import chance_box

    folder, _, _, _ = rated
    assert main(["report", str(folder)]) == 0
    findings = (folder / "report" / "findings.md").read_text(encoding="utf-8")
    assert "no better than chance" not in findings
    monkeypatch.setattr(chance_box, "chance_box", lambda *a, **k: ["> **A box.**\n"])
    assert main(["report", str(folder)]) == 0
    findings = (folder / "report" / "findings.md").read_text(encoding="utf-8")
    assert findings.index("> **A box.**") < findings.index("Design sha256")
    assert "A box." in (folder / "report" / "index.html").read_text(encoding="utf-8")
