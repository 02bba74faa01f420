"""The vLLM-faithful judge stand-in (testing/fake_judge_server.py, over testing/confident_judge.py)
in a process of its own, with zero model cost: every distinct request body is answered once by
the stand-in and replayed thereafter, so after a warm-up pass what a client meets is the HTTP
server (HTTP/1.1, connections kept alive as by vLLM's uvicorn) and the JSON of vLLM-shaped answers,
and the client's CPU is measured apart from the
server's. Prints "PORT <n>" when it listens and serves until its stdin closes.

    .venv/bin/python bench/judge_standin.py digits|thousand|tekken|o200k [--costless]"""

from __future__ import annotations

import json
import math
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# kind: (how its tokenizer is made, the chat renderer the stand-in's chat endpoint uses)
TOKENIZERS = {
    "digits": ("mistral_style_tokenizer", "mistral"),
    "thousand": ("thousand_numbers_tokenizer", "trim"),
    # the seed judges' own vocabularies (model_access/seed_tokenizers.py), as the client reads them
    "tekken": ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "mistral"),
    "o200k": ("openai/gpt-oss-120b", "harmony"),
}
SEED_KINDS = ("tekken", "o200k")
DRAWS = 64  # fresh draws the costless engine keeps (rolled per prompt)
CONTENDERS = 64  # the fixed part's largest entries that may be a row's largest


def make_tokenizer(kind: str) -> Any:
    if kind in SEED_KINDS:
        from diarylab.model_access.seed_tokenizers import seed_tokenizer

        return seed_tokenizer(TOKENIZERS[kind][0])
    from diarylab.testing import judge_tokenizers

    return getattr(judge_tokenizers, TOKENIZERS[kind][0])()


def answer_like_ids(tokenizer: Any) -> list[int]:
    """Ids a reading may ask about: every short piece of letters or digits (a number's pieces,
    yes and no in their spellings), and every special token (the enders). The costless engine
    draws their logits afresh per prompt; the rest of a row is the same for every prompt."""
    out = []
    for token_id, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))):
        core = str(piece).lstrip("Ġ▁ ")
        if len(core) <= 3 and core.isalnum():
            out.append(token_id)
    specials = {int(i) for i in tokenizer.all_special_ids}
    specials |= {int(i) for i in tokenizer.added_tokens_decoder}
    return sorted({*out, *specials})


def costless_engine(model: Any) -> Any:
    """The confident judge's engine (testing/confident_judge.py) without its forward pass, so it
    costs microseconds at any vocabulary size: a rehearsal's every judge request is new, and a
    tiny model's pass over a 4,000-token reply prompt was the stand-in's whole cost (py-spy,
    2026-12-04: it held both cores while the client waited). Each next-token row is the judge's
    bigram bias on the last token plus noise: for the ids a reading may ask about, one of 64
    fixed draws rolled by a hash of the prompt (so readings differ a little between prompts, as
    a model's do), and one fixed draw for the rest of the vocabulary, whose share of the
    normaliser is summed once. The row is a true log-softmax, normalised in float64."""
    import zlib

    import numpy as np
    import torch

    from diarylab.testing.confident_judge import LOGIT_SCALE, bigram_shares, share_bias
    from diarylab.testing.fake_judge_engine import JudgeEngine

    class CostlessEngine(JudgeEngine):
        def __init__(self) -> None:
            super().__init__(model)
            size = self.vocab_size
            first, after = bigram_shares(self.tokenizer)
            biased = {*first, *(i for g in after.values() for i in g)}
            fresh = sorted({*answer_like_ids(self.tokenizer), *biased} & set(range(size)))
            self.fresh = torch.tensor(fresh)
            at = {token_id: k for k, token_id in enumerate(fresh)}
            # a bias table's ids as places in the fresh draw (every biased id is drawn fresh)
            self.first = self._bias(share_bias(first, size), at)
            self.after = {i: self._bias(share_bias(g, size), at) for i, g in after.items()}
            base = np.random.default_rng(0).standard_normal(size) * LOGIT_SCALE
            self.base = torch.from_numpy(base)  # float64
            kept = torch.ones(size, dtype=torch.bool)
            kept[self.fresh] = False
            self.kept_sum = float(torch.exp(self.base[kept]).sum())
            # The fresh draws: a prompt takes one of DRAWS rows, rolled by its seed; drawing
            # 24,000 normals afresh per prompt was a quarter of the stand-in's CPU (py-spy,
            # 2026-12-05)
            table = np.random.default_rng(1).standard_normal((DRAWS, len(fresh)))
            self.draws = table * LOGIT_SCALE
            # Who can be among a row's k largest: any fresh id, or one of the fixed rest's
            # CONTENDERS largest (the rest only shifts, and rounding to float32 keeps its order)
            rest = torch.nonzero(kept).flatten()
            top = rest[torch.topk(self.base[rest], min(CONTENDERS, len(rest))).indices]
            ids = torch.cat([self.fresh, top])  # a lazy row's contenders: fresh, then the rest
            self.contender_order = torch.argsort(ids).numpy()
            self.contenders = ids[self.contender_order].numpy()
            self.kept_top_values = self.base[top].numpy()
            self.base64 = base
            self.place = np.full(size, -1, dtype=np.int64)  # a fresh id's place in the draw
            self.place[fresh] = np.arange(len(fresh))

        @staticmethod
        def _bias(bias: dict[int, float], at: dict[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
            ids = sorted(bias)
            return torch.tensor([at[i] for i in ids]), torch.tensor(
                [bias[i] for i in ids], dtype=torch.float64
            )

        def next_logprobs(self, ids: Any) -> LazyRow:
            tail = [int(i) for i in ids[-32:]]
            seed = zlib.crc32(np.asarray([len(ids), *tail], dtype=np.int64).tobytes())
            noise = np.roll(self.draws[seed % DRAWS], (seed // DRAWS) % len(self.fresh))
            drawn = torch.from_numpy(noise)
            where, bias = self.after.get(tail[-1], self.first)
            drawn[where] += bias
            shift = math.log(self.kept_sum + float(torch.exp(drawn).sum()))
            return LazyRow(self, noise, shift)

        def best(self, row: LazyRow) -> int:
            return row.best()

        def top(self, row: LazyRow, k: int) -> list[int]:
            if k > CONTENDERS:
                return super().top(row.materialize(), k)
            return row.top(k)

        def ranked(self, row: LazyRow) -> list[int]:
            return super().ranked(row.materialize())

    class LazyRow:
        """A next-token row as the answer reads it, never written out whole: entry by entry
        (`row[i]`, and `numpy()` is the row itself), its largest entry and its k largest. Each
        entry is what writing the row out gives (`materialize`: the fixed draw less the shift,
        the fresh places their drawn values less the shift, rounded to float32), so a request
        costs the fresh draw's length, not the vocabulary's: the vocabulary-long shift and its
        float32 copy were a third of the stand-in's CPU (py-spy, 2026-12-05).
        tests/test_judge_standin.py holds every entry, the largest and the top-k equal to the
        written-out row's."""

        def __init__(self, engine: Any, drawn: Any, shift: float) -> None:
            self.engine, self.drawn, self.shift = engine, drawn, shift
            self.fresh32 = (drawn - shift).astype(np.float32)
            self._contenders: Any = None

        def __getitem__(self, token_id: int) -> Any:
            place = self.engine.place[token_id]
            if place >= 0:
                return self.fresh32[place]
            return np.float32(self.engine.base64[token_id] - self.shift)

        def numpy(self) -> LazyRow:
            return self

        def contenders(self) -> Any:
            """The contenders' values in the order of their ids (engine.contenders)."""
            if self._contenders is None:
                kept = (self.engine.kept_top_values - self.shift).astype(np.float32)
                values = np.concatenate([self.fresh32, kept])
                self._contenders = values[self.engine.contender_order]
            return self._contenders

        def best(self) -> int:
            # the first largest, as argmax over the written-out row gives it
            return int(self.engine.contenders[int(self.contenders().argmax())])

        def top(self, k: int) -> list[int]:
            picked = torch.topk(torch.from_numpy(self.contenders()), k).indices
            return [int(self.engine.contenders[i]) for i in picked]

        def materialize(self) -> torch.Tensor:
            row = self.engine.base - self.shift
            row[self.engine.fresh] = torch.from_numpy(self.drawn) - self.shift
            return row.float()

    return CostlessEngine()


def standin_model(tokenizer: Any, *, costless: bool) -> Any:
    """What the handler wraps: the confident judge, or, where nothing runs it (costless), a
    one-block Llama of the vocabulary's size whose only use is its shape (the confident judge's
    dense bigram table would be vocabulary² floats: 160 GB at o200k's 200k ids)."""
    from diarylab.testing.confident_judge import confident_judge

    if not costless:
        return confident_judge(tokenizer)
    from diarylab.model_access.local import LocalModel
    from diarylab.testing.tiny_models import build_tiny_llama

    tiny = build_tiny_llama(tokenizer, layers=1, hidden=8)
    return LocalModel(tiny, tokenizer, spec=f"costless-{len(tokenizer)}")


def main() -> None:
    import torch

    from diarylab.testing.fake_judge_server import judge_handler
    from diarylab.testing.fake_openai import Reply, Routed, serve

    kind = sys.argv[1]
    costless = "--costless" in sys.argv
    if kind in SEED_KINDS and not costless:
        # the confident judge's forward pass needs its dense bigram table: vocabulary² floats
        raise SystemExit(f"{kind}: the seed vocabularies are served --costless only")
    # One torch thread: a request's row is a few vocabulary-long operations, which a second
    # thread only slows (2026-12-05: 2.5 ms of CPU a greedy step on two threads, 0.85 on one)
    # while taking the core the client under measure needs.
    torch.set_num_threads(1)
    tokenizer = make_tokenizer(kind)
    model = standin_model(tokenizer, costless=costless)
    # 32k context: a seed judge's (a study's whole conversation is in its reply prompts)
    handler = judge_handler(
        model,
        renderer=TOKENIZERS[kind][1],  # type: ignore[arg-type]
        max_model_len=32768,
        engine=costless_engine(model) if costless else None,
    )
    answered: dict[tuple[str, str], Reply] = {}
    lock = threading.Lock()

    def replay(path: str, body: dict[str, Any]) -> Reply:
        if costless:  # nothing to save by replaying, and a study's answers would fill memory
            return handler.answer(path, body)
        key = (path, json.dumps(body, sort_keys=True))
        reply = answered.get(key)
        if reply is None:
            with lock:  # the model under the stand-in answers one request at a time anyway
                reply = answered.get(key) or handler.answer(path, body)
                answered[key] = reply
        return reply

    with serve(Routed(replay), keep_alive=True, record=not costless) as server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
