"""Resolving a model name (embedded default, local folder or hub id) to a loaded model."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.embedded import EMBEDDED_NAMES, embedded_model_folder
from diarylab.model_access.seed_tokenizers import seed_tokenizer

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.gguf", "*.pt", "*.pth")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are: what the user asked for and what from_pretrained receives."""

    spec: str
    location: str
    kind: str  # "embedded" | "folder" | "hub"
    gguf_file: str | None = None


def resolve(spec: str) -> ModelSource:
    if spec.lower() in EMBEDDED_NAMES:
        return ModelSource(spec, str(embedded_model_folder()), "embedded")
    path = Path(spec).expanduser()
    if path.exists():
        return _folder_source(spec, path)
    if HUB_ID.match(spec):
        return ModelSource(spec, spec, "hub")
    raise LabError(
        f"unknown model {spec!r}: not the embedded default, not an existing folder, "
        "not a hub id of the form owner/name",
        where="model",
        fix=f"use one of {', '.join(EMBEDDED_NAMES)}, a folder with weights, or a hub id",
    )


def load_tokenizer(spec: str) -> Any:
    """A tokenizer alone: the embedded default's, a folder or .gguf file holding tokenizer files
    (no weights needed: a client machine has only those of a 120B served judge), or a hub id
    already in the local hub cache (nothing is downloaded while a run reads); for a seed judge's
    hub id missing from that cache, the stand-in model_access/seed_tokenizers.py builds."""

    path = Path(spec).expanduser()
    kwargs: dict[str, Any] = {}
    hub = False
    if spec.lower() not in EMBEDDED_NAMES and path.exists():
        if path.is_file() and path.suffix == ".gguf":
            location, kwargs["gguf_file"] = str(path.parent), path.name
        elif path.is_dir():
            location = str(path)
        else:
            raise LabError(
                f"{spec} is neither a folder nor a .gguf file",
                where="judge tokenizer",
                fix="point at the folder holding tokenizer.json / tokenizer_config.json",
            )
    else:
        try:
            source = resolve(spec)  # the embedded default or a hub id; refuses anything else
        except LabError as exc:
            raise LabError(str(exc).split(" — fix: ")[0], where="judge tokenizer") from None
        location = source.location
        hub = source.kind == "hub"
        if hub:
            kwargs["local_files_only"] = True
    if hub and not _in_hub_cache(location):
        # Not cached: the seed judge's stand-in, found without importing transformers' model
        # code (which loads torch: planning and checking a design need neither).
        stand_in = seed_tokenizer(spec)
        if stand_in is not None:
            return stand_in
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(location, **kwargs)
    except (OSError, ValueError) as exc:
        # Not in the hub cache: a seed judge's tokenizer stands in, built from packages the lab
        # installs (model_access/seed_tokenizers.py; the tokenizer says it stood in).
        stand_in = seed_tokenizer(spec) if hub else None
        if stand_in is not None:
            return stand_in
        raise LabError(
            f"cannot load tokenizer {spec!r}: {str(exc).splitlines()[0][:300]}",
            where="judge tokenizer",
            fix="point at a folder with the judge's tokenizer files (tokenizer.json, "
            "tokenizer_config.json; no weights needed), or put the hub id's tokenizer in the "
            "local hub cache first (huggingface-cli download ID tokenizer.json "
            "tokenizer_config.json special_tokens_map.json)",
        ) from exc


def _in_hub_cache(repo: str) -> bool:
    """Whether the local hub cache holds the repository's tokenizer files."""
    from huggingface_hub import try_to_load_from_cache

    names = ("tokenizer_config.json", "tokenizer.json")
    return any(isinstance(try_to_load_from_cache(repo, name), str) for name in names)


def _folder_source(spec: str, path: Path) -> ModelSource:
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(spec, str(path.parent), "folder", gguf_file=path.name)
    if not path.is_dir():
        raise LabError(f"{path} is not a folder", where="model", fix="point at a model folder")
    weights = [p for pattern in WEIGHT_PATTERNS for p in path.glob(pattern)]
    if not weights:
        raise LabError(
            f"folder {path} has no model weights (*.safetensors, *.bin, *.gguf)",
            where="model",
            fix="point at a folder saved with save_pretrained, or download the weights first",
        )
    if not (path / "config.json").is_file():
        ggufs = [p for p in weights if p.suffix == ".gguf"]
        if len(ggufs) == 1:
            return ModelSource(spec, str(path), "folder", gguf_file=ggufs[0].name)
        raise LabError(f"folder {path} has no config.json", where="model", fix="re-save the model")
    return ModelSource(spec, str(path), "folder")


def pick_device(requested: str | None = None) -> torch.device:
    import torch  # here, not at the top: a design check must not pay for torch

    if requested:
        return torch.device(requested)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pick_dtype(device: torch.device, requested: str | torch.dtype | None = None) -> torch.dtype:
    import torch

    if isinstance(requested, torch.dtype):
        return requested
    if requested:
        names = {
            "bf16": torch.bfloat16,
            "bfloat16": torch.bfloat16,
            "fp16": torch.float16,
            "float16": torch.float16,
            "fp32": torch.float32,
            "float32": torch.float32,
        }
        if requested not in names:
            raise LabError(
                f"unknown dtype {requested!r}", where="dtype", fix="use bf16, fp16 or fp32"
            )
        return names[requested]
    # bf16 halves memory on GPUs; on CPU fp32 keeps results exact enough for tests and judges.
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")


def load_pretrained(
    source: ModelSource,
    *,
    device: torch.device,
    dtype: torch.dtype,
    revision: str | None = None,
    trust_remote_code: bool = False,
    placement: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """The model and its tokenizer. `placement` (model_access.placement.pretrained_kwargs:
    device_map, max_memory, offload_folder) spreads the model over devices; without it the
    whole model goes to `device`."""
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - transformers is a hard dependency
        raise LabError("transformers is not installed", fix="run the README's set-up") from exc
    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if revision:
        kwargs["revision"] = revision
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    if source.kind == "hub" and offline():
        kwargs["local_files_only"] = True
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(
            source.location, dtype=dtype, **kwargs, **(placement or {})
        )
    except OSError as exc:
        hint = (
            "download it first (huggingface-cli download) or unset HF_HUB_OFFLINE"
            if source.kind == "hub"
            else "check the folder's files"
        )
        raise LabError(
            f"could not load model {source.spec!r}: {exc}", where="model", fix=hint
        ) from exc
    except ValueError as exc:
        if "trust_remote_code" in str(exc):
            raise LabError(
                f"model {source.spec!r} needs its own code to load",
                where="model",
                fix="pass --trust-remote-code if you trust its authors",
            ) from exc
        if placement and "offload" in str(exc):
            raise LabError(
                f"the device map puts weights of {source.spec!r} on disk, and this checkpoint "
                "is not safetensors, so they must be written out first",
                where="local.offload_folder",
                fix="set local.offload_folder to a folder with room for them, or give the "
                "model more device memory (max_memory)",
            ) from exc
        raise
    if not placement:  # a mapped model is already where accelerate put each module
        model.to(device)  # type: ignore[arg-type]
    model.eval()
    return model, tokenizer
