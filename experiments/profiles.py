"""Resolving a design's profiles: "unsteered", a profile id from diarists/profiles/, or a
profile file path relative to the design file. Checked before anything runs: the file exists,
its vector exists, matches its hash, belongs to the design's diarist model and has the layers."""

from __future__ import annotations

from pathlib import Path

from diarists.profiles import UNSTEERED_ID, Profile, load_profile
from experiments.conversations import DiaristProfile
from experiments.design import Design
from foundation.errors import LabError
from model_access.local import LocalModel


def _load(design: Design, entry: str) -> Profile:
    if entry == UNSTEERED_ID or not entry.endswith(".toml"):
        return load_profile(entry)
    path = Path(entry)
    if not path.is_absolute():
        path = design.path.parent / path
    if not path.is_file():
        raise LabError(
            f"profile file {entry!r} not found (looked at {path})",
            where=f"{design.path} [cast].profiles",
            fix="fix the path (relative to the design file) or write the profile with "
            "`diarylab steer calibrate`",
        )
    return load_profile(path)


def load_design_profiles(design: Design) -> list[Profile]:
    profiles = [_load(design, entry) for entry in design.profiles]
    ids = [p.id for p in profiles]
    if len(set(ids)) != len(ids):
        raise LabError(
            f"two profiles share an id ({', '.join(ids)})",
            where=f"{design.path} [cast].profiles",
            fix="give each profile its own id",
        )
    return profiles


def check_profiles(design: Design) -> list[str]:
    """Validate without loading the diarist model; returns the profile ids in design order."""
    for profile in load_design_profiles(design):
        vector = profile.load_vector()
        if vector is None:
            continue
        if vector.model_spec != design.diarist_model.model:
            raise LabError(
                f"profile {profile.id!r} steers with a vector made on {vector.model_spec!r}, "
                f"but the diarists are written by {design.diarist_model.model!r}",
                where=f"{design.path} [cast].profiles",
                fix="extract a vector on the diarist model (diarylab steer extract) or change "
                "[diarist_model].model",
            )
        for layer in profile.layers:
            vector.check_layer(layer, where=f"{profile.path} [profile].layers")
    return [p.id for p in load_design_profiles(design)]


def resolve_profiles(design: Design, model: LocalModel) -> dict[str, DiaristProfile]:
    check_profiles(design)
    return {
        p.id: DiaristProfile(p.id, p.pattern, p.steer(model.info()))
        for p in load_design_profiles(design)
    }
