"""`diarylab.open_run(path)`: a run's results as typed frames (experiments/frames/reader.py), on the
shipped example run: each frame has exactly its declared columns and dtypes, every reading
names the text it judged and who wrote it, the judge-free projection is a frame of its own, and
docs/results-columns.md is the declarations, generated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import diarylab
from diarylab.experiments.frames.columns import FRAMES, columns_doc
from diarylab.experiments.frames.reader import COMPUTED

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "results" / "example"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("copy") / "example"
    shutil.copytree(EXAMPLE, folder)  # a copy: opening a store may touch its folder
    with diarylab.open_run(folder) as opened:
        yield opened


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_every_frame_has_exactly_its_declared_columns(run, name):
    frame = getattr(run, name)()
    assert [(c, str(t)) for c, t in frame.dtypes.items()] == [
        (c.name, c.dtype) for c in FRAMES[name]
    ]
    # the example has no rating sample: its ratings frame is empty, with its columns
    assert len(frame) > 0 or name == "ratings"


def test_readings_name_the_text_and_its_writer(run):
    texts = run.texts().set_index("text_id")
    readings = run.readings()
    assert set(readings["target_id"]) <= set(texts.index)
    assert readings["diarist"].notna().all() and readings["profile"].notna().all()
    row = readings.iloc[0]
    assert row["diarist"] == texts.loc[row["target_id"], "diarist"]
    # The example's judge reads 0–100 bounded: each such reading states its interval.
    numbers = readings[readings["question"] == "number"]
    assert (numbers["bound_low"] <= numbers["value"] + 1e-9).all()
    assert (numbers["value"] <= numbers["bound_high"] + 1e-9).all()
    assert set(run.answers()["question"]) == {"yes_no"}


def test_the_projection_is_its_own_frame_and_every_judgment_is_in_one(run):
    readings, projection = run.readings(), run.projection()
    assert "projection" not in set(readings["judge"])
    store_judgments = run._run.store.count("judgments")
    assert len(readings) + len(projection) == store_judgments
    assert projection["item"].str.startswith("pattern:").all()


def test_calls_carry_their_role_and_stated_tokens(run):
    calls = run.calls()
    assert {"diarist", "chatbot", "judge"} <= set(calls["role"])
    assert calls.loc[calls["role"] == "judge", "prompt_tokens"].notna().any()


def test_the_columns_doc_is_generated_from_the_declarations():
    assert (ROOT / "docs" / "results-columns.md").read_text(encoding="utf-8") == columns_doc()


def test_the_parquet_export_is_the_frames(run, tmp_path):
    import pandas as pd

    from diarylab.experiments.cli import main

    assert main(["export", str(run.folder), "--to", str(tmp_path / "out")]) == 0
    for name in FRAMES:
        if name in COMPUTED:  # the verdicts: computed on request, in the report's tables
            assert not (tmp_path / "out" / f"{name}.parquet").exists()
            continue
        read = pd.read_parquet(tmp_path / "out" / f"{name}.parquet")
        pd.testing.assert_frame_equal(read, getattr(run, name)(), check_dtype=False)
        assert list(read.columns) == [c.name for c in FRAMES[name]]
    assert (tmp_path / "out" / "tables" / "judgments.parquet").is_file()


def test_verdicts_are_the_reports_hypotheses_table(run):
    """The notebook's verdicts equal what the shipped report states, row for row, at the
    resamples the report was made with."""
    import pandas as pd

    shipped = pd.read_csv(EXAMPLE / "report" / "tables" / "hypotheses.csv")
    verdicts = run.verdicts()
    assert list(verdicts.columns) == [c for c in shipped.columns if c != "row_id"]
    assert len(verdicts) == len(shipped) > 0
    for column in ("id", "judge", "judge_verdict", "overall"):
        assert list(verdicts[column]) == list(shipped[column])
    assert verdicts["estimate"].to_numpy() == pytest.approx(shipped["estimate"].to_numpy())
