"""The benchmark's store tables: the chatbots' replies, and every answer a judge wrote before
its criterion was read (judgments themselves are the engine's table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class BenchReplyRow:
    TABLE: ClassVar[str] = "bench_replies"
    reply_id: str  # "<conversation id>.<chatbot>"
    conversation_id: str
    chatbot: str
    stratum: str
    text: str
    flag: str | None  # "refusal" | "empty" | "truncated" | None: graded as returned
    call_key: str | None  # None for the fixed reply, which calls no model


@dataclass(frozen=True)
class GraderAnswerRow:
    TABLE: ClassVar[str] = "grader_answers"
    answer_id: str  # "<judge>:<reply id>:<item>:<attempt>"
    judge: str
    reply_id: str
    item: str  # "criterion:<id>", or a validation grader's item
    attempt: int
    text: str  # what the judge wrote, at temperature 0 on the first attempt
    written_met: bool | None  # the answer it wrote; None when malformed
    status: str  # "ok" | "malformed"
    call_key: str


@dataclass(frozen=True)
class BenchConversationRow:
    """A sampled conversation as the run used it (messages without the canary, criteria with
    their points, axes and tags): a report, status or export of the folder reads it from here,
    so the folder needs no copy of the (possibly licensed) data file it was drawn from."""

    TABLE: ClassVar[str] = "bench_conversations"
    conversation_id: str
    record: str  # JSON: experiments/kinds/benchmark/sample_store.py
