"""Reading a design and opening a run folder: the two places where a file meets the kind
registry (experiments/kinds/), so they sit above the engine and the kinds, and both point down."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.inputs import verify_copies
from diarylab.experiments.engine.runfolder import (
    DESIGN_FILE,
    SHA_FILE,
    STORE_FILE,
    check_store,
    corrupt_store,
    read_locked_sha,
    read_manifest,
)
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds import get_kind, kind_names
from diarylab.foundation.datafiles import file_sha256, load_toml
from diarylab.foundation.datafiles import validate as validate_data
from diarylab.foundation.errors import LabError


def load_design(path: Path | str, *, locked: bool = False) -> Design:
    """A design file, checked and loaded by its kind: one clear error (a LabError naming the
    file, the field and the fix) for each mistake in it.

    locked: the design of a run that has started (its folder's copy, or the file a resume
    names), read by the rules it was locked under: rules added since for new designs (a served
    judge saying its reading mode) do not lock a finished run out of its own folder."""
    path = Path(path)
    raw = load_toml(path)
    head = raw.get("design")
    if not isinstance(head, dict):
        raise LabError("missing table [design]", where=str(path), fix="add a [design] table")
    kind = get_kind(head.get("kind"), where=f"{path} design.kind")
    # Every offending field at once: a design is checked once, not once per mistake.
    context = {"design_path": path, "locked": locked}
    spec = validate_data(kind.schema, raw, str(path), context=context, every=True)
    return Design(path=path, sha256=file_sha256(path), raw=raw, spec=spec, kind=kind)


def design_schema(kind_name: str | None = None) -> dict[str, Any]:
    """The JSON Schema of a kind's design files, for editors; without a kind, one schema for
    every design file, which dispatches on `design.kind` (one of the kinds' schemas, each
    fixed to its own kind)."""
    if kind_name is not None:
        schema = get_kind(kind_name, where="--kind").schema.model_json_schema()
        schema["title"] = f"diarylab design ({kind_name})"
        return schema
    names = list(kind_names())
    defs: dict[str, Any] = {}
    branches = []
    for name in names:
        own = get_kind(name, where="--kind").schema.model_json_schema()
        for key, sub in own.pop("$defs", {}).items():
            defs[f"{name}.{key}"] = _prefixed(sub, name)
        defs[name] = _prefixed(own, name)
        fixed = {"properties": {"design": {"properties": {"kind": {"const": name}}}}}
        branches.append({"allOf": [{"$ref": f"#/$defs/{name}"}, fixed]})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "diarylab design",
        "description": f"a design file of any kind; [design].kind picks one of {names}",
        "type": "object",
        "required": ["design"],
        "properties": {
            "design": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": names, "description": "the experiment kind"}},
            }
        },
        "oneOf": branches,
        "$defs": defs,
    }


def _prefixed(node: Any, kind: str) -> Any:
    """A kind's schema with its $defs references renamed into that kind's own namespace (two
    kinds may name different models alike)."""
    if isinstance(node, dict):
        out = {k: _prefixed(v, kind) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out["$ref"] = f"#/$defs/{kind}.{ref.removeprefix('#/$defs/')}"
        return out
    if isinstance(node, list):
        return [_prefixed(v, kind) for v in node]
    return node


def resumes(design_path: Path, out: Path | None) -> bool:
    """Whether `run DESIGN --out OUT` resumes a run of this very design file."""
    if out is None or not (out / SHA_FILE).is_file() or not Path(design_path).is_file():
        return False
    try:
        return read_locked_sha(out) == file_sha256(Path(design_path))
    except LabError:
        return False  # the folder's own problem is told when the run opens it


@dataclass
class RunFolder:
    folder: Path
    design: Design
    store: Store
    integrity: str


def open_run_folder(folder: Path, *, verify: bool = False) -> RunFolder:
    """The one way a command opens an existing run folder: it is a run folder, its design and
    the copies of its inputs it holds are unchanged, its manifest reads, and its store opens
    and passes SQLite's quick check (the full integrity check with verify=True). The caller
    closes run.store."""
    folder = Path(folder)
    if not folder.is_dir():
        raise LabError("no such run folder", where=str(folder), fix="check the path")
    sha = read_locked_sha(folder)
    design = load_design(folder / DESIGN_FILE, locked=True)
    if design.sha256 != sha:
        raise LabError(
            "design.toml no longer matches design.sha256",
            where=str(folder),
            fix="restore the locked design; it must not change after data exist",
        )
    verify_copies(folder)  # the folder's own copies: the sources may be gone, moved or newer
    read_manifest(folder)
    path = folder / STORE_FILE
    if not path.is_file():
        raise LabError("run folder has no store.sqlite", where=str(folder), fix="run the design")
    integrity = check_store(path, full=verify)
    try:
        store = Store(path, design.kind.row_types)
    except sqlite3.DatabaseError as exc:
        raise corrupt_store(path, str(exc)) from None
    return RunFolder(folder, design, store, integrity)
