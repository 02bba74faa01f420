"""The seed judges' tokenizers with no hub access (model_access/seed_tokenizers.toml says which
hub ids, what stands in for them and why).

A served judge is read exactly by prompt tokens, so the client needs the judge's tokenizer; a
machine that plans or runs the shipped study usually has no hub cache. Both seed judges read
vocabularies that maintained packages already ship:

- tekken-v7 (Mistral Small 3 / 3.1): mistral-common's Tekken vocabulary, marked v7 (the instruct
  format those models read) and built into a transformers tokenizer by transformers' own tekken
  converter, with the chat template mistral-common writes for v7. The tokenizer's encoding of a
  chat equals mistral-common's `encode_chat_completion`
  (tests/model_access/test_seed_tokenizers.py).
- o200k-harmony (gpt-oss): tiktoken's o200k_base ranks from the copy in litellm's wheel, built by
  transformers' tiktoken converter, plus harmony's special tokens at the ids openai-harmony
  gives them. The tokenizer carries openai-harmony's encoding (`harmony_encoding`), and judge
  prompts for it are rendered by that library (rubric/judging/judge_render.py), the format's
  official
  renderer; its token ids equal this tokenizer's encoding of the rendered text.

Every stand-in says what it is (`stand_in`): the plan names it, and a judge's identity holds it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.datafiles import DataModel, NonEmpty, load_data
from diarylab.foundation.errors import LabError

STAND_INS_FILE = Path(__file__).with_name("seed_tokenizers.toml")
# litellm's wheel carries tiktoken's files under the names tiktoken caches them by (the sha1 of
# the public URL); this one is o200k_base.
O200K_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
TEKKEN_FILE = "tekken_240911.json"


class StandIn(DataModel):
    build: Literal["tekken-v7", "o200k-harmony"]
    hub_ids: Annotated[tuple[NonEmpty, ...], Field(strict=False)]
    why: NonEmpty


class StandInsFile(DataModel):
    version: int
    stand_ins: Annotated[tuple[StandIn, ...], Field(strict=False)]


def stand_in_for(hub_id: str) -> StandIn | None:
    for entry in load_data(STAND_INS_FILE, StandInsFile)[0].stand_ins:
        if hub_id in entry.hub_ids:
            return entry
    return None


def cache_dir() -> Path:
    base = os.environ.get("DIARYLAB_CACHE") or Path.home() / ".cache" / "diarylab"
    return Path(base) / "tokenizers"


def _package_file(package: str, *parts: str) -> Path:
    spec = find_spec(package)  # located, not imported (importing litellm reaches for the network)
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            f"the package {package} is not installed",
            where="judge tokenizer",
            fix=f"run scripts/setup-env.sh (it installs {package})",
        )
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.is_file():
        raise LabError(f"{package} no longer ships {'/'.join(parts)}", where="judge tokenizer")
    return path


@lru_cache(maxsize=4)
def seed_tokenizer(hub_id: str) -> Any | None:
    """The stand-in tokenizer for a seed judge's hub id, or None for any other id. Converting
    one takes about 5 s, so the converted tokenizer is kept on disk (cache_dir()/converted/)
    and later processes load it (about 1–2 s); in a process it is made once per id."""
    entry = stand_in_for(hub_id)
    if entry is None:
        return None
    tokenizer = converted(entry.build)
    tokenizer.stand_in = f"{entry.build} for {hub_id}"
    return tokenizer


# Bump when what _build makes changes: a converted tokenizer kept under an old number is not
# read again.
CONVERTED_FORMAT = 1


def converted_folder(kind: str) -> Path:
    """Where the converted tokenizer of `kind` is kept: named by a hash of what it is made
    from (the source vocabulary file, transformers' and tokenizers' versions, the format), so
    a changed source or converter never reads an old conversion."""
    import hashlib

    import tokenizers
    import transformers

    source = (
        _package_file("mistral_common", "data", TEKKEN_FILE)
        if kind == "tekken-v7"
        else _package_file("litellm", *_litellm_o200k())
    )
    digest = hashlib.sha256(source.read_bytes())
    digest.update(
        f"{CONVERTED_FORMAT}|{kind}|{transformers.__version__}|{tokenizers.__version__}".encode()
    )
    return cache_dir() / "converted" / f"{kind}-{digest.hexdigest()[:16]}"


def converted(kind: str) -> Any:
    """The tokenizer of `kind`, read from its converted copy, or built and the copy written
    (whole or not at all: written beside, then renamed)."""
    from transformers import PreTrainedTokenizerFast

    folder = converted_folder(kind)
    if (folder / "tokenizer.json").is_file():
        tokenizer = PreTrainedTokenizerFast.from_pretrained(str(folder))
    else:
        tokenizer = _build(kind)
        partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
        tokenizer.save_pretrained(str(partial))
        try:
            partial.rename(folder)
        except OSError:  # another process kept it first: theirs is the same
            import shutil

            shutil.rmtree(partial, ignore_errors=True)
    # where rubric/judging/vocab.py keeps what it works out of this vocabulary (about 1.5 s)
    tokenizer.vocab_facts_file = str(folder / "vocab_facts.json")
    if kind == "o200k-harmony":
        # not part of a saved tokenizer: the renderer the judge's prompts are made with
        tokenizer.harmony_encoding = harmony_encoding()
        tokenizer.eos_token = "<|return|>"
    return tokenizer


def _build(kind: str) -> Any:
    return tekken_v7() if kind == "tekken-v7" else o200k_harmony()


def tekken_v7() -> Any:
    from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer

    source = _package_file("mistral_common", "data", TEKKEN_FILE)
    folder = cache_dir() / "tekken-v7"
    target = folder / "tekken.json"
    if not target.exists():
        raw = json.loads(source.read_text(encoding="utf-8"))
        raw["config"]["version"] = "v7"  # the instruct format Mistral Small 3 / 3.1 read
        raw.pop("image", None)  # the judge reads text only
        write_atomic(target, json.dumps(raw))
    return convert_tekken_tokenizer(str(target))


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def harmony_encoding() -> Any:
    """openai-harmony's gpt-oss encoding, its o200k_base file read from litellm's copy."""
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    folder = cache_dir() / "o200k"
    named = folder / "o200k_base.tiktoken"
    if not named.exists():
        write_atomic(named, _package_file("litellm", *_litellm_o200k()).read_bytes())
    with _environment(TIKTOKEN_ENCODINGS_BASE=str(folder)):
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


def _litellm_o200k() -> tuple[str, ...]:
    return ("litellm_core_utils", "tokenizers", O200K_FILE)


def o200k_harmony() -> Any:
    from tiktoken_ext.openai_public import o200k_base
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    encoding = harmony_encoding()
    ranks_file = cache_dir() / "o200k" / "o200k_base.tiktoken"
    litellm_dir = str(_package_file("litellm", *_litellm_o200k()).parent)
    with _environment(TIKTOKEN_CACHE_DIR=litellm_dir):
        pattern = o200k_base()["pat_str"]  # tiktoken's own definition, read from that cache
    backend = TikTokenConverter(vocab_file=str(ranks_file), pattern=pattern).converted()
    specials = sorted(
        (encoding.encode(token, allowed_special="all")[0], token)
        for token in encoding.special_tokens_set
    )
    first = backend.get_vocab_size()
    if [i for i, _ in specials] != list(range(first, first + len(specials))):
        raise LabError(
            "harmony's special tokens do not follow o200k_base's ranks", where="judge tokenizer"
        )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend)
    tokenizer.add_special_tokens({"additional_special_tokens": [t for _, t in specials]})
    tokenizer.eos_token = "<|return|>"
    tokenizer.harmony_encoding = encoding
    return tokenizer
