"""Which profiles a design names, and the profile files it points at: loaded and checked once
per loaded design, their ids in design order, and how the manifest records them. Kept apart from
making inline profiles (experiments/profiles/making.py) so that `design check` and `plan` read
profile files without loading the model machinery (torch) that making one needs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from diarylab.diarists.profiles import UNSTEERED, UNSTEERED_ID, Profile, load_profile
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.design import ProfileRule
from diarylab.foundation.errors import LabError


def describe_profiles(
    design: Design, refs: Sequence[str], copied_from: Path | None = None
) -> list[str]:
    """One line per profile for `design check`: checked files, and what inline rules will make
    — or, for a derived design (`copied_from`), that the run's own profile is copied."""
    lines = []
    for profile in _file_profiles(design, refs).values():
        lines.append(f"profile {profile.id}: {profile.path} (vector checked)")
    for ref in refs:
        rule = design.spec.profile_rule(ref)
        if rule is None:
            continue
        if copied_from is not None:
            lines.append(
                f"profile {rule.id}: copied from {copied_from.name} (its profiles/{rule.id}.toml, "
                "vector and calibration record) — not made again"
            )
            continue
        what = (
            f"extract a {rule.pattern} vector ({rule.extraction.pairs} pairs) on the diarist model"
        )
        if rule.calibration:
            c = rule.calibration
            what += (
                f", then calibrate layers {c.layers} × strengths {c.strengths} with judge "
                f"{c.judge!r} (coherence floor {c.floor:g})"
            )
        elif rule.steer:
            what += f", then steer layers {rule.steer.layers} at {rule.steer.strength:g}"
        lines.append(f"profile {rule.id}: will be made by `run` — {what}")
    return lines


def _file_profiles(design: Design, refs: Sequence[str]) -> dict[str, Profile]:
    return dict(_load_file_profiles(design, tuple(refs)))


@lru_cache(maxsize=16)
def _load_file_profiles(design: Design, refs: tuple[str, ...]) -> dict[str, Profile]:
    """Each profile file and its vector are read and checked once per loaded design."""
    out: dict[str, Profile] = {}
    for ref in refs:
        if ref == UNSTEERED_ID or design.spec.profile_rule(ref) is not None:
            continue
        path = Path(ref)
        if not path.is_absolute():
            path = design.path.parent / path
        if not path.is_file():
            raise LabError(
                f"profile file {ref!r} not found (looked at {path})",
                where=f"{design.path} cast.profiles",
                fix="fix the path (relative to the design file), write the profile with "
                "`diarylab steer calibrate`, or declare it inline as a [[profiles]] rule",
            )
        profile = load_profile(path)
        profile.check_model_spec(design.spec.writer.model, where=f"{design.path} cast.profiles")
        out[ref] = profile
    return out


def resolve_profiles(
    design: Design,
    refs: Sequence[str],
    *,
    make_inline: Callable[[ProfileRule], Profile] | None = None,
) -> dict[str, Profile]:
    """Profile id → Profile, in design order; inline rules are made by `make_inline` (the
    run), and without it are refused (use describe_profiles to say what will be made)."""
    files = _file_profiles(design, refs)
    out: dict[str, Profile] = {}
    for ref in refs:
        rule = design.spec.profile_rule(ref)
        if ref == UNSTEERED_ID:
            profile = UNSTEERED
        elif rule is not None:
            if make_inline is None:
                raise LabError(f"profile {ref!r} is made by a run", where="profiles")
            profile = make_inline(rule)
        else:
            profile = files[ref]
        if profile.id in out:
            raise LabError(
                f"two profiles share the id {profile.id!r}",
                where=f"{design.path} cast.profiles",
                fix="give each profile its own id",
            )
        out[profile.id] = profile
    return out


def profile_ids(design: Design) -> list[str]:
    """The design's profile ids in design order, without making inline profiles (files are
    loaded and checked; an inline rule's id is its own)."""
    refs = design.kind.profile_refs(design)
    files = _file_profiles(design, refs)
    ids = [files[r].id if r in files else r for r in refs]
    if len(set(ids)) != len(ids):
        raise LabError(
            f"two profiles share an id ({', '.join(ids)})",
            where=f"{design.path} cast.profiles",
            fix="give each profile its own id",
        )
    design.spec.check_hypotheses(ids)
    return ids


def profiles_manifest(profiles: dict[str, Profile], folder: Path | None = None) -> dict[str, Any]:
    return {
        pid: None
        if not p.steered
        else {
            "steer": p.spec(),
            "file": _place(p.path, folder),
            "file_sha256": p.sha256,
            "calibration": dict(p.calibration or {}),
        }
        for pid, p in profiles.items()
    }


def _place(path: Path | None, folder: Path | None) -> str | None:
    """A profile file as the manifest names it: relative to the run folder when the run made it
    there (the folder moves), else absolute — never relative to where the command ran."""
    if path is None:
        return None
    path = Path(path).resolve()
    if folder is not None and path.is_relative_to(Path(folder).resolve()):
        return path.relative_to(Path(folder).resolve()).as_posix()
    return str(path)
