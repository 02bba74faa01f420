"""What one reading costs a judge, as the plan counts it (experiments/planning/costs.py works
it out; experiments/planning/cost_cache.py keeps it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Basis = Literal["trie", "estimate", "unknown", "local", "measured"]


@dataclass(frozen=True)
class Count:
    prompts: float | None  # None: unknown (no tokenizer to count with)
    http: float | None
    basis: Basis


@dataclass(frozen=True)
class ReadingCost:
    judge: str
    mode: str  # "exact", "bounded (max_error P)", "top-k", "local"
    number_exact: Count  # every trie node, no decimal mark followed up
    number_worst: Count  # every trie node and every mark after a number followed up
    number_expected: Count  # bounded: an estimate; exact: as number_exact
    yes_no: Count
    prompt_tokens: int | None  # tokens of one request's rendered prompt, before the judged text
    note: str = ""
    # How an exact served judge's yes/no prompts travel (ServedJudge.records): a batch of
    # readings (a reply's rubric questions, else `batch` at a time) in one round, sent as lists
    # of up to `yes_no_list` prompts. 1: one prompt per HTTP request.
    yes_no_list: int = 1
    batch: int = 1
    # The run's preflight reads each served judge's probe prompt once before any reading
    # (experiments/running/preflight.py: the root, a list of two prompts, the first tokens written),
    # and asks a self-hosted one once for the log-probabilities its readings need.
    probe: Count = Count(0, 0, "local")
    # Bounded 0–100 readings read together walk in step (rubric/judging/served_bounded.py):
    # {readings in a batch: the batch's prompts and HTTP requests}, for the batch sizes the
    # run reads (Workload.together), each reading by a confident judge of its own number;
    # `_alike`: every reading of the batch by the same one (they walk alike: the fewest
    # requests). Empty: readings counted one by one.
    number_batches: Mapping[int, Count] = field(default_factory=dict)
    number_batches_alike: Mapping[int, Count] = field(default_factory=dict)
