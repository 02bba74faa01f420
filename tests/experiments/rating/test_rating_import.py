"""`diarylab rate import` (experiments/rating/imports.py): the three file formats are read; every
mistake — an unknown item, an answer given twice, a file from another sample, a value out of
range — is one clear error naming the file and the item, exit status 2, and nothing of the
import is stored; a good import stores every answer once; a sheet finished in part imports what
it holds and says what is still to answer."""

from __future__ import annotations

import csv
import json

import pytest

import diarylab
from diarylab.experiments.cli import main
from diarylab.testing.rating_fixtures import (
    example_with_sample,
    judge_readings,
    page_file,
    simulated_answers,
)
from diarylab.testing.stores import opened, snapshot


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rate") / "run"
    sample = example_with_sample(folder, "--n", "12", "--raters", "2")
    answers = simulated_answers(sample, judge_readings(folder), noisy_copy=True, seed=1)
    return folder, sample, answers


def _stored(folder) -> int:
    with diarylab.open_run(folder) as run:
        store = run.store
        return store.count("ratings") if "ratings" in store.tables() else 0


def _whole_store(folder) -> dict:
    with opened(folder / "store.sqlite") as store:
        tables = [t for t in store.tables() if t not in ("calls", "meta")]
    return snapshot(folder / "store.sqlite", tables)


def _refused(capsys, folder, *files) -> str:
    before = _whole_store(folder)
    assert main(["rate", "import", str(folder), *map(str, files)]) == 2
    assert _whole_store(folder) == before  # the store unchanged: nothing half-imported
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def _first(answers):
    item = next(iter(answers))
    return item, next(iter(answers[item]))


def test_each_mistake_is_one_error_naming_file_and_item(rated, tmp_path, capsys):
    folder, sample, answers = rated
    item, key = _first(answers)

    unknown = {**answers, "i0000000000": answers[item]}
    err = _refused(capsys, folder, page_file(tmp_path / "unknown.json", sample, "r1", unknown))
    assert "unknown.json: item i0000000000: no such item in the locked sample" in err

    other = page_file(tmp_path / "other.json", sample, "r1", answers)
    record = json.loads(other.read_text())
    record["sample_sha256"] = "0" * 64
    other.write_text(json.dumps(record))
    err = _refused(capsys, folder, other)
    assert "other.json: the file was made for another sample" in err and "fix:" in err

    wrong = json.loads(json.dumps(answers))
    number_key = next(q.key for q in sample.form if q.scale == "number")
    entry_item = next(it.item_id for it in sample.items if it.target_kind == "entry")
    wrong[entry_item][number_key] = 140
    err = _refused(capsys, folder, page_file(tmp_path / "range.json", sample, "r1", wrong))
    assert f"range.json: item {entry_item} {number_key}: answer 140 is not a whole number" in err

    once = page_file(tmp_path / "once.json", sample, "r1", answers)
    again = page_file(tmp_path / "again.json", sample, "r1", answers)
    err = _refused(capsys, folder, once, again)
    assert "rater r1 answers" in err and "in this file and in once.json" in err

    (tmp_path / "junk.json").write_text("{not json")
    err = _refused(capsys, folder, tmp_path / "junk.json")
    assert "junk.json: the file is neither a CSV sheet nor JSON" in err


def test_a_twice_answered_question_in_a_csv_is_refused(rated, tmp_path, capsys):
    folder, sample, answers = rated
    rows = _filled_csv(folder, sample, answers, "r2")
    rows.append(dict(rows[0]))
    path = _write_csv(tmp_path / "twice.csv", rows)
    err = _refused(capsys, folder, path)
    assert (
        f"twice.csv: item {rows[0]['item_id']}: rater r2 answers {rows[0]['question_key']} twice"
        in err
    )


def _filled_csv(folder, sample, answers, rater):
    with (folder / "rating" / "sheets" / f"{rater}.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["answer"] = str(answers[row["item_id"]][row["question_key"]])
    return rows


def _write_csv(path, rows):
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_page_csv_and_label_studio_files_import_and_again_is_a_no_op(rated, tmp_path, capsys):
    folder, sample, answers = rated
    page = page_file(tmp_path / "r1.json", sample, "r1", answers)
    sheet = _write_csv(tmp_path / "r2.csv", _filled_csv(folder, sample, answers, "r2"))
    export = _label_studio_export(folder, answers, user={"id": 7, "email": "ann@lab.org"})
    assert main(["rate", "import", str(folder), str(page), str(sheet), str(export)]) == 0
    per_rater = sum(len(v) for v in answers.values())
    assert _stored(folder) == 3 * per_rater
    assert f"{3 * per_rater} answers stored now" in capsys.readouterr().out
    # the same files again: nothing new, nothing refused
    assert main(["rate", "import", str(folder), str(page)]) == 0
    assert _stored(folder) == 3 * per_rater
    # a different answer from the same rater to a stored question: refused
    changed = json.loads(json.dumps(answers))
    item, key = _first(changed)
    q = next(q for q in sample.form if q.key == key)
    changed[item][key] = (
        ("no" if changed[item][key] == "yes" else "yes") if q.scale == "yes_no" else 0
    )
    err = _refused(capsys, folder, page_file(tmp_path / "r1b.json", sample, "r1", changed))
    assert "already has a different answer" in err
    with diarylab.open_run(folder) as run:
        rows = run.store.select("ratings", ["rater", "source"], distinct=True)
    assert sorted(rows) == [("ls-ann@lab.org", "export.json"), ("r1", "r1.json"), ("r2", "r2.csv")]


def _label_studio_export(folder, answers, user):
    """Label Studio's JSON export of both projects' tasks with one annotator's answers, in
    the shape label_studio/data_export/serializers.py writes (completed_by expanded to id and
    e-mail; a choices result holds a list of the chosen values, a number result a number)."""
    tasks = []
    for name in ("entries", "replies"):
        for i, task in enumerate(
            json.loads((folder / "rating" / "label-studio" / f"{name}.json").read_text())
        ):
            given = answers[task["data"]["item_id"]]
            result = [
                {"id": f"r{i}{k}", "from_name": k, "to_name": "entry", "origin": "manual",
                 "type": "choices" if isinstance(v, str) else "number",
                 "value": {"choices": [v]} if isinstance(v, str) else {"number": v}}
                for k, v in given.items()
            ]  # fmt: skip
            tasks.append(
                {"id": len(tasks) + 1, "data": task["data"], "predictions": [], "meta": {},
                 "annotations": [{"id": len(tasks) + 1, "completed_by": user, "result": result,
                                  "was_cancelled": False, "ground_truth": False}]}
            )  # fmt: skip
    path = folder.parent / "export.json"
    path.write_text(json.dumps(tasks))
    return path


def test_status_says_how_far_the_raters_are(tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "6", "--raters", "2")
    answers = simulated_answers(sample, judge_readings(folder), noisy_copy=False, seed=5)
    assert (
        main(
            [
                "rate",
                "import",
                str(folder),
                str(page_file(tmp_path / "a.json", sample, "r1", answers)),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["status", str(folder)]) == 0
    want = sum(len(sample.questions_for(it.target_kind)) for it in sample.items)
    line = next(x for x in capsys.readouterr().out.splitlines() if "rating:" in x)
    assert "of 6 texts locked" in line and "answers stored: r1 complete, r2 none" in line
    assert main(["status", str(folder), "--json"]) == 0
    rating = json.loads(capsys.readouterr().out)["rating"]
    assert rating["stored"] == {"r1": want, "r2": 0} and rating["answers_per_rater"] == want


def test_the_same_answers_downloaded_again_are_no_change(tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "4", "--raters", "2")
    answers = simulated_answers(sample, judge_readings(folder), noisy_copy=False, seed=6)
    first = page_file(tmp_path / "first.json", sample, "r1", answers)
    again = page_file(tmp_path / "again.json", sample, "r1", answers)
    record = json.loads(again.read_text())
    record["saved"] = "2026-12-05T09:00:00.000Z"  # the page downloaded once more, later
    again.write_text(json.dumps(record))
    assert main(["rate", "import", str(folder), str(first)]) == 0
    stored = _stored(folder)
    assert main(["rate", "import", str(folder), str(again)]) == 0
    assert _stored(folder) == stored
    assert "0 answers stored now" in capsys.readouterr().out


def test_a_folder_that_is_no_run_is_told_as_such(tmp_path, capsys):
    assert main(["rate", "import", str(tmp_path / "nowhere"), str(tmp_path / "a.json")]) == 2
    assert "no such run folder" in capsys.readouterr().err
    assert main(["rate", "sample", str(tmp_path / "nowhere"), "--n", "3", "--raters", "2"]) == 2
    assert "no such run folder" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


def test_a_sheet_finished_in_part_imports_what_it_holds_and_says_what_is_missing(tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "12", "--raters", "2")
    answers = simulated_answers(sample, judge_readings(folder), noisy_copy=True, seed=1)
    item, key = _first(answers)
    part = json.loads(json.dumps(answers))
    del part[item][key]
    skipped = next(k for k in answers if k != item)
    del part[skipped]
    capsys.readouterr()
    assert main(["rate", "import", str(folder), str(page_file(tmp_path / "part.json", sample,
                                                               "r1", part))]) == 0  # fmt: skip
    out = capsys.readouterr().out
    held = sum(len(v) for v in part.values())
    assert f"ratings: {held} answers stored now, {held} in the store" in out
    line = next(x for x in out.splitlines() if "still to answer: rater r1" in x)
    assert "left 2 of 12 items" in line and item in line and skipped in line
    assert _stored(folder) == held
    # the finished sheet later: the rest is stored, what was stored is kept
    whole = page_file(tmp_path / "whole.json", sample, "r1", answers)
    assert main(["rate", "import", str(folder), str(whole)]) == 0
    out = capsys.readouterr().out
    total = sum(len(v) for v in answers.values())
    assert f"{total - held} answers stored now, {total} in the store" in out
    assert "still to answer" not in out
