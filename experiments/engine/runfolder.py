"""Run folders: results/<design name>-<hash prefix>/ holding the locked design (a byte copy and
its sha256), every input that determines results copied in and locked by hash (inputs.json,
inputs/; see experiments.engine.inputs), the manifest
(written once; later runs append to resumes.jsonl), the store and the lock. A folder belongs to
one design and one set of inputs for good: a changed design, profile, vector, role card, pattern,
template or rubric is refused, naming the file. Every command that opens a run folder goes
through experiments.loading.open_run_folder."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarylab.experiments.engine.inputs import (
    INPUTS_DIR,
    INPUTS_FILE,
    claim_inputs,
    holds_copies,
    read_json,
    verify_sources,
)
from diarylab.experiments.engine.inputs import (
    add_inputs as add_inputs,  # the runner locks made profiles
)
from diarylab.experiments.engine.store.files import check_file
from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import Design

RESULTS = Path("results")
DESIGN_FILE, SHA_FILE = "design.toml", "design.sha256"
MANIFEST_FILE, RESUMES_FILE, STORE_FILE = "manifest.json", "resumes.jsonl", "store.sqlite"
PLAN_FILE = "plan.json"  # the plan as it stood when the run began (experiments/planning/plan.py)


def default_folder(design: Design) -> Path:
    return RESULTS / f"{design.name}-{design.sha256[:10]}"


@contextmanager
def replaced_folder(final: Path) -> Iterator[Path]:
    """A temporary sibling to write a whole folder into (a report); on success it takes the
    place of `final`, on any failure it is removed, so a reader never sees half a report and a
    failed rewrite leaves nothing behind."""
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    try:
        yield work
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


# ----------------------------------------------------------------------------- claiming
def refuse_under_a_file(folder: Path, option: str) -> None:
    """A folder to create must not be a file or lie under one."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise LabError(
                    "is a file, not a folder" if place == folder else f"{place} is a file",
                    where=str(folder),
                    fix=f"choose another {option}",
                )
            return


def check_claimable(design: Design, folder: Path) -> None:
    """Whether `design` may run into `folder` — checked without writing anything."""
    from diarylab.experiments.engine.runlock import refuse_if_held

    refuse_under_a_file(folder, "--out")
    refuse_if_held(folder)
    _check_folder(design, folder)


def _check_folder(design: Design, folder: Path) -> None:
    locked = folder / SHA_FILE
    if locked.exists():
        have = read_locked_sha(folder)
        if have != design.sha256:
            raise LabError(
                f"this run folder holds a different design (sha256 {have[:12]}…, yours "
                f"{design.sha256[:12]}…)",
                where=str(folder),
                fix="run the changed design into a new folder (--out), or restore the design",
            )
        verify_sources(folder)  # a resume must not mix two versions of an input
        return
    # A run killed while claiming may leave what a claim writes before design.sha256 (the claim
    # itself); the next claim writes it again. Ours only when our inputs.json is there too.
    leftovers = {".lock"}
    if holds_copies(folder) and (folder / INPUTS_FILE).is_file():
        leftovers |= {INPUTS_FILE, INPUTS_DIR, DESIGN_FILE}
    if folder.exists() and any(p.name not in leftovers for p in folder.iterdir()):
        raise LabError(
            "folder is not empty and holds no locked design",
            where=str(folder),
            fix="choose an empty or new folder with --out",
        )


def claim(design: Design, folder: Path, inputs: list[Path]) -> bool:
    """Lock the design and its inputs into `folder` (the caller holds the folder's run lock);
    True when this is the folder's first run."""
    _check_folder(design, folder)
    if (folder / SHA_FILE).exists():
        return False
    if (folder / INPUTS_FILE).is_file():  # a killed claim's copies (checked ours above)
        shutil.rmtree(folder / INPUTS_DIR, ignore_errors=True)
    claim_inputs(folder, inputs)
    write_atomic(folder / DESIGN_FILE, design.path.read_bytes())
    write_atomic(folder / SHA_FILE, f"{design.sha256}  {DESIGN_FILE}\n")  # last: the claim
    return True


def read_locked_sha(folder: Path) -> str:
    locked = folder / SHA_FILE
    if not locked.is_file():
        raise LabError(
            "not a run folder (no design.sha256)",
            where=str(folder),
            fix="point at a folder made by `diarylab run`",
        )
    words = locked.read_text(encoding="utf-8", errors="replace").split()
    if not words or len(words[0]) != 64 or any(c not in "0123456789abcdef" for c in words[0]):
        raise LabError(
            "design.sha256 does not hold a sha256",
            where=str(locked),
            fix="restore it; it must be the sha256 of design.toml",
        )
    return words[0]


# ----------------------------------------------------------------------------- manifest
# The run folder's format (its files and what they hold), recorded in every manifest; a folder
# written by a later diarylab is refused rather than misread. A manifest without one is format 1.
FOLDER_FORMAT = 1


def write_manifest(folder: Path, manifest: dict[str, Any], *, first: bool) -> None:
    """The manifest is written by the first run only; later runs add a resume record."""
    path = folder / MANIFEST_FILE
    if first or not path.exists():
        stamped = {**manifest, "folder_format": FOLDER_FORMAT}
        write_atomic(path, json.dumps(stamped, indent=2, sort_keys=True) + "\n")
        return
    record = {
        "resumed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        # to the call records' own precision: which calls this run made (the report's usage)
        "started": time.time(),
        "git_commit": manifest.get("git_commit"),
        "packages": manifest.get("packages"),
        # a resumed run may read a server that changed (another dtype, another fingerprint)
        "served_judges": manifest.get("served_judges"),
    }
    with (folder / RESUMES_FILE).open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST_FILE
    if not path.exists():
        return {}
    data = read_json(path, "manifest.json")
    if not isinstance(data, dict):
        raise LabError("manifest.json is not a JSON object", where=str(path), fix="restore it")
    written = data.get("folder_format", 1)
    if not isinstance(written, int) or written > FOLDER_FORMAT:
        raise LabError(
            f"this run folder has format {written!r}; this diarylab reads format {FOLDER_FORMAT} "
            "and earlier",
            where=f"{path} folder_format",
            fix="open it with the diarylab version that wrote it (the manifest's packages "
            "name it), or upgrade diarylab",
        )
    return data


def check_store(path: Path, *, full: bool) -> str:
    try:
        rows, tables = check_file(path, full=full)
    except sqlite3.DatabaseError as exc:
        raise corrupt_store(path, str(exc)) from None
    if rows != ["ok"]:
        raise corrupt_store(path, "; ".join(map(str, rows[:3])))
    if not {"meta", "calls"} <= tables:
        raise corrupt_store(path, "it holds none of the lab's tables")
    return "integrity check ok" if full else "quick check ok"


def corrupt_store(path: Path, why: str) -> LabError:
    return LabError(
        f"the store is damaged ({why})",
        where=str(path),
        fix="restore it from a backup, or run the design into a new folder",
    )
