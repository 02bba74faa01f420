"""Profiles: how a diarist writes. One type, `Profile`, loaded and checked once: `unsteered` is
built in; a steered profile comes from a profile file (written by `diarylab steer calibrate`, or
by a run from a design's inline profile rule) naming a pattern, a vector file by path and
sha256, and the steer settings:

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

    [calibration]               # optional: how the setting was chosen (free-form record)

Loading a file loads its vector (checking the hash, the pattern and the layers) and builds the
Steer; whether the vector belongs to the model that writes is checked when the model is known."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from diarylab.foundation.datafiles import DataModel, Slug, file_sha256, load_data
from diarylab.foundation.errors import LabError
from diarylab.steering.settings import SteerSettings

if TYPE_CHECKING:
    # torch comes with these; a design check that loads no vector must not wait for it
    from diarylab.model_access.local import ModelInfo
    from diarylab.steering.apply import Steer

UNSTEERED_ID = "unsteered"
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class ProfileTable(SteerSettings):
    id: Slug
    version: int = Field(1, ge=1)
    pattern: Slug
    vector: str = Field(min_length=1, description="vector file, relative to this file's folder")
    vector_sha256: Sha256


class ProfileFile(DataModel):
    profile: ProfileTable
    calibration: dict[str, str | int | float | bool] = {}


@dataclass(frozen=True, eq=False)
class Profile:
    id: str
    pattern: str | None = None
    steer: Steer | None = None
    path: Path | None = None  # the profile file; None for the built-in unsteered profile
    sha256: str | None = None  # of the profile file
    vector_path: Path | None = None  # the vector's tensor file
    calibration: Mapping[str, Any] | None = None

    @property
    def steered(self) -> bool:
        return self.steer is not None

    def spec(self) -> dict[str, Any] | None:
        """What identifies this profile's steering in cache keys and manifests."""
        return self.steer.spec() if self.steer else None

    def check_model(self, info: ModelInfo) -> None:
        """Refuse a vector extracted on another model than the one that will write."""
        if self.steer is not None:
            self.steer.vector.check_model(info, where=str(self.path or self.id))

    def check_model_spec(self, model_spec: str, where: str) -> None:
        """The same check by name, before the model is loaded."""
        if self.steer is not None and self.steer.vector.model_spec != model_spec:
            raise LabError(
                f"profile {self.id!r} steers with a vector made on "
                f"{self.steer.vector.model_spec!r}, but the diarists are written by "
                f"{model_spec!r}",
                where=where,
                fix="extract a vector on the diarist model (diarylab steer extract, or an inline "
                "[[profiles]] rule in the design) or change [diarist_model].model",
            )


UNSTEERED = Profile(id=UNSTEERED_ID)


def load_profile(path: str | Path) -> Profile:
    """The built-in `unsteered`, or a profile file with its vector loaded and checked."""
    if str(path) == UNSTEERED_ID:
        return UNSTEERED
    path = Path(path)
    if path.suffix != ".toml":
        raise LabError(
            f"unknown profile {str(path)!r}",
            where="profile",
            fix='write "unsteered", a profile file path (.toml), or the id of an inline '
            "[[profiles]] rule of the design",
        )
    data, _ = load_data(path, ProfileFile)
    head = data.profile
    from diarylab.steering.apply import Steer
    from diarylab.steering.vectors import PatternVector, vector_paths

    where = f"{path} [profile].vector"
    vector_path = Path(head.vector)
    if not vector_path.is_absolute():
        # normalised, so that messages name the vector as a plain path (no "profiles/../")
        vector_path = Path(os.path.normpath(path.parent / vector_path))
    if not vector_paths(vector_path)[0].is_file():
        raise LabError(
            f"vector file {vector_paths(vector_path)[0]} not found",
            where=where,
            fix="run `diarylab steer extract` (vectors live under results/, not in git) "
            "or fix the path",
        )
    vector = PatternVector.load(vector_path, expect_sha256=head.vector_sha256)
    if vector.pattern_id != head.pattern:
        raise LabError(
            f"vector is for pattern {vector.pattern_id!r}, the profile says {head.pattern!r}",
            where=where,
            fix="point at the pattern's own vector or correct pattern",
        )
    for layer in head.layers:
        vector.check_layer(layer, where=f"{path} [profile].layers")
    return Profile(
        id=head.id,
        pattern=head.pattern,
        steer=Steer.of(vector, head),
        path=path,
        sha256=file_sha256(path),
        vector_path=vector_paths(vector_path)[0],
        calibration=dict(data.calibration),
    )


def write_profile(
    path: Path,
    *,
    profile_id: str,
    pattern: str,
    vector: Path,
    vector_sha256: str,
    steer: SteerSettings,
    calibration: Mapping[str, str | int | float | bool] | None = None,
) -> Path:
    """Write a profile file (atomically); the vector path is stored relative to the profile's
    folder so the pair can be moved together."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rel = os.path.relpath(Path(vector).resolve(), path.parent.resolve())
    lines = [
        "# A diarist profile, written by diarylab. Paths are relative to this file.",
        "# Edit strength or layers by hand only together with a new calibration note.",
        "[profile]",
        f"id = {_toml(profile_id)}",
        "version = 1",
        f"pattern = {_toml(pattern)}",
        f"vector = {_toml(rel)}",
        f"vector_sha256 = {_toml(vector_sha256)}",
        f"layers = [{', '.join(str(int(x)) for x in steer.layers)}]",
        f"strength = {float(steer.strength)!r}",
        f"scale = {_toml(steer.scale)}",
        f"positions = {_toml(steer.positions)}",
    ]
    if calibration:
        lines += ["", "[calibration]"] + [f"{k} = {_toml(v)}" for k, v in calibration.items()]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _toml(value: str | int | float | bool) -> str:
    # JSON's string escapes are valid TOML basic-string escapes; numbers print the same.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else '"nan"'
    return json.dumps(value, ensure_ascii=False)
