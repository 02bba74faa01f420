"""Profiles: how a diarist writes. `unsteered` is built in; a steered profile is a TOML file
(usually written by `diarylab steer calibrate`) naming a pattern, a vector file by path and
sha256, and the layers, strength, scale and positions to steer with.

    [profile]
    id = "social_isolation"
    version = 1
    pattern = "social_isolation"
    vector = "social_isolation.safetensors"   # relative to this file's folder
    vector_sha256 = "…"
    layers = [20]
    strength = 0.45
    scale = "relative"          # relative | raw
    positions = "response"      # prompt | response | both
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any, get_args

from foundation.datafiles import field, file_sha256, load_toml, table
from foundation.errors import LabError
from model_access.local import ModelInfo
from steering.apply import Positions, Scale, Steer
from steering.vectors import PatternVector, vector_paths

PROFILES_DIR = Path(__file__).parent / "profiles"
UNSTEERED_ID = "unsteered"


@dataclass(frozen=True)
class Profile:
    id: str
    pattern: str | None = None
    vector_path: Path | None = None
    vector_sha256: str | None = None
    layers: tuple[int, ...] = ()
    strength: float = 0.0
    scale: Scale = "relative"
    positions: Positions = "response"
    version: int = 1
    sha256: str | None = None  # of the profile file; None for the built-in one
    path: Path | None = None
    extra: Mapping[str, Any] = dc_field(default_factory=dict, compare=False, hash=False)

    @property
    def steered(self) -> bool:
        return self.vector_path is not None

    def load_vector(self) -> PatternVector | None:
        if self.vector_path is None:
            return None
        where = f"{self.path} [profile] vector" if self.path else f"profile {self.id}"
        if not vector_paths(self.vector_path)[0].is_file():
            raise LabError(
                f"vector file {self.vector_path} not found",
                where=where,
                fix="run `diarylab steer extract` (vectors live under results/, not in git) "
                "or fix the path",
            )
        vector = PatternVector.load(self.vector_path, expect_sha256=self.vector_sha256)
        if vector.pattern_id != self.pattern:
            raise LabError(
                f"vector is for pattern {vector.pattern_id!r}, the profile says {self.pattern!r}",
                where=where,
            )
        return vector

    def steer(self, info: ModelInfo | None = None) -> Steer | None:
        """The Steer this profile writes with (None when unsteered); with `info`, also check
        that the vector belongs to that model."""
        vector = self.load_vector()
        if vector is None:
            return None
        if info is not None:
            vector.check_model(info, where=str(self.path or self.id))
        return Steer(vector, self.layers, self.strength, self.scale, self.positions)


UNSTEERED = Profile(id=UNSTEERED_ID)


def available_profiles(folder: Path = PROFILES_DIR) -> list[str]:
    return [UNSTEERED_ID, *sorted(p.stem for p in folder.glob("*.toml"))]


def load_profile(path_or_id: str | Path, folder: Path = PROFILES_DIR) -> Profile:
    """The built-in `unsteered`, a profile in diarists/profiles/ by id, or a file by path."""
    if str(path_or_id) == UNSTEERED_ID:
        return UNSTEERED
    path = Path(path_or_id)
    if path.suffix != ".toml":
        if not (folder / f"{path_or_id}.toml").is_file():
            raise LabError(
                f"unknown profile {str(path_or_id)!r}",
                where="profile",
                fix=f"choose from {', '.join(available_profiles(folder))} or give a path to a "
                "profile .toml (written by `diarylab steer calibrate`)",
            )
        path = folder / f"{path_or_id}.toml"
    where = f"{path} [profile]"
    data = load_toml(path)
    head = table(data, "profile", str(path))
    scale = field(head, "scale", str, where, "relative")
    positions = field(head, "positions", str, where, "response")
    if scale not in get_args(Scale):
        raise LabError(f"unknown scale {scale!r}", where=where, fix="use 'relative' or 'raw'")
    if positions not in get_args(Positions):
        raise LabError(
            f"unknown positions {positions!r}", where=where, fix="use prompt, response or both"
        )
    layers = field(head, "layers", list, where)
    if not layers or not all(isinstance(x, int) and not isinstance(x, bool) for x in layers):
        raise LabError("layers must be a non-empty list of integers", where=where)
    strength = field(head, "strength", float, where)
    if not math.isfinite(strength):
        raise LabError(f"strength {strength} is not finite", where=where)
    sha = field(head, "vector_sha256", str, where)
    if len(sha) != 64:
        raise LabError("vector_sha256 must be 64 hex digits", where=where)
    vector = Path(field(head, "vector", str, where))
    return Profile(
        id=field(head, "id", str, where),
        version=field(head, "version", int, where, 1),
        pattern=field(head, "pattern", str, where),
        vector_path=vector if vector.is_absolute() else (path.parent / vector),
        vector_sha256=sha,
        layers=tuple(layers),
        strength=strength,
        scale=scale,  # type: ignore[arg-type]
        positions=positions,  # type: ignore[arg-type]
        sha256=file_sha256(path),
        path=path,
        extra={k: v for k, v in data.items() if k != "profile"},
    )


def write_profile(
    path: Path,
    *,
    profile_id: str,
    pattern: str,
    vector: Path,
    vector_sha256: str,
    layers: tuple[int, ...],
    strength: float,
    scale: str,
    positions: str,
    calibration: Mapping[str, str | int | float] | None = None,
) -> Path:
    """Write a profile file; the vector path is stored relative to the profile's folder so the
    pair can be moved together."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    rel = os.path.relpath(Path(vector).resolve(), path.parent.resolve())
    lines = [
        "# A diarist profile, written by `diarylab steer calibrate`. Paths are relative to this",
        "# file. Edit strength or layers by hand only together with a new calibration note.",
        "[profile]",
        f"id = {_toml(profile_id)}",
        "version = 1",
        f"pattern = {_toml(pattern)}",
        f"vector = {_toml(rel)}",
        f"vector_sha256 = {_toml(vector_sha256)}",
        f"layers = [{', '.join(str(int(x)) for x in layers)}]",
        f"strength = {float(strength)!r}",
        f"scale = {_toml(scale)}",
        f"positions = {_toml(positions)}",
    ]
    if calibration:
        lines += ["", "[calibration]"] + [f"{k} = {_toml(v)}" for k, v in calibration.items()]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _toml(value: str | int | float) -> str:
    # JSON's string escapes are valid TOML basic-string escapes; numbers print the same.
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else '"nan"'
    return json.dumps(value, ensure_ascii=False)
