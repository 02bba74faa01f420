"""What the Hugging Face hub knows of a model id before anything is loaded: its config.json,
from the local hub cache, or from the hub itself when it can be reached. A check reads the
number of layers from it, so a misspelt id or a layer the model lacks is refused before a GPU
is touched. Only config.json is ever fetched (a few kilobytes; `run` would fetch it anyway)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.loading import ModelSource, offline

CONFIG = "config.json"
# Seconds the hub may take to answer for one config.json: a check must not hang on a network
# that is down, and a reachable hub answers in well under this.
HUB_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ModelFacts:
    """What a model's config says that a design's numbers must fit; None where it says nothing
    (a GGUF folder has no config.json)."""

    spec: str
    layers: int | None
    known: bool = True  # False: a hub id the cache lacks, left unchecked (the hub not asked)


def hub_cache() -> Path:
    """The hub cache as the environment names it now (huggingface_hub reads it at import)."""
    if env := os.environ.get("HF_HUB_CACHE"):
        return Path(env)
    if home := os.environ.get("HF_HOME"):
        return Path(home) / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def model_facts(
    source: ModelSource, revision: str | None = None, *, ask_hub: bool = True
) -> ModelFacts:
    """The model's facts from its config.json: a folder's own, or a hub id's from the cache or
    (ask_hub) the hub. A hub id found in neither is one LabError that says which and what to
    do; without ask_hub it is returned as not known."""
    if source.kind != "hub":
        path = Path(source.location) / CONFIG
        return ModelFacts(source.spec, _layers(_read(path)) if path.is_file() else None)
    found = _cached_config(source.spec, revision)
    if found is None and not ask_hub:
        return ModelFacts(source.spec, None, known=False)
    if found is None:
        found = _hub_config(source.spec, revision)
    return ModelFacts(source.spec, _layers(_read(found)) if found else None)


def _cached_config(repo: str, revision: str | None) -> Path | None:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo, CONFIG, cache_dir=hub_cache(), revision=revision)
    except ValueError:  # an id huggingface_hub itself refuses (HFValidationError)
        return None
    return Path(found) if isinstance(found, str) else None


def _hub_config(repo: str, revision: str | None) -> Path | None:
    """config.json fetched from the hub; None for a repository without one (GGUF only)."""
    download = f"hf download {repo} {CONFIG}"
    if offline():
        raise LabError(
            f"model {repo!r} is not in the local hub cache ({hub_cache()}) and the hub can't be "
            "reached (HF_HUB_OFFLINE is set)",
            where="model",
            fix=f"check the id for a misspelling, or download it first ({download} for the check, "
            f"hf download {repo} for the run) on a machine with the hub",
        )
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        GatedRepoError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return Path(
            hf_hub_download(
                repo,
                CONFIG,
                revision=revision,
                cache_dir=hub_cache(),
                etag_timeout=HUB_TIMEOUT_S,
            )
        )
    except GatedRepoError:
        raise LabError(
            f"model {repo!r} is gated on the hub: this account has not been granted access",
            where="model",
            fix=f"accept its licence on https://huggingface.co/{repo} and log in "
            "(hf auth login, or HF_TOKEN)",
        ) from None
    except RepositoryNotFoundError:
        raise LabError(
            f"model {repo!r} is not on the hub (or is private)",
            where="model",
            fix="check the id for a misspelling (owner/name, as on huggingface.co), or log in "
            "if it is private",
        ) from None
    except RevisionNotFoundError:
        raise LabError(
            f"model {repo!r} has no revision {revision!r}",
            where="model",
            fix="check local.revision (a branch, tag or commit of the repository)",
        ) from None
    except RemoteEntryNotFoundError:
        return None  # a repository of GGUF files: nothing to read the layers from
    except OSError as exc:  # no connection (LocalEntryNotFoundError), or the hub failed
        raise LabError(
            f"model {repo!r} is not in the local hub cache ({hub_cache()}) and the hub can't be "
            f"reached ({type(exc).__name__})",
            where="model",
            fix=f"check the id for a misspelling, or download it first ({download}) where the "
            "hub can be reached",
        ) from None


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabError(
            f"unreadable {CONFIG} ({type(exc).__name__})",
            where=str(path),
            fix="download the model again (the cached file is damaged)",
        ) from None
    return data if isinstance(data, dict) else {}


def _layers(config: dict[str, Any]) -> int | None:
    """Decoder blocks, where the config names them: a multimodal model (Mistral-Small-3.1)
    keeps its language model's in text_config."""
    for table in (config, config.get("text_config") or {}):
        for key in ("num_hidden_layers", "n_layer", "num_layers"):
            value = table.get(key) if isinstance(table, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return None
