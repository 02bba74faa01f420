"""A run folder's inputs (inputs.json): every file that determines results, locked by sha256
and copied into the folder, so the folder can be moved, published and reported on another
machine or with a newer lab version.

inputs.json maps each input's name to {"sha256", "copy", "origin"}:
- origin "lab": one of the lab's data files, named by its place in the lab (LAB_ROOT), copied to
  inputs/lab/<name>;
- origin "file": a file outside the lab and the folder (a profile or vector of the user's),
  named by its absolute path, copied to inputs/files/<place>/<file name>;
- origin "run": a file the run made inside its own folder (an inline profile), named and kept by
  its path relative to the folder (no copy needed).
Two checks follow: a resume compares the sources with their hashes (a changed source is refused,
so one folder never mixes two versions of an input), while status, report and export compare
the folder's own copies (the sources may be gone or newer). Folders made before copies existed
hold a flat map name → sha256; they are checked against their sources, as they were made."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.errors import LabError

LAB_ROOT = Path(__file__).resolve().parents[2]  # the lab's own data files live under here
INPUTS_FILE, INPUTS_DIR, FORMAT = "inputs.json", "inputs", 2
ORIGINS = ("lab", "file", "run")


def file_sha256(path: Path) -> str:
    """The bytes at `path` itself (never a redirected copy: these checks compare sources and
    copies with each other)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Locked:
    name: str
    sha256: str
    copy: str | None  # relative to the folder; None in a folder made before copies existed
    origin: str

    def source(self, folder: Path) -> Path:
        """Where the file came from (what a resume checks)."""
        if self.origin == "run":
            return folder / self.name
        path = Path(self.name)
        return path if path.is_absolute() else LAB_ROOT / path


def _locate(path: Path, folder: Path) -> tuple[str, str, str]:
    """(name, copy, origin) of an input file."""
    path = Path(path).resolve()
    try:
        inside = path.relative_to(Path(folder).resolve()).as_posix()
        return inside, inside, "run"
    except ValueError:
        pass
    try:
        name = path.relative_to(LAB_ROOT).as_posix()
        return name, f"{INPUTS_DIR}/lab/{name}", "lab"
    except ValueError:
        # One subfolder per source folder keeps a profile's vector pair together and two files
        # of one name from different folders apart.
        place = hashlib.sha256(str(path.parent).encode()).hexdigest()[:12]
        return str(path), f"{INPUTS_DIR}/files/{place}/{path.name}", "file"


def lock(paths: list[Path], folder: Path) -> dict[str, Locked]:
    out: dict[str, Locked] = {}
    for path in paths:
        if not Path(path).is_file():
            raise LabError("input file not found", where=str(path), fix="restore it")
        name, copy, origin = _locate(path, folder)
        out[name] = Locked(name, file_sha256(path), copy, origin)
    return out


def read_json(path: Path, what: str) -> Any:
    """A run folder's JSON file, or one clear error naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabError(
            f"{what} is unreadable ({type(exc).__name__})",
            where=str(path),
            fix="restore it from a backup, or run the design into a new folder",
        ) from None


def _read(folder: Path) -> tuple[dict[str, Locked], bool]:
    """The locked inputs and whether the folder holds copies of them."""
    path = folder / INPUTS_FILE
    if not path.exists():
        return {}, True
    data = read_json(path, "the list of locked inputs")
    bad = LabError("not a map of file → sha256 and copy", where=str(path), fix="restore it")
    if not isinstance(data, dict):
        raise bad
    if "format" not in data:  # made before copies: name → sha256
        if not all(isinstance(v, str) for v in data.values()):
            raise bad
        return {n: Locked(n, s, None, "lab") for n, s in data.items()}, False
    if data.get("format") != FORMAT or not isinstance(data.get("inputs"), dict):
        raise LabError(
            f"inputs.json format {data.get('format')!r} is not one this lab reads ({FORMAT})",
            where=str(path),
            fix="open the folder with the lab version that made it (see manifest.json's "
            "git_commit)",
        )
    out = {}
    for name, entry in data["inputs"].items():
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) for k in ("sha256", "copy", "origin")
        ):
            raise bad
        if entry["origin"] not in ORIGINS or not _inside(entry["copy"]):
            raise bad
        out[name] = Locked(name, entry["sha256"], entry["copy"], entry["origin"])
    return out, True


def _inside(copy: str) -> bool:
    """A copy's path stays inside the folder (a published folder names nothing outside it)."""
    path = Path(copy)
    return not path.is_absolute() and ".." not in path.parts


def _write(folder: Path, locked: dict[str, Locked], *, copies: bool) -> None:
    if copies:
        data: Any = {
            "format": FORMAT,
            "inputs": {
                n: {"sha256": e.sha256, "copy": e.copy, "origin": e.origin}
                for n, e in sorted(locked.items())
            },
        }
    else:
        data = {n: e.sha256 for n, e in sorted(locked.items())}
    write_atomic(folder / INPUTS_FILE, json.dumps(data, indent=2) + "\n")


def _copy_in(folder: Path, locked: dict[str, Locked]) -> None:
    """Copy each source into the folder, the file checked against the hash just locked (a file
    changed between hashing and copying would otherwise be kept under the wrong hash)."""
    for entry in locked.values():
        if entry.copy is None or entry.origin == "run":
            continue
        target = folder / entry.copy
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(entry.source(folder), target)
        if file_sha256(target) != entry.sha256:
            raise LabError(
                "an input changed while it was being copied into the run folder",
                where=str(entry.source(folder)),
                fix="run again once nothing is writing to it",
            )


def claim_inputs(folder: Path, paths: list[Path]) -> None:
    """A new folder's inputs: copied in first, then inputs.json (so it never names a copy that
    is not there)."""
    locked = lock(paths, folder)
    _copy_in(folder, locked)
    _write(folder, locked, copies=True)


def add_inputs(folder: Path, paths: list[Path]) -> None:
    """Lock more inputs (profiles a run made inside its folder), in the folder's own format."""
    have, copies = _read(folder)
    more = lock(paths, folder)
    if copies:
        _copy_in(folder, more)
    else:  # named as such folders name inputs: by their place in the lab, else absolutely
        more = {}
        for path in paths:
            resolved = Path(path).resolve()
            name = (
                resolved.relative_to(LAB_ROOT).as_posix()
                if resolved.is_relative_to(LAB_ROOT)
                else str(resolved)
            )
            more[name] = Locked(name, file_sha256(resolved), None, "lab")
    _write(folder, {**have, **more}, copies=copies)


def locked_inputs(folder: Path) -> dict[str, str]:
    """Name → sha256 of every locked input."""
    return {n: e.sha256 for n, e in _read(folder)[0].items()}


def holds_copies(folder: Path) -> bool:
    return _read(folder)[1]


def verify_sources(folder: Path, *, note: str = "") -> None:
    """Refuse when any locked input changed or went missing at its source since the folder was
    claimed (a resume must not mix two versions of an input into one store)."""
    for entry in _read(folder)[0].values():
        path = entry.source(folder)
        if not path.is_file():
            raise LabError(
                "an input of this run is missing",
                where=str(path),
                fix=f"restore the file; results in this folder were made with it{note}",
            )
        if file_sha256(path) != entry.sha256:
            raise LabError(
                f"an input of this run changed since it started (sha256 was {entry.sha256[:12]}…)",
                where=str(path),
                fix="restore the file, or run the design into a new folder (--out) to use the "
                f"changed one{note}",
            )


def verify_copies(folder: Path) -> None:
    """What status, report and export read: the folder's own copies, each unchanged. A folder
    made before copies existed is checked against its sources, with a fix that says so."""
    locked, copies = _read(folder)
    if not copies:
        verify_sources(
            folder,
            note=" (this folder predates copied inputs, so it reads them where they were; a "
            "new run of its design makes a folder that moves)",
        )
        return
    for entry in locked.values():
        path = folder / str(entry.copy)
        if not path.is_file():
            raise LabError(
                f"the folder's copy of an input is missing ({entry.name})",
                where=str(path),
                fix="restore the run folder whole (it must travel with its inputs/ folder)",
            )
        if file_sha256(path) != entry.sha256:
            raise LabError(
                f"the folder's copy of an input changed (sha256 was {entry.sha256[:12]}…)",
                where=str(path),
                fix="restore the run folder from its original or a backup; copies must not "
                "be edited",
            )


def input_copies(folder: Path) -> dict[Path, Path]:
    """Source → the folder's copy, for every copied input (what a report reads the lab's data
    files from: foundation.datafiles.reading_from)."""
    locked, copies = _read(folder)
    if not copies:
        return {}
    return {
        e.source(folder): folder / e.copy
        for e in locked.values()
        if e.copy is not None and e.origin != "run"
    }


def copy_by_sha256(folder: Path, sha256: str) -> Path | None:
    """The folder's own copy of the input with this hash, if it holds one: how a report resolves
    a file the run recorded (its recorded path may be another machine's, or gone)."""
    locked, copies = _read(folder)
    if not copies:
        return None
    for entry in locked.values():
        if entry.sha256 == sha256 and entry.copy is not None:
            return folder / entry.copy
    return None


def changed_sources(folder: Path) -> list[str]:
    """Names of inputs whose source is gone or differs from the locked copy (a resume of the
    folder here would be refused); reported by status, never refused there."""
    out = []
    for entry in _read(folder)[0].values():
        path = entry.source(folder)
        if not path.is_file() or file_sha256(path) != entry.sha256:
            out.append(entry.name)
    return out
