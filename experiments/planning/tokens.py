"""What each model of a design is asked, in tokens: per model (the diarist, each chatbot, each
judge) and phase, the requests, the prompt tokens sent, the part of them a serving engine's
prefix cache holds, and the tokens generated (every text at its max_new_tokens: at most).

Prompt sizes come from the kind's workload (each earlier text at its max, instruction text at
CHARS_PER_TOKEN: an estimate) and, for a served exact judge, from its own tokenizer's rendering
of the reading's template (experiments/planning/costs.py). A judge's prompts for one reading
differ only in the few ids after the judged text, so vLLM's prefix cache holds all but the
last block of each after the first (BLOCK tokens a block, its default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from diarylab.chatbots.specs import LocalChatbotSpec, ServedChatbotSpec
from diarylab.experiments.checks.probes import CHATBOT_PROBE, PING, probes_chatbot
from diarylab.experiments.engine.workload import Texts, conversation_tokens, text_tokens
from diarylab.experiments.planning.judge_plan import JudgePlan
from diarylab.experiments.planning.plan import Plan
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec

BLOCK = 16  # vLLM's KV-cache block: a prefix is cached in whole blocks
Where = Literal["local", "served", "api"]


@dataclass(frozen=True)
class Work:
    """One model's work in one phase."""

    phase: str
    requests: float  # texts written or prompts read
    prompt: float | None  # prompt tokens sent (None: not counted)
    cached: float  # of these, the prefix a serving engine's cache holds
    decoded: float  # generated tokens, at most
    context: float  # mean tokens in view while a sequence decodes

    def computed(self) -> float | None:
        """Prompt tokens computed: those sent less those a cache holds."""
        return None if self.prompt is None else self.prompt - self.cached


@dataclass(frozen=True)
class ModelWork:
    who: str  # "diarist", a chatbot id or a judge id
    model: str  # the model the design names
    where: Where
    concurrency: int  # sequences it is asked to hold at once (batch or endpoint concurrency)
    longest: float  # the longest prompt plus its new tokens: what one sequence may need
    parts: tuple[Work, ...]
    # A judge's prompts if every reading took every trie node, over those planned: how far a
    # bounded judge's stated figures can be off (1: the figures are exact or at most).
    most_factor: float = 1.0

    def total(self, field: str) -> float | None:
        values = [getattr(w, field) for w in self.parts]
        return None if any(v is None for v in values) else float(sum(values))

    def computed(self) -> float | None:
        """Prompt tokens the model computes: those sent less those its cache holds."""
        prompt = self.total("prompt")
        return None if prompt is None else prompt - (self.total("cached") or 0.0)


def model_work(plan: Plan) -> list[ModelWork]:
    """Every model the design runs, in the order a reader meets them."""
    spec = plan.design.spec
    out: list[ModelWork] = []
    writer = spec.writing_model
    mine = [(t, n) for t, n in plan.texts() if t.model and t.writer == "diarist"]
    if writer is not None and mine:
        parts = tuple(_writing(t.phase, n, t.prompt_tokens, t.cached_tokens, t.max_tokens or 0)
                      for t, n in mine)  # fmt: skip
        longest = max(_longest(t) for t, _ in mine)
        out.append(ModelWork("diarist", writer.model, "local", writer.local.batch_size, longest,
                             _merged(parts)))  # fmt: skip
    for bot in spec.chatbots:
        texts = [(t, n) for t, n in plan.texts() if t.model and t.writer == bot.id]
        if not texts or not isinstance(bot, (LocalChatbotSpec, ServedChatbotSpec)):
            continue
        if isinstance(bot, LocalChatbotSpec):
            where: Where = "local"
            width = bot.local.batch_size
        else:
            where = "served" if _self_hosted(bot) else "api"
            width = bot.endpoint.concurrency
        parts = tuple(_writing(t.phase, n, t.prompt_tokens, t.cached_tokens if where == "served"
                               else 0.0, t.max_tokens or 0) for t, n in texts)  # fmt: skip
        if isinstance(bot, ServedChatbotSpec) and probes_chatbot(bot):
            parts += (_probe_work(),)
        longest = max(_longest(t) for t, _ in texts)
        out.append(ModelWork(bot.id, bot.model, where, width, longest, _merged(parts)))
    judges = {j.id: j for j in spec.judges}
    for j in plan.judges:
        out.append(_judge_work(j, judges[j.judge], plan))
    return out


def _longest(t: Texts) -> float:
    """The most tokens one sequence of these texts holds: its longest prompt and its text."""
    prompt = t.longest_prompt if t.longest_prompt is not None else t.prompt_tokens
    return (prompt or 0.0) + (t.max_tokens or 0)


def _probe_work() -> Work:
    """The check's one short reply before a run (experiments/checks/probes.py)."""
    prompt = conversation_tokens([text_tokens(PING.messages[0][1])])
    most = CHATBOT_PROBE.max_new_tokens
    return Work("chatbots", 1, prompt, 0.0, most, prompt + most / 2)


def _writing(phase: str, count: float, prompt: float | None, cached: float, most: int) -> Work:
    """`cached`: the mean prefix held, of which the cache keeps whole blocks only."""
    tokens = None if prompt is None else count * prompt
    held = max(cached - BLOCK / 2, 0.0) if cached else 0.0
    return Work(phase, count, tokens, count * held, count * most, (prompt or 0) + most / 2)


def _merged(parts: tuple[Work, ...]) -> tuple[Work, ...]:
    """One Work per phase (a phase's texts of several kinds summed)."""
    out: dict[str, Work] = {}
    for w in parts:
        if w.phase not in out:
            out[w.phase] = w
            continue
        o = out[w.phase]
        prompt = None if o.prompt is None or w.prompt is None else o.prompt + w.prompt
        requests = o.requests + w.requests
        context = (o.context * o.requests + w.context * w.requests) / max(requests, 1)
        out[w.phase] = Work(w.phase, requests, prompt, o.cached + w.cached,
                            o.decoded + w.decoded, context)  # fmt: skip
    return tuple(out.values())


def _self_hosted(bot: ServedChatbotSpec) -> bool:
    return bot.model.startswith("hosted_vllm/") or bool(bot.endpoint.urls)


def _computed(j: JudgePlan, plan: Plan, question: str, readings: int, size: float) -> float:
    """Prompt tokens a served judge computes for `readings` of a question: a reading's prompts
    after its first differ only in the ids after the judged text (a trie walk's next node),
    and the readings of one group (a reply's rubric questions) only in the question after
    it; the cache holds the rest, in whole blocks."""
    per = j.cost.number_expected if question == "number" else j.cost.yes_no
    prompts = per.prompts or 1.0
    first = size + (prompts - 1) * (BLOCK / 2 + 1)  # one reading
    tail = plan.workload.after_text.get(question)
    if tail is None:
        return readings * first
    groups = {
        size_: count
        for part in plan.workload.together
        if part.question == question and part.whole
        for size_, count in part.batches(j.cost.batch).items()
    }
    grouped = sum(n * c for n, c in groups.items())
    if not grouped or grouped > readings:
        return readings * first
    again = (tail + BLOCK / 2) + (prompts - 1) * (BLOCK / 2 + 1)  # a group's later reading
    in_groups = sum(c * (first + (n - 1) * again) for n, c in groups.items())
    return in_groups + (readings - grouped) * first


def _judge_work(j: JudgePlan, spec: LocalJudgeSpec | ServedJudgeSpec, plan: Plan) -> ModelWork:
    """Prompts by question: each reading's prompts share its judged text, so all but the first
    find their prefix cached (an exact served judge); a local judge reads in forward passes."""
    c = j.cost
    template = float(c.prompt_tokens or 0)
    judged = plan.workload.judged_mean
    whole = float(plan.workload.judged_tokens)
    local = spec.local_weights() is not None  # read in forward passes on this machine
    parts: list[Work] = []
    longest = 0.0
    per_question = {"number": c.number_expected, "yes_no": c.yes_no}
    for phase, readings in (("profiles", {"number": j.profile_readings}), ("judging", j.readings)):
        for question, count in readings.items():
            per = per_question.get(question)
            if not count or per is None:
                continue
            prompts = None if per.prompts is None else count * per.prompts
            size = template + judged.get(question, whole)
            most = plan.workload.judged_longest.get(question, judged.get(question, whole))
            longest = max(longest, template + most + 1)
            if prompts is None or c.prompt_tokens is None:
                parts.append(Work(phase, count, None, 0.0, 0.0, size))
                continue
            computed = prompts * size if local else _computed(j, plan, question, count, size)
            cached = prompts * size - computed
            parts.append(Work(phase, prompts, prompts * size, cached, prompts, size))
    if c.probe.prompts:
        probe = float(c.probe.prompts)
        parts.append(Work("judging", probe, probe * template, 0.0, probe, template))
    if j.grader_answers:
        most = next((t.max_tokens or 0 for t in plan.workload.texts if t.per_judge), 0)
        parts.append(Work("grading", j.grader_answers, None, 0.0, j.grader_answers * most, whole))
    width, model = spec.concurrency, spec.model
    expected, exact = j.requests("expected"), j.requests("exact")
    factor = exact / expected if expected and exact and exact > expected else 1.0
    return ModelWork(j.judge, model, "local" if local else "served", width, longest,
                     _merged(tuple(parts)), factor)  # fmt: skip
