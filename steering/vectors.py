"""Pattern vector files: one direction per layer, with the statistics that make a strength
meaningful, bound to the model they were extracted from.

A vector lives in two files: `NAME.safetensors` (tensors only, no pickle) and `NAME.json` (what
it is, which model it belongs to, how it was made, and the sha256 of the tensor file). Loading
checks the hash, so a profile that names a vector by hash gets exactly those numbers."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from diarylab.foundation.datafiles import file_sha256
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import ModelInfo

FORMAT = "diarylab-pattern-vector"
FORMAT_VERSION = 1
_TENSORS = ("directions", "diff_norms", "residual_norms", "residual_norm_sds")
# The sidecar's scalar fields, by their annotation (the module's annotations are strings).
_META_TYPES: dict[str, type] = {"int": int, "str": str, "str | None": str}
_TYPE_WORDS = {int: "an integer", str: "a string"}


@dataclass(frozen=True, eq=False)  # eq=False: tensors have no single truth value
class PatternVector:
    """Per-layer steering directions for one pattern on one model.

    directions[l] is the unit vector along mean(positive) − mean(negative) of decoder block l's
    output over response tokens; diff_norms[l] is that difference's length, residual_norms[l] the
    mean length of the block's output itself (so a relative strength of 1.0 adds a vector as long
    as a typical residual)."""

    pattern_id: str
    pattern_sha256: str
    model_spec: str
    model_revision: str | None
    tokenizer_sha256: str
    hidden_size: int
    num_layers: int
    directions: torch.Tensor  # [num_layers, hidden_size], float32, unit rows
    diff_norms: torch.Tensor  # [num_layers], float32
    residual_norms: torch.Tensor  # [num_layers], float32
    residual_norm_sds: torch.Tensor  # [num_layers], float32
    pairs: int
    max_new_tokens: int
    seed: int
    created: str  # ISO 8601 date-time, UTC
    notes: str = ""

    def __post_init__(self) -> None:
        shape = (self.num_layers, self.hidden_size)
        if tuple(self.directions.shape) != shape:
            raise ValueError(f"directions shape {tuple(self.directions.shape)} != {shape}")
        for name in _TENSORS[1:]:
            if tuple(getattr(self, name).shape) != (self.num_layers,):
                raise ValueError(f"{name} must have shape ({self.num_layers},)")

    # ----------------------------------------------------------------- per-layer views
    def unit(self, layer: int) -> torch.Tensor:
        self.check_layer(layer)
        return self.directions[layer]

    def raw(self, layer: int) -> torch.Tensor:
        """The mean difference itself (unit direction × its length)."""
        self.check_layer(layer)
        return self.directions[layer] * self.diff_norms[layer]

    def check_layer(self, layer: int, *, where: str = "steering layer") -> None:
        if not 0 <= layer < self.num_layers:
            raise LabError(
                f"layer {layer} does not exist: the vector for {self.model_spec!r} has layers "
                f"0..{self.num_layers - 1}",
                where=where,
                fix=f"pick a layer between 0 and {self.num_layers - 1}",
            )

    def check_model(self, info: ModelInfo, *, where: str = "pattern vector") -> None:
        """Refuse to steer a model the vector was not extracted from: another tokenizer means
        another model family, and another width or depth means the directions cannot apply."""
        problems = []
        if info.hidden_size != self.hidden_size:
            problems.append(f"hidden size {self.hidden_size} vs the model's {info.hidden_size}")
        if info.num_layers != self.num_layers:
            problems.append(f"{self.num_layers} layers vs the model's {info.num_layers}")
        if info.tokenizer_sha256 != self.tokenizer_sha256:
            problems.append("a different tokenizer")
        if problems:
            raise LabError(
                f"vector was extracted from {self.model_spec!r}, not {info.spec!r}: "
                + "; ".join(problems),
                where=where,
                fix=f"extract a vector for {info.spec!r} with `diarylab steer extract`",
            )

    def content_sha256(self) -> str:
        """A hash of the numbers and metadata, the same before and after a save/load round trip
        (the file hash also covers the safetensors header layout). The creation time is left
        out: it says when, not what, and steered call keys hold this hash, so two runs of one
        design (or a run and its kill-and-resume twin) that make the same vector share keys."""
        meta = {k: v for k, v in self.metadata().items() if k != "created"}
        digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode("utf-8"))
        for name in _TENSORS:
            digest.update(getattr(self, name).detach().to("cpu", torch.float32).numpy().tobytes())
        return digest.hexdigest()

    # ----------------------------------------------------------------- files
    def metadata(self) -> dict[str, Any]:
        meta = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _TENSORS}
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **meta}

    def save(self, path: str | Path) -> str:
        """Write NAME.safetensors and NAME.json; return the tensor file's sha256."""
        from safetensors.torch import save_file

        tensors_path, meta_path = vector_paths(path)
        tensors_path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {
            n: getattr(self, n).detach().to("cpu", torch.float32).contiguous() for n in _TENSORS
        }
        # Write both files under temporary names and rename, so a crash leaves no half vector.
        tmp_tensors = tensors_path.with_name(tensors_path.name + ".tmp")
        tmp_meta = meta_path.with_name(meta_path.name + ".tmp")
        save_file(tensors, str(tmp_tensors), metadata={"format": FORMAT})
        sha = file_sha256(tmp_tensors)
        meta = {**self.metadata(), "tensors_file": tensors_path.name, "tensors_sha256": sha}
        tmp_meta.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp_tensors.replace(tensors_path)
        tmp_meta.replace(meta_path)
        return sha

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        expect_sha256: str | None = None,
        model: ModelInfo | None = None,
    ) -> PatternVector:
        """Read a vector, checking its hash (and, given `model`, that it belongs to it)."""
        vector = cls._read(path, expect_sha256)
        if model is not None:
            vector.check_model(model, where=str(vector_paths(path)[0]))
        return vector

    @classmethod
    def _read(cls, path: str | Path, expect_sha256: str | None) -> PatternVector:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        tensors_path, meta_path = vector_paths(path)
        where = str(tensors_path)
        for p in (tensors_path, meta_path):
            if not p.is_file():
                raise LabError(
                    f"missing {p.name}",
                    where=str(p),
                    fix="a vector is two files, NAME.safetensors and NAME.json; make one with "
                    "`diarylab steer extract`",
                )
        remake = "re-extract the vector with `diarylab steer extract` (or restore both files)"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LabError(
                f"unreadable metadata ({exc})", where=str(meta_path), fix=remake
            ) from exc
        if not isinstance(meta, dict):
            raise LabError(
                f"metadata is not a JSON object (got {type(meta).__name__})",
                where=str(meta_path),
                fix=remake,
            )
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise LabError(
                f"not a {FORMAT} v{FORMAT_VERSION} file",
                where=str(meta_path),
                fix="re-extract the vector with this version of diarylab",
            )
        sha = file_sha256(tensors_path)
        if sha != meta.get("tensors_sha256"):
            raise LabError(
                "tensor file does not match the sha256 in its metadata (changed or corrupted)",
                where=where,
                fix="re-extract the vector",
            )
        if expect_sha256 is not None and sha != expect_sha256:
            raise LabError(
                f"vector sha256 is {sha[:12]}…, expected {expect_sha256[:12]}…",
                where=where,
                fix="point at the vector the profile was calibrated with, or re-calibrate",
            )
        try:
            tensors = load_file(str(tensors_path))
        except SafetensorError as exc:
            raise LabError(f"unreadable safetensors file ({exc})", where=where, fix=remake) from exc
        missing = [n for n in _TENSORS if n not in tensors]
        if missing:
            raise LabError(f"tensor file lacks {', '.join(missing)}", where=where, fix=remake)
        names = {f.name for f in fields(cls)} - set(_TENSORS)
        absent = sorted(n for n in names if n not in meta and n != "notes")
        if absent:
            raise LabError(f"metadata lacks {', '.join(absent)}", where=str(meta_path), fix=remake)
        for f in fields(cls):
            want = _META_TYPES.get(str(f.type))
            value = meta.get(f.name)
            if want is None or (value is None and f.name in ("model_revision", "notes")):
                continue
            if not isinstance(value, want) or isinstance(value, bool):
                raise LabError(
                    f"metadata field {f.name} should be {_TYPE_WORDS[want]} (got {value!r})",
                    where=str(meta_path),
                    fix=remake,
                )
        try:
            values: dict[str, Any] = {n: meta[n] for n in names if n in meta}
            values.update({n: tensors[n] for n in _TENSORS})
            return cls(**values)
        except ValueError as exc:
            raise LabError(
                f"inconsistent vector ({exc})",
                where=where,
                fix="the tensor file and its metadata disagree: " + remake,
            ) from exc

    def describe(self) -> str:
        """Human-readable summary: what, for which model, how made, and per-layer norms."""
        lines = [
            f"pattern      {self.pattern_id} (pattern file sha256 {self.pattern_sha256[:12]}…)",
            f"model        {self.model_spec} revision={self.model_revision} "
            f"tokenizer={self.tokenizer_sha256[:12]}…",
            f"shape        {self.num_layers} layers × {self.hidden_size}",
            f"made         {self.created}: {self.pairs} pairs, {self.max_new_tokens} new tokens, "
            f"seed {self.seed}",
            "",
            "layer  residual norm (sd)   raw diff norm   diff / residual",
        ]
        for layer in range(self.num_layers):
            res = float(self.residual_norms[layer])
            sd = float(self.residual_norm_sds[layer])
            diff = float(self.diff_norms[layer])
            ratio = diff / res if res > 0 and math.isfinite(res) else float("nan")
            lines.append(f"{layer:5d}  {res:11.2f} ({sd:6.2f})  {diff:14.2f}  {ratio:15.3f}")
        return "\n".join(lines)


def vector_paths(path: str | Path) -> tuple[Path, Path]:
    """(NAME.safetensors, NAME.json) for a path given with either suffix or none."""
    path = Path(path)
    if path.suffix in (".safetensors", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".safetensors"), path.with_name(path.name + ".json")


def random_vector(
    info: ModelInfo, *, seed: int = 0, residual_norm: float = 10.0, pattern_id: str = "random"
) -> PatternVector:
    """A vector with random directions for a model: no meaning, for tests and speed checks."""
    from datetime import UTC, datetime

    gen = torch.Generator().manual_seed(seed)
    directions = torch.randn(info.num_layers, info.hidden_size, generator=gen)
    directions = directions / directions.norm(dim=-1, keepdim=True)
    layers = info.num_layers
    return PatternVector(
        pattern_id=pattern_id,
        pattern_sha256="0" * 64,
        model_spec=info.spec,
        model_revision=info.revision,
        tokenizer_sha256=info.tokenizer_sha256,
        hidden_size=info.hidden_size,
        num_layers=layers,
        directions=directions,
        diff_norms=torch.rand(layers, generator=gen) * residual_norm / 4 + 1e-3,
        residual_norms=torch.full((layers,), float(residual_norm)),
        residual_norm_sds=torch.ones(layers),
        pairs=0,
        max_new_tokens=0,
        seed=seed,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        notes="random directions, no meaning",
    )
