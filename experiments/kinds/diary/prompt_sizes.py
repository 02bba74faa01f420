"""How long the diary's prompts are, for the plan's token counts: what the diarist sees when
it writes entry k (its role card, its earlier entries and the replies to them), what a chatbot
sees when it answers entry k, and what a judge reads. Every earlier text is counted at its
max_new_tokens and instruction text at CHARS_PER_TOKEN (experiments/engine/workload.py): the
figures are estimates that bound what a run sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diarylab.chatbots.specs import ChatbotSpec, FixedChatbotSpec
from diarylab.diarists.cards import load_cards
from diarylab.diarists.templates import load_entry_template
from diarylab.experiments.engine.workload import MESSAGE_TOKENS, conversation_tokens, text_tokens
from diarylab.experiments.kinds.diary.cells import Cell
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.prompts import load_template


@dataclass(frozen=True)
class PromptSize:
    prompt: float  # mean tokens of one prompt
    cached: float = 0.0  # mean prefix held from the conversation's previous request
    longest: float = 0.0  # the longest prompt


def reply_tokens(bot: ChatbotSpec) -> float:
    """The most tokens one reply of this chatbot has (the fixed reply: its own length)."""
    if isinstance(bot, FixedChatbotSpec):
        return text_tokens(bot.text)
    return float(bot.generation.max_new_tokens)


def entry_prompt(spec: DiaryDesignFile, cells: Sequence[Cell]) -> PromptSize:
    """The mean prompt of an entry the diarist writes: entry 1 once per diarist × profile,
    entries 2.. once per cell."""
    template = load_entry_template()
    cards = {c.id: c for c in load_cards(spec.cast.diarist_ids)}
    entry = float(spec.writer.generation.max_new_tokens)
    replies = {b.id: reply_tokens(b) for b in spec.chatbots}
    first_user = text_tokens(template.first_entry)
    next_user = text_tokens(template.next_entry)
    prompts: list[float] = []
    firsts: set[str] = set()
    for cell in cells:
        system = text_tokens(template.system.format(**cards[cell.diarist].fields()))
        for k in range(1, spec.design.entries + 1):
            if k == 1 and cell.entry_id(1) in firsts:
                continue
            firsts.add(cell.entry_id(1))
            turns = [first_user] + [entry, next_user + replies[cell.chatbot]] * (k - 1)
            prompts.append(conversation_tokens(turns, system))
    return PromptSize(_mean(prompts), 0.0, max(prompts, default=0.0))


def chatbot_prompt(spec: DiaryDesignFile, bot: ChatbotSpec) -> PromptSize:
    """A chatbot answering entry k sees entries 1..k and its own replies 1..k−1; the
    previous turn's prompt is the prefix a server may still hold (its reply is not counted:
    a thinking model's history drops the thinking it wrote, so the prefix can end there)."""
    entry = float(spec.writer.generation.max_new_tokens)
    reply = reply_tokens(bot)
    prompts, cached = [], []
    for k in range(1, spec.design.entries + 1):
        prompts.append(conversation_tokens([entry, reply] * (k - 1) + [entry]))
        cached.append(conversation_tokens([entry, reply] * (k - 2) + [entry]) if k > 1 else 0.0)
    return PromptSize(_mean(prompts), _mean(cached), max(prompts, default=0.0))


def judged_mean(spec: DiaryDesignFile, cells: Sequence[Cell]) -> dict[str, float]:
    """The judged text's mean tokens by question: an entry for the 0–100 scores and the person
    questions; for a reply's rubric questions the conversation before it, the entry and the
    reply."""
    rubric = load_behavior_rubric()
    entry = float(spec.writer.generation.max_new_tokens)
    replies = {b.id: reply_tokens(b) for b in spec.chatbots}
    entries = len({c.entry_id(k) for c in cells for k in range(1, spec.design.entries + 1)})
    weighted = [(entries * len(rubric.person), entry)]
    for cell in cells:
        for k in range(1, spec.design.entries + 1):
            seen = conversation_tokens([entry, replies[cell.chatbot]] * k)
            weighted.append((len(rubric.questions), seen))
    count = sum(n for n, _ in weighted)
    yes_no = sum(n * size for n, size in weighted) / count if count else 0.0
    return {"number": entry, "yes_no": yes_no}


def judged_longest(spec: DiaryDesignFile) -> dict[str, float]:
    """The longest judged text by question: an entry; the whole conversation with the chatbot
    of the longest replies, for a reply's rubric questions."""
    entry = float(spec.writer.generation.max_new_tokens)
    reply = max((reply_tokens(b) for b in spec.chatbots), default=0.0)
    return {"number": entry, "yes_no": conversation_tokens([entry, reply] * spec.design.entries)}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def after_text(spec: DiaryDesignFile, cells: Sequence[Cell]) -> dict[str, float]:
    """A yes/no prompt's tokens after its judged text (the question, the answer's opening and
    the role markers around it), over the person and the reply questions as often as asked."""
    rubric = load_behavior_rubric()
    entries = len({c.entry_id(k) for c in cells for k in range(1, spec.design.entries + 1)})
    weighted = []
    for name, field, questions, count in (
        ("person_question", "{entry}", rubric.person, entries),
        ("reply_question", "{reply}", rubric.questions, len(cells) * spec.design.entries),
    ):
        template = load_template(name)
        tail = template.user.split(field)[-1]
        for q in questions:
            size = text_tokens(tail.format(question=q.question) + template.prefill)
            weighted.append((count, size + 2 * MESSAGE_TOKENS))
    total = sum(n for n, _ in weighted)
    return {"yes_no": sum(n * s for n, s in weighted) / total} if total else {}
