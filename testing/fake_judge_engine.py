"""The model behind the judge stand-ins (testing/fake_judge_server.py): REAL next-token
log-probabilities from a local model, greedy decoding, and the two servers' ways of printing a
token. One forward pass per distinct prompt, kept in a small LRU cache, so the ~1000 short requests
of an exact reading on a shared prefix cost about one pass per trie node; a lock serialises the
model, since the loopback server answers on several threads.

Token text, vLLM: `vllm/tokenizers/detokenizer_utils.py` (convert_ids_list_to_tokens: decode([id])
with SentencePiece's leading space restored from the raw piece) and `vllm/v1/engine/logprobs.py`
(_verify_tokens / _correct_decoded_token: a string ending in U+FFFD is redone with up to 4 earlier
sampled tokens as context, and is "" when there are none).
Token text, llama.cpp: `tools/server/server-context.cpp` (populate_token_probs:
common_token_to_piece with special=false, so control tokens print as ""), `server-task.cpp`
(completion_token_output::to_json: `token` is the piece cut back to whole UTF-8 characters by
validate_utf8 in `server-common.cpp`, `bytes` the raw piece, log-probs as log of float32 probs)."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

import numpy as np
import torch

from diarylab.model_access.local import LocalModel

REPLACEMENT = "\ufffd"
FLOAT32_LOWEST = float(np.finfo(np.float32).min)  # llama.cpp's stand-in for log(0)


@dataclass(frozen=True)
class Step:
    """One generated position: the greedy token and the full log-prob row it was chosen from."""

    token_id: int
    row: torch.Tensor

    @cached_property
    def values(self) -> np.ndarray:
        """The row as numpy: an answer reads a few hundred of its entries one by one, each a
        tenth of what indexing the tensor costs."""
        return self.row.numpy()


class JudgeEngine:
    def __init__(self, model: LocalModel, *, cache_size: int = 256):
        self.model = model
        self.tokenizer = model.tokenizer
        self.vocab_size = int(model.model.config.vocab_size)
        # read once, as vLLM's cached tokenizer keeps its size (len() of a fast tokenizer
        # rebuilds its vocabulary: a twentieth of a stand-in's time per request)
        self.tokenizer_size = len(self.tokenizer)
        self.eos = frozenset(model.eos_token_ids)
        self.forward_passes = 0
        self._cache_size = cache_size
        self._rows: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self._lock = threading.Lock()

    def next_logprobs(self, ids: Sequence[int]) -> torch.Tensor:
        """float32 log-softmax of the logits after `ids` (vLLM's raw_logprobs mode)."""
        key = tuple(int(i) for i in ids)
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                self.forward_passes += 1
                with torch.no_grad():
                    batch = torch.tensor([list(key)], device=self.model.device)
                    logits = self.model.model(batch, logits_to_keep=1).logits[0, -1]
                row = torch.log_softmax(logits.float(), dim=-1).cpu()
                self._rows[key] = row
                if len(self._rows) > self._cache_size:
                    self._rows.popitem(last=False)
            else:
                self._rows.move_to_end(key)
        return row

    def greedy(self, prompt: Sequence[int], max_new: int) -> list[Step]:
        """Temperature-0 decoding; an end-of-sequence token is kept as the last step."""
        ids, steps = list(prompt), []
        for _ in range(max_new):
            row = self.next_logprobs(ids)
            token = self.best(row)
            steps.append(Step(token, row))
            if token in self.eos:
                break
            ids.append(token)
        return steps

    def best(self, row: torch.Tensor) -> int:
        """The greedy token: the row's first largest entry."""
        return int(row.argmax())

    def top(self, row: torch.Tensor, k: int) -> list[int]:
        """The row's k largest entries' ids, largest first (the sampler's top-k logprobs)."""
        return [int(i) for i in torch.topk(row, k).indices]

    def ranked(self, row: torch.Tensor) -> list[int]:
        """Every id, largest entry first (logprobs=-1: the whole vocabulary)."""
        return [int(i) for i in torch.argsort(row, descending=True)]

    def finish_reason(self, steps: Sequence[Step]) -> str:
        return "stop" if steps and steps[-1].token_id in self.eos else "length"

    def text(self, prompt: Sequence[int], steps: Sequence[Step]) -> str:
        """The generated text, special tokens skipped, decoded after the prompt's last tokens so
        a leading space survives (as incremental detokenization keeps it)."""
        tail = list(prompt)[-6:]
        new = [s.token_id for s in steps]
        head = self.tokenizer.decode(tail, skip_special_tokens=True)
        full = self.tokenizer.decode(tail + new, skip_special_tokens=True)
        return str(full[len(head) :]) if full.startswith(head) else str(self.tokenizer.decode(new))


# ---------------------------------------------------------------- vLLM's token strings
@dataclass(frozen=True)
class VocabKind:
    marker: str | None  # Metaspace's replacement character ("▁"), whose leading copy decode() drops
    byte_level: bool  # GPT-2 style pieces: each character stands for one byte
    added: dict[int, tuple[str, bool]]  # added tokens: id -> (text, special)


_KINDS: dict[int, VocabKind] = {}


def vocab_kind(tokenizer: Any) -> VocabKind:
    """Read once per tokenizer from its serialised form (vLLM caches its marker the same way:
    get_leading_space_marker), since the JSON holds the whole vocabulary."""
    kind = _KINDS.get(id(tokenizer))
    if kind is None:
        backend = getattr(tokenizer, "backend_tokenizer", None)
        config = json.loads(backend.to_str()) if backend is not None else {}
        pre = config.get("pre_tokenizer") or {}
        subs = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
        marker = next(
            (str(p.get("replacement", "▁")) for p in subs if p.get("type") == "Metaspace"), None
        )
        added = {i: (t.content, bool(t.special)) for i, t in tokenizer.added_tokens_decoder.items()}
        kind = VocabKind(marker, "ByteLevel" in json.dumps(config.get("decoder")), added)
        _KINDS[id(tokenizer)] = kind
    return kind


def _with_leading_spaces(raw: str, text: str, marker: str) -> str:
    wanted = len(raw) - len(raw.lstrip(marker))
    have = len(text) - len(text.lstrip(" "))
    return " " * (wanted - have) + text if wanted > have else text


def _completed(tokenizer: Any, token_id: int, context: Sequence[int]) -> str:
    """A byte-fallback piece's text given the sampled tokens before it (the shortest window of
    at most 4 that decodes cleanly), or "" when no window does."""
    window_max = min(len(context), 4)
    for n in range(1, window_max + 1):
        window = list(context)[-n:]
        full = str(tokenizer.decode([*window, token_id]))
        if full.endswith(REPLACEMENT):
            continue
        clean = len(window)
        while clean > 0 and str(tokenizer.decode([window[clean - 1]])).endswith(REPLACEMENT):
            clean -= 1
        prefix = str(tokenizer.decode(window[:clean])) if clean else ""
        if full.startswith(prefix):
            return full[len(prefix) :]
        return full[len(os.path.commonprefix([prefix, full])) :]
    return ""


def vllm_token_strings(tokenizer: Any, ids: Sequence[int], context: Sequence[int]) -> list[str]:
    """The `decoded_token` vLLM attaches to each id at one position; `context` is the tokens
    sampled at earlier positions of the same request."""
    marker = vocab_kind(tokenizer).marker
    raw = tokenizer.convert_ids_to_tokens(list(ids)) if marker else [None] * len(ids)
    out = []
    for token_id, piece in zip(ids, raw, strict=True):
        text = str(tokenizer.decode([token_id]) or "")
        if marker and piece is not None:
            text = _with_leading_spaces(piece, text, marker)
        out.append(_completed(tokenizer, token_id, context) if text.endswith(REPLACEMENT) else text)
    return out


# ---------------------------------------------------------------- llama.cpp's token pieces
@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, inverted."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = [], 0
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return {c: b for b, c in enumerate(chars)}


BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def llamacpp_piece(tokenizer: Any, token_id: int, *, special: bool = False) -> bytes:
    """common_token_to_piece: control (special) tokens print nothing unless `special`; other
    added tokens print their text; byte-level pieces map back to raw bytes; SentencePiece pieces
    turn "▁" into a space and <0xNN> into that byte."""
    kind = vocab_kind(tokenizer)
    if token_id in kind.added:
        text, control = kind.added[token_id]
        return text.encode() if (special or not control) else b""
    piece = str(tokenizer.convert_ids_to_tokens(token_id))
    if kind.byte_level:
        table = _byte_decoder()
        return bytes(table[c] for c in piece)
    if (m := BYTE_PIECE.fullmatch(piece)) is not None:
        return bytes([int(m.group(1), 16)])
    return piece.replace("▁", " ").encode()


def whole_utf8_prefix(data: bytes) -> int:
    """validate_utf8: the length without a multi-byte character cut off at the end."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[len(data) - back]
        if lead & 0xE0 == 0xC0:
            need = 2
        elif lead & 0xF0 == 0xE0:
            need = 3
        elif lead & 0xF8 == 0xF0:
            need = 4
        else:
            continue
        if back < need:
            return len(data) - back
    return len(data)


def llamacpp_logprob(logprob: float) -> float:
    """log(p) of the float32 probability, with log(0) printed as the lowest float."""
    p = np.float32(math.exp(logprob))
    return FLOAT32_LOWEST if p == 0 else float(np.log(p))
