"""One judge's part of a plan: its readings by question and what they cost it — prompts
expected, reading every trie node and at most; HTTP requests, with bounded readings counted in
the batches a run reads them in (experiments/engine/workload.py ReadTogether); prompt tokens."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from diarylab.experiments.engine.workload import ReadTogether, chunks, read_batches
from diarylab.experiments.planning.cost_records import Count, ReadingCost
from diarylab.experiments.planning.measured import JudgeMeasure

PlanPart = Literal["run", "profiles", "all"]


@dataclass(frozen=True)
class JudgePlan:
    judge: str
    readings: Mapping[str, int]
    grader_answers: int  # texts this judge writes (a benchmark's grader answers): 1 request each
    cost: ReadingCost
    judged_tokens: int
    measure: JudgeMeasure | None = None  # `plan --measure`: what the judge itself took
    together: tuple[ReadTogether, ...] = ()  # Workload.together
    profile_readings: int = 0  # 0–100 readings while the inline profiles are made (calibration)

    def all_readings(self) -> dict[str, int]:
        """The run's readings and the profile making's, by question."""
        out = dict(self.readings)
        if self.profile_readings:
            out["number"] = out.get("number", 0) + self.profile_readings
        return out

    def measured_range(self) -> tuple[float, float] | None:
        """Prompts in all, at the fewest and the most a sampled reading took per question."""
        m = self.measure
        if m is None or m.failed or not m.by_question:
            return None
        low = high = float(self.grader_answers) + (self.cost.probe.prompts or 0)
        for question, count in self.all_readings().items():
            taken = m.by_question.get(question)
            if taken is None:
                return None
            low += count * min(taken.prompts)
            high += count * max(taken.prompts)
        return low, high

    def requests(self, which: str) -> float | None:
        """Prompts this judge is asked: "expected", "exact" (every trie node) or "worst"
        (every trie node and mark); None when a count is unknown."""
        count = {
            "expected": self.cost.number_expected,
            "exact": self.cost.number_exact,
            "worst": self.cost.number_worst,
        }[which]
        total = _total(self.all_readings(), count, self.cost.yes_no, self.grader_answers, "prompts")
        probe = self.cost.probe.prompts
        return None if total is None or probe is None else total + probe

    def http(self, alike: bool = False) -> float | None:
        """HTTP requests in all; `alike`: if every batch's bounded readings walked alike."""
        number, yes_no, probe = self.number_http(alike), self.yes_no_http(), self.cost.probe.http
        if number is None or yes_no is None or probe is None:
            return None
        return number + yes_no + probe + self.grader_answers

    def batches(self, question: str) -> dict[int, int]:
        """{readings read together: how many such batches} for the run's readings of a question
        (Workload.together), else a judge's batch at a time."""
        n = self.readings.get(question, 0)
        return read_batches(self.together, question, n, self.cost.batch)

    def number_http(self, alike: bool = False, part: PlanPart = "all") -> float | None:
        """Bounded 0–100 readings read together walk in step and share each round's HTTP
        requests (ReadingCost.number_batches, or number_batches_alike); other readings are
        counted one by one. `part`: "run" (the run's readings, in its batches), "profiles"
        (the inline profiles' readings, a judge's batch at a time) or "all"."""
        if part == "all":
            run, profiles = self.number_http(alike, "run"), self.number_http(alike, "profiles")
            return None if run is None or profiles is None else run + profiles
        c = self.cost
        in_step = c.number_batches_alike if alike else c.number_batches
        per = c.number_expected.http
        width = max(c.batch, 1)
        run = part == "run"
        sizes = self.batches("number") if run else chunks(self.profile_readings, width)
        n = sum(size * count for size, count in sizes.items())
        if not n:
            return 0.0
        if per is None:
            return None
        if not in_step or c.number_expected.basis == "measured":
            return n * per
        return float(
            sum(
                count * (in_step[size].http or 0) if size in in_step else count * size * per
                for size, count in sizes.items()
            )
        )  # fmt: skip

    def yes_no_http(self) -> float | None:
        """A batch of yes/no readings goes as one round of prompt lists: ⌈batch ÷ list⌉ HTTP
        requests per id block of a prompt (ReadingCost.yes_no_list)."""
        n = self.readings.get("yes_no", 0)
        per = self.cost.yes_no.http
        if not n:
            return 0.0
        if per is None:
            return None
        size = self.cost.yes_no_list
        if size <= 1 or per == 0:
            return n * per
        groups = self.batches("yes_no")
        return float(sum(count * -(-g // size) for g, count in groups.items()) * per)

    def prompt_tokens(self) -> float | None:
        """At most: each prompt's rendered template plus its judged text at full length."""
        asked = self.requests("expected")
        if asked is None or self.cost.prompt_tokens is None:
            return None
        return asked * (self.cost.prompt_tokens + self.judged_tokens)


def _total(
    readings: Mapping[str, int], number: Count, yes_no: Count, answers: int, field: str
) -> float | None:
    parts = [(readings.get("number", 0), getattr(number, field))]
    parts.append((readings.get("yes_no", 0), getattr(yes_no, field)))
    if any(n and per is None for n, per in parts):
        return None
    return sum(n * (per or 0) for n, per in parts) + answers
