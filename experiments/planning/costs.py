"""What one reading costs a judge: prompts and HTTP requests per 0–100 reading and per yes/no
reading, and the prompt tokens of one request, from the judge's own tokenizer and the reader a
run would use (experiments/planning/simulated.py). A served exact judge's 0–100 count is exact
at max_error 0 (every trie node) and the worst case of a bounded reading; a bounded reading's
expected count is an estimate for a confident judge; a top-k judge (no tokenizer) reads by
chat, where the count depends on the judge alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from diarylab.experiments.planning.cost_cache import kept_reading_cost
from diarylab.experiments.planning.cost_records import Count, ReadingCost
from diarylab.experiments.planning.simulated import (
    CONFIDENT,
    StatedChat,
    StatedJudge,
    StatedServer,
    confident_at,
    variant,
)
from diarylab.foundation.errors import LabError
from diarylab.model_access.loading import load_tokenizer
from diarylab.model_access.served import ServedClient
from diarylab.rubric.judging.expected import ALL_NODE_TEXTS, SPACE
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec, reading_settings
from diarylab.rubric.judging.number_trie import number_trie
from diarylab.rubric.judging.served_exact import ExactReader
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.judging.vocab import vocab_facts
from diarylab.rubric.probe_prompt import number_probe
from diarylab.rubric.prompts import JudgePrompt


def reading_cost(
    spec: LocalJudgeSpec | ServedJudgeSpec,
    samples: dict[str, JudgePrompt],
    tokenizer_name: str | None = None,
    batch_sizes: Sequence[int] = (),
) -> ReadingCost:
    """`tokenizer_name` counts with another tokenizer than the design names (one that splits
    numbers alike, where the judge's own is not on this machine); the note says so.
    `batch_sizes`: how many 0–100 readings a run reads together (a bounded judge's batches are
    counted in step)."""
    return spec.counted_by(_Counter(samples, tokenizer_name, batch_sizes))


@dataclass(frozen=True)
class _Counter:
    """Counts a reading the way the judge's spec says it is read (ReadingCounter)."""

    samples: dict[str, JudgePrompt]
    tokenizer_name: str | None
    batch_sizes: Sequence[int]

    def local(self, spec: LocalJudgeSpec) -> ReadingCost:
        # Counted in readings (each a few batched forward passes), so a rate in readings per
        # second gives its hours; no HTTP.
        local = Count(1, 0, "local")
        return ReadingCost(
            spec.id,
            "local",
            local,
            local,
            local,
            local,
            None,
            "local judge: read in batched forward passes on this machine, no HTTP requests "
            "(counted in readings; --rate in readings per second)",
        )

    def top_k(self, spec: ServedJudgeSpec) -> ReadingCost:
        return _top_k_cost(spec, self.samples["number"])

    def exact(self, spec: ServedJudgeSpec) -> ReadingCost:
        assert spec.tokenizer is not None  # an exact reading needs one (ServedJudgeSpec)
        named = self.tokenizer_name or spec.tokenizer
        instead = f"counted with tokenizer {named!r} in place of {spec.tokenizer!r}; "
        samples, changed = self.samples, bool(self.tokenizer_name)
        return kept_reading_cost(
            spec,
            samples,
            named,
            self.batch_sizes,
            lambda sizes: _exact_cost(spec, samples, named, instead if changed else "", sizes),
        )


def _exact_cost(
    spec: ServedJudgeSpec,
    samples: dict[str, JudgePrompt],
    named: str,
    instead: str,
    batch_sizes: Sequence[int],
) -> ReadingCost:
    """A served exact judge's cost, read by a stated judge through the reader a run uses."""
    number = samples["number"]
    try:
        tokenizer = load_tokenizer(named)
    except LabError as exc:
        unknown = Count(None, None, "unknown")
        reason = str(exc).split(" — fix: ")[0]
        return ReadingCost(
            spec.id,
            _mode(spec),
            unknown,
            unknown,
            unknown,
            Count(1, 1, "trie"),
            None,
            f"tokenizer {named!r} not loadable here ({reason}): counts need it (plan "
            "--tokenizer JUDGE=NAME counts with one that splits numbers alike)",
            *_lists(spec),
        )
    exact_settings, _ = reading_settings(spec)
    rendered = render_judge_prompt(
        tokenizer, number, reasoning_effort=exact_settings.reasoning_effort
    )
    trie = number_trie(tokenizer, rendered.text)
    facts = vocab_facts(tokenizer)
    end = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    stated_end = (len(tokenizer), int(end))
    stated = StatedJudge(trie, *stated_end, CONFIDENT)

    def counted(
        max_error: float, prompt: JudgePrompt, question: str, marks: tuple[int, ...] = ()
    ) -> Count:
        server = StatedServer(replace(stated, marks=marks), spec.endpoint, spec.model)
        settings = replace(exact_settings, max_error=max_error)
        judge = ServedJudge(
            cast(ServedClient, server), tokenizer=tokenizer, mode="exact", exact=settings
        )
        judge._facts = facts  # computed once for every count of this judge
        read: Any = judge.number_record if question == "number" else judge.yes_no_record
        read(prompt)
        return Count(server.prompts, server.http_requests, "trie")

    def probed() -> Count:
        server = StatedServer(stated, spec.endpoint, spec.model)
        judge = ServedJudge(
            cast(ServedClient, server), tokenizer=tokenizer, mode="exact", exact=exact_settings
        )
        judge._facts = facts
        reader = judge._reader()
        assert isinstance(reader, ExactReader)
        probe = number_probe()
        reader.root_coverage(probe)
        reader.first_tokens(probe)
        # and the check's one request for the log-probabilities the readings ask, sent to a
        # server of the researcher's own (experiments/checks/reach.py check_logprobs)
        asked = 1 if spec.endpoint.urls else 0
        return Count(server.prompts + asked, server.http_requests + asked, "trie")

    def in_step(size: int, alike: bool = False) -> Count:
        """`size` bounded readings of the sample, each by a confident judge of its own number
        (simulated.confident_at; `alike`: all by CONFIDENT), walked in step as a run's batch
        is."""
        prompts = [variant(number, k) for k in range(size)]
        judges: list[StatedJudge] = []
        for prompt in prompts:
            text = render_judge_prompt(
                tokenizer, prompt, reasoning_effort=exact_settings.reasoning_effort
            )
            numbers = CONFIDENT if alike else confident_at(len(judges))
            judges.append(StatedJudge(number_trie(tokenizer, text.text), *stated_end, numbers))
        server = StatedServer(judges, spec.endpoint, spec.model)
        judge = ServedJudge(
            cast(ServedClient, server), tokenizer=tokenizer, mode="exact", exact=exact_settings
        )
        judge._facts = facts
        judge.records("number", prompts)
        return Count(server.prompts, server.http_requests, "estimate")

    full = counted(0.0, number, "number")
    worst = counted(0.0, number, "number", facts.point_ids)
    bounded = spec.max_error > 0
    expected = counted(spec.max_error, number, "number") if bounded else full
    if bounded:
        expected = Count(expected.prompts, expected.http, "estimate")
    yes_no = counted(0.0, samples["yes_no"], "yes_no")
    return ReadingCost(
        spec.id,
        _mode(spec),
        full,
        worst,
        expected,
        yes_no,
        len(trie.prompt_ids),
        f"{instead}{_stood_in(tokenizer)}{len(trie.nodes)} trie "
        f"nodes, {spec.ids_per_request} ids per request",
        *_lists(spec),
        probed(),
        {size: in_step(size) for size in sorted(set(batch_sizes))} if bounded else {},
        {size: in_step(size, alike=True) for size in sorted(set(batch_sizes))} if bounded else {},
    )


def _lists(spec: ServedJudgeSpec) -> tuple[int, int]:
    return spec.endpoint.prompts_per_request, spec.endpoint.concurrency


def _stood_in(tokenizer: Any) -> str:
    """Which tokenizer counted, where the hub cache lacked the judge's own."""
    stand_in = getattr(tokenizer, "stand_in", None)
    if stand_in is None:
        return ""
    return (
        f"counted with the stand-in tokenizer {stand_in} (not in the hub cache; "
        "model_access/seed_tokenizers.toml says why it matches); "
    )


def _mode(spec: ServedJudgeSpec) -> str:
    return f"bounded (max_error {spec.max_error:g})" if spec.max_error > 0 else "exact"


def _top_k_cost(spec: ServedJudgeSpec, number: JudgePrompt) -> ReadingCost:
    """A chat reading asks one request, then one per node above expand_floor that the paths
    written so far missed: at most one per node text the reader knows (ALL_NODE_TEXTS)."""
    _, chat = reading_settings(spec)
    server = StatedChat(CONFIDENT, number.prefill or "", spec.endpoint, spec.model)
    judge = ServedJudge(cast(ServedClient, server), mode="top-k", chat=chat)
    judge.number_record(number)
    worst = 1 + len(ALL_NODE_TEXTS - {SPACE}) if chat.prefill else 1
    one = Count(1, 1, "trie")
    return ReadingCost(
        spec.id,
        "top-k",
        Count(worst, worst, "trie"),
        Count(worst, worst, "trie"),
        Count(server.requests, server.requests, "estimate"),
        one,
        None,
        "top-k chat reading (no tokenizer): never exact; 'every node' is each node text read "
        "once, the most a reading can ask",
        probe=Count(server.requests, server.requests, "estimate"),
    )
