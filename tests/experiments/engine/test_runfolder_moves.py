"""Self-contained run folders: every input is copied into the folder and named by a relative path,
so a folder moved elsewhere (its original and its sources gone) or opened with a newer lab
version reports identically from its own copies; a corrupted copy is refused naming it; a resume
still refuses a changed source; folders made before copies still open, or are refused with one
clear error and a fix."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine import inputs as inputs_module
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.datafiles import file_sha256, located, reading_from
from diarylab.foundation.errors import LabError
from diarylab.rubric.behavior_rubric import RUBRIC_FILE, load_behavior_rubric
from diarylab.testing.lab_fixtures import design_text, make_profile, small_run_text


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_model_folder):
    """A small finished run (fixed replies, local tiny judge), its profile outside the folder,
    and the bytes of its report made in place."""
    origin = tmp_path_factory.mktemp("origin")
    profile = make_profile(origin, tiny_model_folder)
    text = small_run_text(tiny_model_folder, profile)
    design = origin / "design.toml"
    design.write_text(text)
    run = origin / "run"
    # Run as a user in a checkout would: from the folder, naming the design and --out relatively.
    here = Path.cwd()
    os.chdir(origin)
    try:
        run_design(load_design(Path("design.toml")), Path("run"), progress=False)
    finally:
        os.chdir(here)
    pristine = tmp_path_factory.mktemp("pristine") / "run"
    shutil.copytree(run, pristine)  # before any report: what a user would copy or publish
    assert main(["report", str(run), "--resamples", "200"]) == 0
    findings = (run / "report" / "findings.md").read_bytes()
    return origin, design, profile, pristine, findings


def fresh(finished, tmp_path: Path) -> Path:
    target = tmp_path / "moved" / "run"
    shutil.copytree(finished[3], target)
    return target


def entries(run: Path) -> dict[str, dict[str, str]]:
    data = json.loads((run / "inputs.json").read_text())
    assert data["format"] == 2
    return data["inputs"]


def test_every_input_is_copied_in_by_a_relative_path(finished):
    origin, _, profile, run, _ = finished
    locked = entries(run)
    origins = {e["origin"] for e in locked.values()}
    assert origins == {"lab", "file"}, origins
    for name, entry in locked.items():
        copy = Path(entry["copy"])
        assert not copy.is_absolute() and ".." not in copy.parts, name
        assert file_sha256(run / copy) == entry["sha256"], name
        if entry["origin"] == "lab":
            assert entry["copy"] == f"inputs/lab/{name}" and not Path(name).is_absolute()
    assert locked["diarists/cards/amara.toml"]["origin"] == "lab"
    assert locked[str(profile.resolve())]["origin"] == "file"
    vectors = [e for n, e in locked.items() if n.endswith(".safetensors")]
    assert len(vectors) == 1 and vectors[0]["copy"].startswith("inputs/files/")
    # the profile and its vector came from different folders, so they sit apart in the copy
    # and nothing in inputs.json names the folder's original place
    assert str(origin / "run") not in (run / "inputs.json").read_text()


def test_no_path_is_recorded_relative_to_where_the_run_ran(finished):
    origin, design, profile, run, _ = finished
    manifest = json.loads((run / "manifest.json").read_text())
    # the design by its locked copy in the folder, and the original by its name only
    assert manifest["design"]["file"] == "design.toml"
    assert manifest["design"]["origin"] == design.name
    assert manifest["profiles"]["tiny-social_isolation"]["file"] == str(profile.resolve())
    for name, entry in entries(run).items():
        assert Path(name).is_absolute() or entry["origin"] in ("lab", "run"), name


def test_a_moved_copy_reports_identically_with_its_original_and_sources_gone(
    finished, tmp_path, capsys, monkeypatch
):
    origin, _, _, _, findings = finished
    moved = fresh(finished, tmp_path)
    # The report re-reads the behavior rubric: from the folder's copy, not the checkout's.
    from diarylab.experiments.kinds.diary import report as diary_report

    read_from: list[Path] = []
    real = diary_report.load_behavior_rubric

    def spy():
        read_from.append(located(RUBRIC_FILE))
        return real()

    monkeypatch.setattr(diary_report, "load_behavior_rubric", spy)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    gone = [origin / "run", origin / "profiles", origin / "vectors"]
    for path in gone:
        path.rename(hidden / path.name)
    try:
        capsys.readouterr()
        assert main(["status", str(moved)]) == 0
        out = capsys.readouterr().out
        assert "the folder's copy of every input unchanged" in out
        assert "3 source(s) changed or gone" in out  # profile and its vector pair
        assert main(["report", str(moved), "--resamples", "200"]) == 0
        assert (moved / "report" / "findings.md").read_bytes() == findings
        assert read_from == [moved / "inputs" / "lab" / "rubric" / "behavior_rubric.toml"]
        assert main(["export", str(moved), "--to", str(tmp_path / "export")]) == 0
        assert (tmp_path / "export").is_dir() and any((tmp_path / "export").iterdir())
    finally:
        for path in gone:
            (hidden / path.name).rename(path)


def _newer_lab(tmp_path: Path, run: Path, monkeypatch) -> Path:
    """A checkout whose role card amara.toml changed after the run."""
    lab = tmp_path / "newer-lab"
    for name, entry in entries(run).items():
        if entry["origin"] == "lab":
            (lab / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(inputs_module.LAB_ROOT / name, lab / name)
    card = lab / "diarists" / "cards" / "amara.toml"
    card.write_text(card.read_text() + "\n# a newer lab version\n")
    monkeypatch.setattr(inputs_module, "LAB_ROOT", lab)
    return card


def test_a_newer_lab_version_reports_from_the_copy_and_a_resume_still_refuses(
    finished, tmp_path, capsys, monkeypatch
):
    _, design, _, _, findings = finished
    run = fresh(finished, tmp_path)
    card = _newer_lab(tmp_path, run, monkeypatch)
    assert main(["report", str(run), "--resamples", "200"]) == 0
    assert (run / "report" / "findings.md").read_bytes() == findings
    capsys.readouterr()
    assert main(["status", str(run)]) == 0
    assert "diarists/cards/amara.toml" in capsys.readouterr().out
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    assert main(["run", str(design), "--out", str(run), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "changed since it started" in err and str(card) in err, err
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda p: p.write_text(p.read_text() + "\n# edited\n"), "copy of an input changed"),
        (lambda p: p.unlink(), "copy of an input is missing"),
    ],
    ids=["edited", "deleted"],
)
def test_a_corrupted_copy_is_refused_naming_it(finished, tmp_path, capsys, damage, says):
    run = fresh(finished, tmp_path)
    copy = run / "inputs" / "lab" / "diarists" / "cards" / "amara.toml"
    damage(copy)
    for argv in (["status", str(run)], ["report", str(run)], ["export", str(run)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert says in err and str(copy) in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1
    assert not (run / "report").exists() and not (run / "export").exists()


def _as_old_folder(run: Path) -> None:
    """inputs.json as folders made before copies: name → sha256, no inputs/ folder."""
    flat = {n: e["sha256"] for n, e in entries(run).items()}
    (run / "inputs.json").write_text(json.dumps(flat, indent=2) + "\n")
    shutil.rmtree(run / "inputs")


def test_an_old_folder_opens_from_its_sources_or_is_refused_with_a_fix(finished, tmp_path, capsys):
    run = fresh(finished, tmp_path)
    _as_old_folder(run)
    capsys.readouterr()
    assert main(["status", str(run)]) == 0
    assert "read where they were made" in capsys.readouterr().out
    flat = json.loads((run / "inputs.json").read_text())
    flat[str(tmp_path / "gone.toml")] = "0" * 64
    (run / "inputs.json").write_text(json.dumps(flat))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "an input of this run is missing" in err and str(tmp_path / "gone.toml") in err
    assert "predates copied inputs" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        ({"format": 9, "inputs": {}}, "format 9 is not one this lab reads"),
        (
            {"format": 2, "inputs": {"x": {"sha256": "0", "copy": "../x", "origin": "lab"}}},
            "not a map of file",
        ),
        (
            {"format": 2, "inputs": {"x": {"sha256": "0", "copy": "/x", "origin": "lab"}}},
            "not a map of file",
        ),
    ],
    ids=["unknown-format", "copy-outside", "copy-absolute"],
)
def test_a_bad_inputs_json_is_one_clear_error(finished, tmp_path, capsys, inputs, says):
    run = fresh(finished, tmp_path)
    (run / "inputs.json").write_text(json.dumps(inputs))
    assert main(["status", str(run)]) == 2
    err = capsys.readouterr().err
    assert says in err and str(run / "inputs.json") in err and "Traceback" not in err, err


def test_a_file_the_run_made_in_its_folder_is_named_relative_to_it_and_moves(tmp_path):
    """Inline profiles: made inside the folder, locked by their place in it, never copied; a
    moved folder checks them where they now are, for a report and for a resume alike."""
    run = tmp_path / "run"
    made = run / "profiles" / "lonely.toml"
    made.parent.mkdir(parents=True)
    made.write_text("made by the run\n")
    outside = tmp_path / "mine.toml"
    outside.write_text("the user's\n")
    inputs_module.claim_inputs(run, [outside])
    inputs_module.add_inputs(run, [made])
    locked = entries(run)
    assert locked["profiles/lonely.toml"] == {
        "sha256": file_sha256(made),
        "copy": "profiles/lonely.toml",
        "origin": "run",
    }
    assert (run / locked[str(outside.resolve())]["copy"]).read_text() == "the user's\n"
    moved = tmp_path / "elsewhere"
    run.rename(moved)
    outside.unlink()
    inputs_module.verify_copies(moved)
    assert inputs_module.changed_sources(moved) == [str(outside.resolve())]
    (moved / "profiles" / "lonely.toml").write_text("edited\n")
    with pytest.raises(LabError, match="copy of an input changed"):
        inputs_module.verify_copies(moved)
    outside.write_text("the user's\n")
    with pytest.raises(LabError, match="changed since it started") as refused:
        inputs_module.verify_sources(moved)
    assert str(moved / "profiles" / "lonely.toml") in str(refused.value)


def test_an_old_folder_stays_old_when_a_resume_adds_inputs(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    first = tmp_path / "a.toml"
    first.write_text("a\n")
    (run / "inputs.json").write_text(json.dumps({str(first): file_sha256(first)}))
    made = run / "profiles" / "b.toml"
    made.parent.mkdir()
    made.write_text("b\n")
    inputs_module.add_inputs(run, [made])
    flat = json.loads((run / "inputs.json").read_text())
    # named as the lab named inputs before copies: absolutely, outside the lab
    assert flat == {str(first): file_sha256(first), str(made.resolve()): file_sha256(made)}
    assert not (run / "inputs").exists()
    inputs_module.verify_copies(run)  # checked against its sources, as it was made


def test_reading_from_reads_a_data_file_from_its_copy_under_its_own_name(tmp_path):
    copy = tmp_path / "behavior_rubric.toml"
    copy.write_text(RUBRIC_FILE.read_text() + "\n# an older lab version's copy\n")
    with reading_from({RUBRIC_FILE: copy}):
        inside = load_behavior_rubric()
    outside = load_behavior_rubric()
    assert inside.sha256 == file_sha256(copy) != outside.sha256 == file_sha256(RUBRIC_FILE)
    assert inside.path == outside.path == RUBRIC_FILE


def test_a_claim_killed_before_design_sha256_is_claimed_again(tmp_path):
    """What a claim writes before its last step is ours to write again; a user's own files in
    the folder are still refused."""
    from diarylab.experiments.engine.runfolder import claim

    design_file = tmp_path / "design.toml"
    design_file.write_text(design_text(tmp_path / "model", None))
    design = load_design(design_file)
    card = inputs_module.LAB_ROOT / "diarists" / "cards" / "amara.toml"
    run = tmp_path / "run"
    run.mkdir()
    inputs_module.claim_inputs(run, [card])  # killed here: copies and inputs.json, no claim
    (run / "inputs" / "stale.toml").write_text("a partial copy\n")
    assert claim(design, run, [card]) is True
    assert not (run / "inputs" / "stale.toml").exists()
    assert (run / "design.sha256").read_text().startswith(design.sha256)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "design.toml").write_text("my own file\n")
    with pytest.raises(LabError, match="not empty"):
        claim(design, mine, [card])
    assert (mine / "design.toml").read_text() == "my own file\n"
