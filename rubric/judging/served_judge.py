"""A judge behind a served endpoint (vLLM, llama.cpp or any OpenAI-compatible server), via
model_access.served. Two ways to read it:

- exact (the judge's tokenizer is known): the prompt is rendered on the client and every trie
  node is read through /v1/completions by prompt token ids (rubric/judging/served_exact.py). Equal
  to a
  local reading of the same model.
- top-k (chat only, no tokenizer): the chat endpoint's top log-probabilities, never exact, with
  an honest coverage (rubric/judging/served_chat.py).

Every record says its mode, the requests made and, for exact readings, which ids were missing.
The probe (`probe`) reads a fixed prompt before a run spends a call on this judge."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from diarylab.foundation.errors import LabError
from diarylab.model_access.served import ServedClient
from diarylab.rubric.judging.expected import ALGORITHM, SPACE, is_child_piece, prob
from diarylab.rubric.judging.judge_base import Judge, Question
from diarylab.rubric.judging.served_chat import ChatReader, ChatSettings
from diarylab.rubric.judging.served_exact import ExactReader, ExactSettings
from diarylab.rubric.judging.served_identity import served_dtype
from diarylab.rubric.judging.vocab import VocabFacts, vocab_facts
from diarylab.rubric.prompts import JudgePrompt

Mode = Literal["exact", "top-k"]


@dataclass(frozen=True)
class ProbeResult:
    mode: Mode  # what the reading turned out to be, not what was asked
    root_coverage: float  # P(the judge starts a number) on the probe prompt
    first_tokens: tuple[str, ...]  # what the server wrote first
    requests: int
    prompt_tail: str | None
    # What the server says it is: its answers' system_fingerprint (None where they carry none;
    # the chat door of a top-k reading does not keep it) and the dtype it serves
    # (rubric/judging/served_identity.py; "unknown" where it does not say).
    system_fingerprint: str | None = None
    dtype: str = "unknown"

    def to_record(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "root_coverage": self.root_coverage,
            "first_tokens": list(self.first_tokens),
            "requests": self.requests,
            "prompt_tail": self.prompt_tail,
            "system_fingerprint": self.system_fingerprint,
            "dtype": self.dtype,
        }


class ServedJudge(Judge):
    def __init__(
        self,
        client: ServedClient,
        *,
        tokenizer: Any | None = None,
        mode: Mode | None = None,
        exact: ExactSettings | None = None,
        chat: ChatSettings | None = None,
    ) -> None:
        self.client = client
        self.model = client.model
        self.tokenizer = tokenizer
        self.mode: Mode = mode or ("exact" if tokenizer is not None else "top-k")
        if self.mode == "exact" and tokenizer is None:
            raise LabError(
                "an exact served judge needs its tokenizer",
                where=f"judge {self.model}",
                fix="name the judge's tokenizer (a hub id or a folder with tokenizer files)",
            )
        self.exact_settings = exact or ExactSettings()
        self.chat_settings = chat or ChatSettings()
        if self.mode == "top-k" and self.chat_settings.top_logprobs < 1:
            raise LabError(
                f"top_logprobs={self.chat_settings.top_logprobs}",
                where="served judge",
                fix="a top-k reading needs top_logprobs of at least 1 (vLLM allows up to 20)",
            )
        self._facts: VocabFacts | None = None
        self._about: dict[str, Any] | None = None
        self._hashes: tuple[str | None, str | None] | None = None

    @property
    def batch_size(self) -> int:
        return self.client.settings.concurrency

    def server_about(self) -> dict[str, Any]:
        """Asked of the server once per judge (a resumed run asks again)."""
        if self._about is None:
            self._about = {"dtype": served_dtype(self.client.settings)}
        return self._about

    @property
    def facts(self) -> VocabFacts | None:
        if self.tokenizer is not None and self._facts is None:
            self._facts = vocab_facts(self.tokenizer)
        return self._facts

    def _tokenizer_hashes(self) -> tuple[str | None, str | None]:
        """The tokenizer's vocabulary and chat template hashes, worked out once per judge: the
        vocabulary's JSON is 200,000 entries for o200k (0.2 s), and the identity is asked for
        by every judging step."""
        if self._hashes is None:
            tokenizer_sha = template_sha = None
            if self.tokenizer is not None:
                vocab = json.dumps(sorted(self.tokenizer.get_vocab().items()))
                tokenizer_sha = hashlib.sha256(vocab.encode()).hexdigest()
                template = getattr(self.tokenizer, "chat_template", None) or ""
                template_sha = hashlib.sha256(str(template).encode()).hexdigest()
            self._hashes = (tokenizer_sha, template_sha)
        return self._hashes

    def identity(self) -> dict[str, Any]:
        tokenizer_sha, template_sha = self._tokenizer_hashes()
        out: dict[str, Any] = {
            "kind": "served",
            "model": self.model,
            "mode": self.mode,
            "tokenizer_sha256": tokenizer_sha,
            "algorithm": ALGORITHM,
        }
        # A stand-in tokenizer (model_access/seed_tokenizers.py) and the library that renders
        # its prompts are named; a judge read with the hub's own files keeps its identity.
        if stand_in := getattr(self.tokenizer, "stand_in", None):
            out["tokenizer_stand_in"] = stand_in
        if getattr(self.tokenizer, "harmony_encoding", None) is not None:
            from importlib.metadata import version

            out["renderer"] = f"openai-harmony {version('openai-harmony')}"
        if self.mode == "exact":
            e = self.exact_settings
            out.update(
                chat_template_sha256=template_sha,
                node_cutoff=e.node_cutoff,
                reasoning_effort=e.reasoning_effort,
                # a bounded reading's values depend on where it stops and how it reads a node
                max_error=e.max_error,
                **({"scout_logprobs": e.scout_logprobs} if e.max_error > 0 else {}),
            )
        else:
            c = self.chat_settings
            out.update(prefill=c.prefill, top_logprobs=c.top_logprobs, expand_floor=c.expand_floor)
        return out

    def _reader(self) -> ExactReader | ChatReader:
        """A fresh reader per call: it counts that call's requests."""
        if self.mode == "exact":
            facts = self.facts
            assert facts is not None
            return ExactReader(self.client, self.tokenizer, facts, self.exact_settings)
        return ChatReader(
            self.client, self.chat_settings, tokenizer=self.tokenizer, facts=self.facts
        )

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        return self._reader().number_record(prompt)

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        return self._reader().yes_no_record(prompt)

    def records(self, question: Question, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Prompts in parallel, as many at once as the endpoint's concurrency allows (the
        client's semaphore holds the same number, so no request waits on a free slot); an
        exact judge's yes/no prompts in one round of prompt lists, and its bounded 0–100
        readings in step, round by round, each round's prompts in lists."""
        if question == "yes_no" and self.mode == "exact":
            # one round of token prompts, sent as lists (ExactReader.yes_no_records)
            reader = self._reader()
            assert isinstance(reader, ExactReader)
            return reader.yes_no_records(list(prompts))
        if question == "number" and self.mode == "exact" and self.exact_settings.max_error > 0:
            # bounded readings walked in step, each round's prompts sent as lists
            # (ExactReader.number_records)
            reader = self._reader()
            assert isinstance(reader, ExactReader)
            return reader.number_records(list(prompts))
        one = self.number_record if question == "number" else self.yes_no_record
        if len(prompts) <= 1:
            return [one(p) for p in prompts]
        with ThreadPoolExecutor(max_workers=self.client.settings.concurrency) as pool:
            return list(pool.map(one, prompts))

    def yes_no_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        return self.records("yes_no", prompts)

    def probe(self, prompt: JudgePrompt) -> ProbeResult:
        """Read the root of a fixed number prompt: the mode the server's answers allow, the
        probability that the judge starts a number, and the first tokens it writes."""
        reader = self._reader()
        dtype = served_dtype(self.client.settings)
        if isinstance(reader, ExactReader):
            coverage, complete, tail = reader.root_coverage(prompt)
            first = reader.first_tokens(prompt)
            mode: Mode = "exact" if complete else "top-k"
            fingerprint = ",".join(sorted(reader.fingerprints)) or None
            return ProbeResult(
                mode, coverage, tuple(first), reader.requests, tail, fingerprint, dtype
            )
        record = reader.number_record(prompt)
        nodes = {n["prefix"]: n for n in record["nodes"]}
        coverage = _root_coverage(nodes)
        first_tokens = tuple(record.get("first_tokens", []))
        return ProbeResult("top-k", coverage, first_tokens, reader.requests, None, None, dtype)


def _root_coverage(nodes: dict[str, Any]) -> float:
    """P(digits come first, or a space and then digits), from a top-k reading's nodes."""

    def digits(prefix: str) -> float:
        node = nodes.get(prefix)
        if node is None:
            return 0.0
        return sum(
            prob(lp)
            for piece, lp in node["children"].items()
            if is_child_piece(prefix, piece) and piece != SPACE
        )

    root = nodes.get("", {"children": {}})
    space = prob(root["children"].get(SPACE))
    return min(1.0, digits("") + space * digits(SPACE))
