"""Grading the stored replies, criterion by criterion, read by probability.

For each judge: the judge's model writes a JSON answer per (reply, criterion) at temperature 0
through the store's cached-call door (kind "grader"); a malformed answer is asked again, up to
`retries` more times, sampling (a greedy judge would write the same thing again), and after that
the criterion stays ungraded — never guessed. For every well-formed answer the lab then reads
P(criteria_met = true) at the answer's position: the judge's own text up to `"criteria_met":`
is the assistant prefill and the yes/no machinery reads true against false (with coverage),
through the engine's judging loop. Every judge grades the identical stored reply."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from diarylab.chatbots.base import Chatbot
from diarylab.chatbots.specs import ChatbotSpec, build_chatbot
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task, Tick
from diarylab.experiments.kinds.benchmark.grader import (
    ANSWER_WORDS,
    DEFAULT_MAX_TOKENS,
    Grader,
    WrittenAnswer,
    read_answer,
)
from diarylab.experiments.kinds.benchmark.replies import check_no_canary, derived_seed
from diarylab.experiments.kinds.benchmark.rows import GraderAnswerRow
from diarylab.experiments.kinds.benchmark.schema import GraderSettings
from diarylab.model_access.settings import GenerationSettings
from diarylab.model_access.shared_models import LocalModels
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec
from diarylab.rubric.prompts import JudgePrompt, TemplateRef

ChatbotSpecs: TypeAdapter[ChatbotSpec] = TypeAdapter(ChatbotSpec)


@dataclass(frozen=True)
class Item:
    """One question a judge answers in writing about one reply (a criterion, or a validation
    grader's question), then has its answer read."""

    reply_id: str
    item: str
    messages: tuple[tuple[str, str], ...]
    group: str  # items of one group share a prompt prefix (one local pass)
    template: TemplateRef

    def chat(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


def grader_writer(
    spec: LocalJudgeSpec | ServedJudgeSpec, models: LocalModels, generation: GenerationSettings
) -> Chatbot:
    """The judge's own model writing text, through the chatbot door (no system message)."""
    table = ChatbotSpecs.validate_python({**spec.writer_table(), "generation": generation})
    return build_chatbot(table, models)


def write_answers(
    store: Store,
    judge_id: str,
    make_writer: Callable[[GenerationSettings], Chatbot],
    items: Sequence[Item],
    settings: GraderSettings,
    seed: int,
    canaries: frozenset[str],
    answer_key: str,
    tick: Tick,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> dict[int, WrittenAnswer]:
    """Index of item -> its well-formed answer; items left out stayed malformed (ungraded).
    `max_tokens`: the template's cap, used unless the design sets grader.generation."""
    answers: dict[int, WrittenAnswer] = {}
    pending = list(range(len(items)))
    for attempt in range(settings.retries + 1):
        if not pending:
            break
        generation = settings.generation_for(max_tokens)
        if attempt:
            generation = generation.model_copy(update={"temperature": settings.retry_temperature})
        writer = make_writer(generation)
        order = list(pending)
        seeds = [
            derived_seed(seed, "grader", judge_id, items[i].reply_id, items[i].item, str(attempt))
            for i in order
        ]
        views = [items[i].chat() for i in order]
        for view in views:
            check_no_canary(view, canaries, f"judge {judge_id}")

        def compute(
            idx: list[int], writer: Chatbot = writer, views: Any = views, seeds: Any = seeds
        ) -> list[dict[str, Any]]:
            replies = writer.reply_many([views[i] for i in idx], [seeds[i] for i in idx])
            return [{**r.record, "text": r.text} for r in replies]

        def row(
            i: int, result: Any, key: str, order: list[int] = order, attempt: int = attempt
        ) -> tuple[GraderAnswerRow]:
            item = items[order[i]]
            written = read_answer(str(result["text"]), answer_key)
            return (
                GraderAnswerRow(
                    answer_id=f"{judge_id}:{item.reply_id}:{item.item}:{attempt}",
                    judge=judge_id,
                    reply_id=item.reply_id,
                    item=item.item,
                    attempt=attempt,
                    text=str(result["text"]),
                    written_met=written.met,
                    status="ok" if written.met is not None else "malformed",
                    call_key=key,
                ),
            )

        results = store.cached_calls(
            "grader",
            judge_id,
            writer.identity(),
            [
                {"attempt": attempt, **writer.request(v, s)}
                for v, s in zip(views, seeds, strict=True)
            ],
            compute,
            rows=row,
            batch_size=writer.batch_size,
            done=tick if attempt == 0 else None,
        )
        pending = []
        for i, result in zip(order, results, strict=True):
            written = read_answer(str(result["text"]), answer_key)
            if written.met is None:
                pending.append(i)
            else:
                answers[i] = written
    return answers


def reading_tasks(
    items: Sequence[Item], answers: dict[int, WrittenAnswer], canaries: frozenset[str]
) -> Iterator[Task]:
    for i, item in enumerate(items):
        answer = answers.get(i)
        if answer is None or answer.prefix is None:
            continue
        prompt = JudgePrompt.chat(item.chat(), prefill=answer.prefix, answers=ANSWER_WORDS)
        check_no_canary(prompt.key_fields(), canaries, "judge reading")
        yield Task("reply", item.reply_id, item.item, "yes_no", prompt, item.template, item.group)


def criterion_items(grader: Grader, replies: Sequence[tuple[str, Any, str]]) -> list[Item]:
    """(reply id, conversation, reply text) -> one item per criterion of the conversation."""
    out = []
    for reply_id, conversation, text in replies:
        for criterion in conversation.criteria:
            messages = grader.messages(conversation, text, criterion)
            out.append(
                Item(
                    reply_id,
                    f"criterion:{criterion.id}",
                    tuple((m["role"], m["content"]) for m in messages),
                    f"grade:{reply_id}",
                    grader.ref,
                )
            )
    return out
