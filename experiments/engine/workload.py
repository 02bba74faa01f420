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

Phase = Literal["profiles", "writing", "chatbots", "grading"]


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
    # The mean tokens of one text's prompt, every earlier text in it at its max_new_tokens (an
    # estimate: experiments/planning/tokens.py says how it is counted); None: not counted.
    prompt_tokens: float | None = None
    # Of these, the mean prefix a serving engine's prefix cache holds from the previous request
    # of the same conversation (its prompt and the reply it wrote).
    cached_tokens: float = 0.0
    longest_prompt: float | None = None  # the longest such prompt (None: prompt_tokens)


@dataclass(frozen=True)
class ReadTogether:
    """`count` times, `size` readings of one question next to each other in a run's task order
    (experiments/engine/judging.py reads them as one batch): a task group (a reply's rubric
    questions) is read whole; a run of ungrouped readings (an entry's 0–100 scores) in batches
    of the judge's concurrency."""

    question: str
    size: int
    count: int
    whole: bool = False

    def batches(self, concurrency: int) -> dict[int, int]:
        """{readings in one batch: how many such batches}."""
        width = max(concurrency, 1)
        if self.whole or self.size <= width:
            return {self.size: self.count}
        full, rest = divmod(self.size, width)
        return {width: full * self.count, **({rest: self.count} if rest else {})}


def read_batches(
    together: Sequence[ReadTogether], question: str, n: int, width: int
) -> dict[int, int]:
    """{readings read together: how many such batches} for n readings of a question read as
    `together` says (else `width` at a time)."""
    width = max(width, 1)
    out: dict[int, int] = {}
    for part in together:
        if part.question == question:
            for size, count in part.batches(width).items():
                out[size] = out.get(size, 0) + count
    if sum(size * count for size, count in out.items()) != n:
        out = chunks(n, width)
    return out


def chunks(n: int, width: int) -> dict[int, int]:
    """n readings a batch of `width` at a time: {batch size: how many}."""
    return {k: v for k, v in ((width, n // width), (n % width, 1)) if k and v and n}


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
    # The readings a run reads together, by question (batches: ReadTogether.batches); a
    # question left out is read a judge's batch at a time.
    together: tuple[ReadTogether, ...] = ()
    # 0–100 readings each judge is asked while the inline profiles are made (calibration), in
    # the profile maker's store: counted in the judge's prompts, not in the run's progress.
    profile_readings: Mapping[str, int] = field(default_factory=dict)
    # The mean tokens of the text a reading judges, by question, each text at its max (the
    # yes/no questions on a reply see the conversation before it); a question left out is
    # counted at judged_tokens.
    judged_mean: Mapping[str, float] = field(default_factory=dict)
    # The mean tokens of a prompt after its judged text, by question (the question asked and
    # the answer's opening): what a group of readings on one text does not share.
    after_text: Mapping[str, float] = field(default_factory=dict)
    # The longest judged text by question (each text at its max; a question left out:
    # judged_tokens): what a judge's server must hold in one prompt.
    judged_longest: Mapping[str, float] = field(default_factory=dict)

    def units(self, judges: int) -> int:
        """The run's progress total: every text and every counted reading, per judge."""
        per_judge = sum(t.count for t in self.texts if t.per_judge) + self.progress_readings
        run = [t for t in self.texts if not t.per_judge and t.phase != "profiles"]
        return sum(t.count for t in run) + judges * per_judge


def reply_texts(
    chatbots: Sequence[ChatbotSpec],
    per_chatbot: Mapping[str, int],
    prompts: Callable[[ChatbotSpec], tuple[float, float, float]] | None = None,
) -> list[Texts]:
    """One Texts per chatbot: how many replies it writes, at most its max_new_tokens each;
    `prompts`: a chatbot's mean prompt tokens, the prefix of them cached, and its longest."""
    out = []
    for bot in chatbots:
        fixed = isinstance(bot, FixedChatbotSpec)
        most = None if isinstance(bot, FixedChatbotSpec) else bot.generation.max_new_tokens
        count = per_chatbot.get(bot.id, 0)
        prompt, cached, longest = (
            prompts(bot) if prompts is not None and not fixed else (None, 0.0, None)
        )
        out.append(
            Texts(
                "chatbots",
                f"replies by {bot.id}",
                count,
                most,
                model=not fixed,
                writer=bot.id,
                prompt_tokens=prompt,
                cached_tokens=cached,
                longest_prompt=longest,
            )
        )
    return out


def profile_work(spec: DesignFile) -> tuple[tuple[Texts, ...], dict[str, int]]:
    """What making the design's inline profiles takes, before the cells run (in the profile
    maker's own store, experiments/profiles/making.py): per rule, the contrast pairs' texts (two
    per pair), and for a calibrated rule its sweep's samples — each held-out prompt unsteered
    once and at every layer × non-zero strength — each read by the rule's judge for the pattern
    and for coherence (at most: an empty sample is not read)."""
    from diarylab.diarists.patterns import load_pattern

    texts: list[Texts] = []
    readings: dict[str, int] = {}
    for rule in spec.profile_rules:
        made = rule.extraction.generation.max_new_tokens
        pattern = load_pattern(rule.pattern)
        systems = (pattern.positive_system, pattern.negative_system)
        texts.append(
            Texts(
                "profiles",
                f"contrast texts for {rule.id}",
                2 * rule.extraction.pairs,
                made,
                prompt_tokens=_mean_prompt(systems, pattern.extraction_prompts),
            )
        )
        c = rule.calibration
        if c is None:
            continue
        prompts = c.prompts or len(pattern.heldout_prompts)
        heldout = _mean_prompt((pattern.eval_system,), pattern.heldout_prompts[:prompts])
        samples = prompts * (1 + len(c.layers) * sum(1 for s in c.strengths if s != 0))
        # the sweep writes at the study's own settings unless the rule sets its own
        # (experiments/profiles/vectors.py study_rule)
        study = spec.writing_model
        own = "generation" in c.model_fields_set or study is None
        generation = c.generation if own or study is None else study.generation
        texts.append(
            Texts(
                "profiles",
                f"calibration samples for {rule.id}",
                samples,
                generation.max_new_tokens,
                prompt_tokens=heldout,
            )
        )
        readings[c.judge] = readings.get(c.judge, 0) + 2 * samples
    return tuple(texts), readings


# A chat template's role markers around one message, in tokens (an estimate; Llama 3 and ChatML
# templates add 4–5).
MESSAGE_TOKENS = 5
# English text's characters per token (OpenAI's tokenizer rule of thumb, an estimate): the
# instruction texts of a prompt are counted with it, since a writer's tokenizer may not be on
# the machine that plans. bench/plan_tokens.py holds it against the shipped tokenizer.
CHARS_PER_TOKEN = 4.0


def text_tokens(text: str) -> float:
    """Tokens of a fixed text, estimated from its length."""
    return len(text) / CHARS_PER_TOKEN


def conversation_tokens(turns: Sequence[float], fixed: float = 0.0) -> float:
    """A chat prompt of `turns` (each a message's tokens) after `fixed` instruction tokens."""
    return fixed + sum(turns) + MESSAGE_TOKENS * (len(turns) + (1 if fixed else 0))


def _mean_prompt(systems: Sequence[str], users: Sequence[str]) -> float:
    """A system text and a user text, every pairing equally often."""
    sizes = [conversation_tokens([text_tokens(u)], text_tokens(s)) for s in systems for u in users]
    return sum(sizes) / len(sizes) if sizes else 0.0


PLACEHOLDER = "."  # the judged text of a sample prompt: its tokens are counted apart
