"""Run folders (`status`, `status --verify`, `report`, `export`, `export --to`):
a-file, missing, not-a-run-folder, empty-design-sha256, garbled-design-sha256,
locked-design-missing, manifest-not-json, manifest-a-list, inputs-not-a-map,
locked-input-missing, truncated-store, store-is-a-folder, empty-store (a 0-byte store is
refused, not opened as a new one); and `run` into another design's run folder or a
folder of other files
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from diarylab.testing.bad_inputs import (
    Lab,
    one_clear_error,
    plain_file,
)

# Each case damages a private copy of a finished run folder (or names something that is not
# one); status, report and export all refuse it the same way and create nothing.
Damage = Callable[[Lab], Path]


def damaged(change: Callable[[Path], object]) -> Damage:
    def make(lab: Lab) -> Path:
        run = lab.own_run()
        change(run)
        return run

    return make


def empty_folder(lab: Lab) -> Path:
    path = lab.tmp / "empty"
    path.mkdir()
    return path


def add_locked_input(run: Path) -> None:
    inputs = json.loads((run / "inputs.json").read_text())
    copy = {"sha256": "0" * 64, "copy": "inputs/files/gone.toml", "origin": "file"}
    inputs["inputs"][str(run.parent / "gone.toml")] = copy
    (run / "inputs.json").write_text(json.dumps(inputs))


def truncate(run: Path) -> None:
    store = run / "store.sqlite"
    store.write_bytes(store.read_bytes()[:1024])


def store_as_folder(run: Path) -> None:
    (run / "store.sqlite").unlink()
    (run / "store.sqlite").mkdir()


def R(make: Damage, named: Callable[[Path], Path], says: str, *, id: str, marks=()):
    return pytest.param(make, named, says, id=f"runfolder-{id}", marks=marks)


def itself(folder: Path) -> Path:
    return folder


def inside(name: str) -> Callable[[Path], Path]:
    return lambda folder: folder / name


RUN_CASES = [
    R(plain_file, itself, "no such run folder", id="a-file"),
    R(lambda lab: lab.tmp / "never-made", itself, "no such run folder", id="missing"),
    R(empty_folder, itself, "not a run folder", id="not-a-run-folder"),
    R(
        damaged(lambda r: (r / "design.sha256").write_text("")),
        inside("design.sha256"),
        "does not hold a sha256",
        id="empty-design-sha256",
    ),
    R(
        damaged(lambda r: (r / "design.sha256").write_text("xyz  design.toml\n")),
        inside("design.sha256"),
        "does not hold a sha256",
        id="garbled-design-sha256",
    ),
    R(
        damaged(lambda r: (r / "design.toml").unlink()),
        inside("design.toml"),
        "file not found",
        id="locked-design-missing",
    ),
    R(
        damaged(lambda r: (r / "manifest.json").write_text("{not json")),
        inside("manifest.json"),
        "unreadable",
        id="manifest-not-json",
    ),
    R(
        damaged(lambda r: (r / "manifest.json").write_text("[1, 2]")),
        inside("manifest.json"),
        "not a JSON object",
        id="manifest-a-list",
    ),
    R(
        damaged(lambda r: (r / "inputs.json").write_text('{"a": 1}')),
        inside("inputs.json"),
        "not a map of file",
        id="inputs-not-a-map",
    ),
    R(
        damaged(add_locked_input),
        inside("inputs/files/gone.toml"),
        "the folder's copy of an input is missing",
        id="locked-input-missing",
    ),
    R(damaged(truncate), inside("store.sqlite"), "the store is damaged", id="truncated-store"),
    R(
        damaged(lambda r: (r / "store.sqlite").write_bytes(b"")),
        inside("store.sqlite"),
        "",
        id="empty-store",
    ),
    R(damaged(store_as_folder), itself, "no store.sqlite", id="store-is-a-folder"),
]


@pytest.mark.parametrize(("make", "named", "says"), RUN_CASES)
def test_a_bad_run_folder_is_one_clear_error_for_status_report_and_export(
    lab, capsys, make, named, says
):
    folder = make(lab)
    for argv in (
        ["status", str(folder)],
        ["status", str(folder), "--verify"],
        ["report", str(folder)],
        ["export", str(folder)],
        ["export", str(folder), "--to", str(lab.tmp / "exported")],
    ):
        one_clear_error(argv, capsys, [str(named(folder)), says], [lab.tmp])
        assert not (lab.tmp / "exported").exists()


def test_run_into_a_folder_that_is_not_its_own_is_refused(lab, capsys):
    """A design run into another design's run folder, or into a folder of other files."""
    run = lab.own_run()
    design = lab.design(lab.text(entries=2))
    one_clear_error(
        ["run", str(design), "--out", str(run), "--no-progress"],
        capsys,
        [str(run), "holds a different design"],
        [lab.tmp],
    )
    foreign = lab.tmp / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    one_clear_error(
        ["run", str(design), "--out", str(foreign), "--no-progress"],
        capsys,
        [str(foreign), "not empty"],
        [lab.tmp],
    )
