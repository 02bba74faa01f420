"""The checks a derived design passes before anything is claimed (experiments/derived/reuse.py), and
what `design check` says of it: the run named in [derived_from] is the one locked by its design
and texts hashes, every field that determines a text equals the run's, each profile steers as
the run's did, the files the texts were made from are the run's, and the run holds every text
the cells need. Each failure is one LabError naming the field and the fix."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from diarylab.experiments.derived.reuse import PROFILES_DIR, Reuse, inline_ids, reuse_support
from diarylab.experiments.designs.opening import open_run_folder
from diarylab.experiments.engine.contract import Design, ReuseSupport
from diarylab.experiments.engine.inputs import file_sha256, locked_inputs
from diarylab.experiments.engine.reuse import (
    Texts,
    first_difference,
    present_ids,
    recorded_in,
    store_texts,
    text_view,
)
from diarylab.experiments.engine.runfolder import (
    SHA_FILE,
    STORE_FILE,
    read_locked_sha,
    read_manifest,
)
from diarylab.experiments.profiles.refs import profile_ids, resolve_profiles
from diarylab.foundation.errors import LabError


def reuse_for_run(design: Design, folder: Path) -> Reuse | None:
    """The reuse a run of `design` into `folder` does: none for a design that derives nothing;
    a folder whose store already holds the copy resumes from it (the source may be gone since);
    otherwise every check of `check_reuse`."""
    if design.spec.derived_from is None:
        return None
    kind = reuse_support(design)
    store_path = folder / STORE_FILE
    ours = (folder / SHA_FILE).is_file() and read_locked_sha(folder) == design.sha256
    if ours and store_path.is_file():
        record = recorded_in(store_path)
        if record is not None:
            texts = Texts(record["texts_sha256"], record["calls"], record["rows"])
            return Reuse(
                Path(record["run"]),
                record["design_sha256"],
                texts,
                tuple(kind.text_rows),
                tuple(kind.text_calls),
                inline_ids(design),
            )
    return check_reuse(design)


def check_reuse(design: Design) -> Reuse | None:
    """Everything that must hold before a design may reuse a run's texts, checked without
    writing anything; None for a design that derives nothing."""
    table = design.spec.derived_from
    if table is None:
        return None
    kind = reuse_support(design)
    where = f"{design.path} derived_from"
    source = Path(table.run).expanduser()
    source = (source if source.is_absolute() else design.path.parent / source).resolve()
    run = open_run_folder(source)  # a run folder, its design, copies and store all intact
    run.store.close()
    if run.design.kind.name != design.kind.name:
        raise LabError(
            f"{source} is a {run.design.kind.name} run; this is a {design.kind.name} design",
            where=f"{where}.run",
            fix="name a run of the same kind",
        )
    texts = store_texts(source / STORE_FILE, kind.text_rows, kind.text_calls)
    _check_locks(table.design_sha256, table.texts_sha256, run.design.sha256, texts, where)
    name = source.name
    difference = first_difference(text_view(run.design.spec), text_view(design.spec))
    if difference is not None:
        field = difference.split(".")[0].split("[")[0]
        raise LabError(
            f"a derived run reuses the texts of {name}: `{field}` differs from {name}'s design "
            f"(at {difference})",
            where=f"{design.path} {field}",
            fix=f"make it equal to {name}'s, or remove [derived_from] and make a new run",
        )
    _check_profiles(design, read_manifest(source).get("profiles") or {}, source)
    manifest = read_manifest(source)
    _check_inputs(design, kind, {*locked_inputs(source).values(), *recorded_hashes(manifest)}, name)
    _check_complete(design, kind, source)
    models = {k: manifest.get(k) for k in ("diarist_model", "chatbots")}
    return Reuse(
        source,
        run.design.sha256,
        texts,
        tuple(kind.text_rows),
        tuple(kind.text_calls),
        inline_ids(design),
        models,
    )


def _check_locks(
    design_sha: str | None, texts_sha: str | None, run_design: str, texts: Texts, where: str
) -> None:
    if design_sha is None or texts_sha is None:
        raise LabError(
            "the run reused is not locked by its hashes",
            where=where,
            fix=f'add design_sha256 = "{run_design}" and texts_sha256 = "{texts.sha256}" to '
            "[derived_from] (the run as it is now)",
        )
    if design_sha != run_design:
        raise LabError(
            f"the run's design is not the one locked (design sha256 {run_design[:12]}…, locked "
            f"{design_sha[:12]}…)",
            where=f"{where}.design_sha256",
            fix="name the run this design was written for, or lock this one's design sha256",
        )
    if texts_sha != texts.sha256:
        raise LabError(
            f"the run's texts changed since this design locked them (texts sha256 now "
            f"{texts.sha256[:12]}…, locked {texts_sha[:12]}…)",
            where=f"{where}.texts_sha256",
            fix="restore the run's store from its original, or make a new run",
        )


def _check_profiles(design: Design, recorded: Mapping[str, Any], source: Path) -> None:
    """Each profile steers as the run's did: a file's steering equals the run's record of it, an
    inline rule's (equal to the run's, as its design field) is the file the run made."""
    name = source.name
    where = f"{design.path} profiles"
    inline = set(inline_ids(design))
    refs = [r for r in design.kind.profile_refs(design) if r not in inline]
    mine: dict[str, Any] = {p.id: p.spec() for p in resolve_profiles(design, refs).values()}
    ids = set(profile_ids(design))
    if ids != set(recorded):
        raise LabError(
            f"a derived run reuses the texts of {name}: its profiles are "
            f"{', '.join(sorted(recorded))}, this design's {', '.join(sorted(ids))}",
            where=where,
            fix=f"name {name}'s profiles, or remove [derived_from] and make a new run",
        )
    for pid in sorted(ids):
        entry = recorded[pid]
        if pid in inline:
            made = source / PROFILES_DIR / f"{pid}.toml"
            if not isinstance(entry, dict) or entry.get("file") != f"{PROFILES_DIR}/{pid}.toml":
                raise LabError(
                    f"profile {pid!r} is an inline rule here but was not made by {name}",
                    where=where,
                    fix=f"name the profile file {name} used, or make a new run",
                )
            if not made.is_file() or file_sha256(made) != entry.get("file_sha256"):
                raise LabError(
                    f"{name}'s profile {pid!r} is missing or changed",
                    where=str(made),
                    fix="restore the run folder whole, or make a new run",
                )
            continue
        theirs = entry.get("steer") if isinstance(entry, dict) else None
        ours = json.loads(json.dumps(mine.get(pid)))
        if theirs != ours:
            at = first_difference(theirs, ours) or "steer"
            raise LabError(
                f"a derived run reuses the texts of {name}: profile {pid!r} steers differently "
                f"from {name}'s (at {at or 'steer'})",
                where=where,
                fix=f"use the profile {name} used, or remove [derived_from] and make a new run",
            )


def recorded_hashes(manifest: Any) -> set[str]:
    """Every file hash a manifest records (keys ending in sha256): a run records some inputs
    without copying them (the benchmark file, which may not be redistributable)."""
    found: set[str] = set()
    if isinstance(manifest, Mapping):
        for key, value in manifest.items():
            if isinstance(value, str) and str(key).endswith("sha256"):
                found.add(value)
            else:
                found |= recorded_hashes(value)
    elif isinstance(manifest, list):
        for value in manifest:
            found |= recorded_hashes(value)
    return found


def _check_inputs(design: Design, kind: ReuseSupport, have: set[str], name: str) -> None:
    """The data files the texts were made from are the ones the run locked or recorded by hash
    (by content: a user's file may sit elsewhere now)."""
    for path in kind.text_inputs(design):
        if not Path(path).is_file():
            continue  # a missing data file is refused where the kind reads it, naming its field
        if file_sha256(path) not in have:
            raise LabError(
                f"a derived run reuses the texts of {name}, which were made from another "
                f"version of this file",
                where=str(path),
                fix=f"restore the version {name} used (its folder holds a copy under inputs/), "
                "or make a new run",
            )


def _check_complete(design: Design, kind: ReuseSupport, source: Path) -> None:
    cells = design.kind.cells(design, profile_ids(design))
    needed = kind.text_ids(design, cells)
    for row_type in kind.text_rows:
        have = present_ids(source / STORE_FILE, row_type)
        missing = sorted(needed.get(row_type.TABLE, set()) - have)
        if missing:
            raise LabError(
                f"{source.name} holds {len(missing)} fewer {row_type.TABLE} than this design "
                f"needs (first: {missing[0]}): it is not finished",
                where=f"{design.path} derived_from.run",
                fix=f"finish it first (`diarylab run` of its design into {source}), then derive",
            )


@dataclass(frozen=True)
class ReuseSummary:
    """What `design check` says of a derived design: the run whose texts and profiles it
    copies, and per judge whether its readings are read from that run's calls or made."""

    source: Path
    lines: tuple[str, ...]


def reuse_summary(design: Design) -> ReuseSummary | None:
    """For `design check`: what a derived design copies, reuses and makes, per judge; None for a
    design that derives nothing. Raises what check_reuse raises, before anything is printed."""
    reuse = check_reuse(design)
    if reuse is None:
        return None
    name = reuse.source.name
    lines = [f"texts copied: {reuse.line()} — written again: none"]
    source = open_run_folder(reuse.source)
    source.store.close()
    theirs = {j.id: _judge_view(j) for j in source.design.spec.judges}
    readings = _readings_per_judge(design)
    reused, made = 0, 0
    for judge in design.spec.judges:
        count = f"{readings} readings" if readings is not None else "its readings"
        if theirs.get(judge.id) == _judge_view(judge):
            reused += readings or 0
            lines.append(
                f"judge {judge.id}: as in {name} — {count} reused: read from its stored calls "
                "(a prompt this design changes is read anew)"
            )
        else:
            made += readings or 0
            what = "changed" if judge.id in theirs else "new"
            lines.append(f"judge {judge.id}: {what} — {count} to make")
    if readings is not None:
        lines.append(
            f"in all: 0 texts to write, {reused} judge readings reused from {name}, "
            f"{made} to make (the plan's totals below count every reading; a reused one costs no "
            "model call)"
        )
    return ReuseSummary(reuse.source, tuple(lines))


def _judge_view(judge: Any) -> Any:
    data = judge.model_dump(mode="json")
    data.pop("endpoint", None)  # how the judge is reached, not what it reads
    return data


def _readings_per_judge(design: Design) -> int | None:
    from diarylab.experiments.engine.contract import PlanSupport

    kind = design.kind
    if not isinstance(kind, PlanSupport):
        return None
    work = cast(Any, kind).workload(design, kind.cells(design, profile_ids(design)))
    return int(sum(work.readings.values()))
