"""Run folders: every input locked whole at the first run (a changed profile, vector, role card
or template is refused, naming the file), the manifest written once, and one routine opening a
folder for status, report and export that refuses what is not a sound run folder — creating
nothing."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.running.runner import run_design
from diarylab.testing.lab_fixtures import make_profile, small_run_text


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_model_folder):
    """A small finished run (fixed replies, local tiny judge) and its inputs."""
    folder = tmp_path_factory.mktemp("runfolder")
    profile = make_profile(folder, tiny_model_folder)
    text = small_run_text(tiny_model_folder, profile)
    design = folder / "design.toml"
    design.write_text(text)
    run = folder / "run"
    run_design(load_design(design), run, progress=False)
    return folder, design, profile, run


def copy_run(finished, tmp_path):
    folder, design, profile, run = finished
    target = tmp_path / "run"
    shutil.copytree(run, target)
    return target


def test_inputs_are_locked_with_their_hashes(finished):
    _, _, profile, run = finished
    locked = json.loads((run / "inputs.json").read_text())["inputs"]
    names = list(locked)
    assert str(profile.resolve()) in names
    assert any(n.endswith("tiny-social_isolation.safetensors") for n in names)
    assert "diarists/cards/amara.toml" in names and "rubric/behavior_rubric.toml" in names
    assert "diarists/templates/entry.toml" in names and "chatbots/refusals.toml" in names


def test_a_changed_profile_is_refused_by_a_resume_and_read_from_the_copy_by_status(
    finished, tmp_path, capsys
):
    """A resume must not mix two versions of a profile into one store; status and export read
    the folder's own copy (the folder can leave its sources) and status says the source moved
    on."""
    folder, design, profile, run = finished
    original = profile.read_text()
    try:
        profile.write_text(original.replace("strength = 0.8", "strength = 1.5"))
        assert main(["run", str(design), "--out", str(run), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "changed since it started" in err and str(profile.resolve()) in err, err
        assert main(["status", str(run)]) == 0
        assert str(profile.resolve()) in capsys.readouterr().out
        assert main(["export", str(run), "--to", str(tmp_path / "export")]) == 0
    finally:
        profile.write_text(original)
    assert main(["status", str(run)]) == 0
    assert "changed or gone" not in capsys.readouterr().out


def test_manifest_is_written_once_and_resumes_are_recorded(finished, tmp_path):
    _, design, _, _ = finished
    run = copy_run(finished, tmp_path)
    before = (run / "manifest.json").read_bytes()
    summary = run_design(load_design(design), run, progress=False)
    assert summary.calls_made == 0
    assert (run / "manifest.json").read_bytes() == before
    resumes = (run / "resumes.jsonl").read_text().splitlines()
    assert len(resumes) == 1 and "resumed" in json.loads(resumes[0])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda run: (run / "design.sha256").write_text(""), "does not hold a sha256"),
        (lambda run: (run / "design.sha256").unlink(), "not a run folder"),
        (lambda run: (run / "manifest.json").write_text("{not json"), "manifest.json is unread"),
        (lambda run: (run / "inputs.json").write_text("[1, 2]"), "not a map of file"),
        (lambda run: shutil.rmtree(run / "inputs"), "copy of an input is missing"),
        (lambda run: (run / "store.sqlite").unlink(), "has no store.sqlite"),
        (
            lambda run: (run / "store.sqlite").write_bytes(
                (run / "store.sqlite").read_bytes()[:2048]
            ),
            "the store is damaged",
        ),
        (lambda run: (run / "store.sqlite").write_bytes(b"x" * 4096), "the store is damaged"),
        (
            lambda run: (run / "design.toml").write_text(
                (run / "design.toml").read_text() + "\n# edited\n"
            ),
            "no longer matches design.sha256",
        ),
    ],
)
def test_a_damaged_run_folder_is_one_clear_error_for_every_command(
    finished, tmp_path, capsys, damage, message
):
    run = copy_run(finished, tmp_path)
    for extra in ("store.sqlite-wal", "store.sqlite-shm"):
        (run / extra).unlink(missing_ok=True)
    damage(run)
    listing = sorted(p.name for p in run.iterdir())
    for argv in (["status", str(run)], ["report", str(run)], ["export", str(run)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in run.iterdir()) == listing  # nothing created


def test_status_verify_runs_the_full_check(finished, capsys):
    _, _, _, run = finished
    assert main(["status", str(run), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "integrity check ok" in out and "the folder's copy of every input unchanged" in out


def test_export_to_a_file_and_too_few_resamples_are_refused(finished, tmp_path, capsys):
    _, _, _, run = finished
    target = tmp_path / "a-file"
    target.write_text("x")
    assert main(["export", str(run), "--to", str(target)]) == 2
    assert "--to is a file" in capsys.readouterr().err
    assert main(["report", str(run), "--resamples", "0"]) == 2
    assert "too few" in capsys.readouterr().err


def test_out_that_is_a_file_is_refused_before_anything(finished, tmp_path, capsys):
    _, design, _, _ = finished
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["run", str(design), "--out", str(target), "--no-progress"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert target.read_text() == "x"


def test_replaced_folder_swaps_in_whole_or_leaves_the_old_one(tmp_path):
    from diarylab.experiments.engine.runfolder import replaced_folder

    final = tmp_path / "report"
    final.mkdir()
    (final / "old.md").write_text("old")
    with pytest.raises(RuntimeError):
        with replaced_folder(final) as work:
            (work / "half.md").write_text("half")
            raise RuntimeError("a plot failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no temporary left
    assert [p.name for p in final.iterdir()] == ["old.md"]
    with replaced_folder(final) as work:
        (work / "new.md").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    assert [p.name for p in final.iterdir()] == ["new.md"]


def test_the_report_names_no_absolute_path_and_shows_the_manifest_as_rows(
    finished, tmp_path, capsys
):
    """A run made in a tmp folder (its design, profile and model folder outside it): the
    report's Markdown names no path of the machine, the design by its locked copy and the
    origin's name, each part of the run on a row, the full manifest by a link."""
    run = copy_run(finished, tmp_path)
    assert main(["report", str(run), "--resamples", "100"]) == 0
    texts = {p.name: p.read_text(encoding="utf-8") for p in (run / "report").rglob("*.md")}
    for name, text in texts.items():
        assert "/tmp" not in text and "/work" not in text and str(tmp_path) not in text, name
        assert not re.search(r"(?<![\w.)])/(?:[\w.-]+/)+[\w.-]+", text), name
    findings = texts["findings.md"]
    manifest = findings.split("## Manifest")[1].split("\n## ")[0]
    assert "[manifest.json](../manifest.json)" in manifest
    assert "the locked copy `design.toml`" in manifest
    assert re.search(
        r"^\| diarist model \| \S+ \(outside the run folder\) \(float32, 2 layers", manifest, re.M
    )
    assert re.search(
        r"^\| profile tiny-social_isolation \| social_isolation: layers", manifest, re.M
    )
    assert re.search(r"^\| packages \| .*torch ", manifest, re.M)
    assert "{" not in manifest  # no raw JSON
    usage = pd.read_csv(run / "report" / "tables" / "usage.csv")
    assert set(usage["role"]) >= {"diarist", "judge"}
    assert (usage["made_last_run"] == usage["calls"]).all()  # never resumed
    assert "## Model calls and tokens" in findings
