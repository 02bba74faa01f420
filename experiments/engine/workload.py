"""What a design will make, counted before anything runs: the texts each phase writes and the
readings each judge is asked, by question. A kind counts it from the same cells and items its
run enumerates (its progress total is the sum of these counts), and `diarylab plan`
(experiments/planning/) turns it into requests, tokens and hours."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from diarylab.chatbots.specs import ChatbotSpec, FixedChatbotSpec
from diarylab.rubric.prompts import JudgePrompt

if TYPE_CHECKING:
    from diarylab.experiments.engine.design import DesignFile

Phase = Literal["writing", "chatbots", "grading"]


@dataclass(frozen=True)
class Texts:
    """`count` texts of one kind. `model` is False for texts that cost no call (the fixed reply,
    the fixed letter); `per_judge` texts are written once for every judge (a benchmark's grader
    answers); `max_tokens` is the most tokens one may have (None: not generated)."""

    phase: Phase
    label: str
    count: int
    max_tokens: int | None
    model: bool = True
    per_judge: bool = False
    writer: str = "diarist"  # who writes them: the diarist model, a chatbot id, or "judge"


@dataclass(frozen=True)
class Workload:
    texts: tuple[Texts, ...]
    readings: Mapping[str, int]  # per judge: "number" (0–100) and "yes_no" readings
    progress_readings: int  # per judge: the readings the progress bar counts
    judged_tokens: int  # the most tokens a judged text may have (the prompt tokens' upper bound)
    uncounted: tuple[str, ...] = field(default=())  # work the plan knows of and does not count
    # One prompt per question on a placeholder text, rendered by the plan to count one request's
    # prompt tokens and its number trie; a question left out is counted on the probe prompt.
    samples: Mapping[str, JudgePrompt] = field(default_factory=dict)
    # The same prompts on a given text (`plan --measure` reads real texts with the real judge),
    # and the store tables that hold the texts a judge reads.
    sample_with: Callable[[str], Mapping[str, JudgePrompt]] | None = None
    text_tables: tuple[str, ...] = ()
    # The yes/no readings a run reads together (one Task group: a reply's rubric questions),
    # as {questions in a group: how many such groups}; empty: no groups (read a judge's
    # batch at a time).
    yes_no_groups: Mapping[int, int] = field(default_factory=dict)

    def units(self, judges: int) -> int:
        """The run's progress total: every text and every counted reading, per judge."""
        per_judge = sum(t.count for t in self.texts if t.per_judge) + self.progress_readings
        return sum(t.count for t in self.texts if not t.per_judge) + judges * per_judge


def reply_texts(chatbots: Sequence[ChatbotSpec], per_chatbot: Mapping[str, int]) -> list[Texts]:
    """One Texts per chatbot: how many replies it writes, at most its max_new_tokens each."""
    out = []
    for bot in chatbots:
        fixed = isinstance(bot, FixedChatbotSpec)
        most = None if isinstance(bot, FixedChatbotSpec) else bot.generation.max_new_tokens
        count = per_chatbot.get(bot.id, 0)
        out.append(
            Texts("chatbots", f"replies by {bot.id}", count, most, model=not fixed, writer=bot.id)
        )
    return out


def profile_making(spec: DesignFile) -> tuple[str, ...]:
    """Inline profiles are made (vectors extracted, strengths calibrated) before the cells run,
    in the profile maker's own store: known work, not counted here."""
    rules = [p.id for p in spec.profiles]
    if not rules:
        return ()
    return (f"making the inline profiles {', '.join(rules)} (extraction, calibration)",)


PLACEHOLDER = "."  # the judged text of a sample prompt: its tokens are counted apart
