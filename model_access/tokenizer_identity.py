"""What `load_tokenizer(spec)` would load, named without loading it: a string that changes
whenever the tokenizer it loads could change. The plan keeps figures worked out with a
tokenizer under this name (experiments/planning/cost_cache.py), so that checking or planning a
design a second time need not load a judge's 200,000-id vocabulary again."""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from diarylab.model_access.embedded import EMBEDDED_NAMES, embedded_model_folder
from diarylab.model_access.seed_tokenizers import CONVERTED_FORMAT, stand_in_for

# The files a tokenizer is read from (transformers' names, Mistral's, sentencepiece's).
TOKENIZER_FILES = (
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab*",
    "merges.txt",
    "chat_template*",
    "tekken.json",
    "*.model",
)


def tokenizer_identity(spec: str) -> str | None:
    """None where that cannot be told without loading (a name load_tokenizer refuses, or a hub
    id neither cached nor stood in for): then nothing is kept under it."""
    if spec.lower() in EMBEDDED_NAMES:
        return "folder:" + _folder_digest(embedded_model_folder())
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        stat = path.stat()
        return f"gguf:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if path.is_dir():
        return "folder:" + _folder_digest(path)
    snapshot = _hub_snapshot(spec)
    if snapshot is not None:
        return "folder:" + _folder_digest(snapshot)
    entry = stand_in_for(spec)
    if entry is None:
        return None
    # The stand-in is converted from files these packages ship, by these converters.
    packages = ("transformers", "tokenizers", "mistral_common", "litellm", "openai_harmony")
    return f"stand-in:{entry.build}:{CONVERTED_FORMAT}:" + ":".join(map(_version, packages))


def _hub_snapshot(repo: str) -> Path | None:
    from huggingface_hub import try_to_load_from_cache

    for name in ("tokenizer_config.json", "tokenizer.json"):
        found = try_to_load_from_cache(repo, name)
        if isinstance(found, str):
            return Path(found).parent
    return None


def _folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    files = sorted({p for pattern in TOKENIZER_FILES for p in folder.glob(pattern) if p.is_file()})
    for file in files:
        digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _version(package: str) -> str:
    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return "-"
