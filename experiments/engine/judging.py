"""The judging phase, shared by every experiment kind: each judge of the design reads every task
the kind lists. Each judge call goes through the store's cached-call door — keyed by the judge's
identity and the prompt, its raw per-node log-probabilities stored with the judgment row in one
transaction — and the reading is recomputed from the stored record, the same path whether the
call was just made or read back on resume. The kinds run their judges at once, each judge's
calls in a lane (experiments/engine/lanes.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from diarylab.experiments.engine.lanes import run_spread
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.engine.tasks import Task, Tick
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.number_reading import number_summary
from diarylab.rubric.judging.yes_no import yes_no_summary
from diarylab.rubric.prompts import JudgePrompt


def judgment_row(
    task: Task, judge_id: str, key: str, record: Mapping[str, Any], floor: float
) -> JudgmentRow:
    # What the row keeps, recomputed from the stored record (the readings' full objects, bound
    # and all, are the report's to rebuild).
    if task.question == "number":
        reading = number_summary(record, floor=floor)
    else:
        reading = yes_no_summary(record, floor=floor)
    return JudgmentRow(
        judgment_id=judgment_id(judge_id, task),
        target_kind=task.target_kind,
        target_id=task.target_id,
        judge=judge_id,
        item=task.item,
        value=reading.value,
        coverage=reading.coverage,
        readable=reading.readable,
        template=f"{task.template.id}@{task.template.version}:{task.template.sha256[:12]}",
        call_key=key,
    )


def judgment_id(judge_id: str, task: Task) -> str:
    return f"{judge_id}:{task.target_id}:{task.item}"


def judge_tasks(
    store: Store,
    judge_id: str,
    get_judge: Callable[[], Judge],
    tasks: Iterable[Task],
    floor: float,
    tick: Tick,
) -> None:
    """Every task not yet judged by this judge, through the store. The judge is built only
    when there is something to read (a resumed run with every judgment done loads nothing)."""
    done = store.ids(JudgmentRow)
    pending = []
    for task in tasks:
        if judgment_id(judge_id, task) in done:
            store.kept += 1  # a resumed run's finished reading: read from the store
            tick(1)
        else:
            pending.append(task)
    if not pending:
        return
    judge = get_judge()
    identity = judge.identity()
    jobs = [
        lambda batch=items, question=question, grouped=grouped: _judge_batch(
            store, judge_id, judge, identity, batch, question, floor, tick, grouped
        )
        for question, grouped, items in reading_runs(pending)
    ]
    width = store.executor.width
    if width > 1 and len(jobs) > 1:
        # Under the Ray executor each group (one batch) can go to an actor of its own.
        run_spread(store, jobs, width)
        return
    for job in jobs:
        job()


def reading_runs(tasks: Iterable[Task]) -> list[tuple[str, bool, list[Task]]]:
    """(question, grouped, tasks) in the order the judging phase reads them. Consecutive tasks
    of one group share a prompt prefix: one batch, so a local judge reads them in one pass. A
    question's ungrouped tasks are read together wherever the kind lists them (an entry's
    scores between its replies' question groups, a letter's identity check after its scores),
    in batches as large as the judge keeps busy: a bounded judge's readings in step share more
    requests, and a served judge gets full lists."""
    runs: list[tuple[str, bool, list[Task]]] = []
    loose: dict[str, list[Task]] = {}
    for (question, group), items in groupby(tasks, key=lambda t: (t.question, t.group)):
        if group:
            runs.append((question, True, list(items)))
        elif question in loose:
            loose[question].extend(items)
        else:
            loose[question] = list(items)
            runs.append((question, False, loose[question]))
    return runs


def _judge_batch(
    store: Store,
    judge_id: str,
    judge: Judge,
    identity: Mapping[str, Any],
    tasks: Sequence[Task],
    question: Any,
    floor: float,
    tick: Tick,
    grouped: bool,
) -> None:
    store.cached_calls(
        "judge",
        judge_id,
        identity,
        [{"question": t.question, "prompt": t.prompt.key_fields()} for t in tasks],
        lambda idx: _records(judge, question, [tasks[i].prompt for i in idx]),
        rows=lambda i, record, key: (judgment_row(tasks[i], judge_id, key, record, floor),),
        batch_size=len(tasks) if grouped else max(judge.batch_size, 1),
        done=tick,
    )


def _records(judge: Judge, question: Any, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
    """The judge's records, each with what its server says it serves (a served judge's dtype):
    stored with the reading, so the report names it from the store alone. A record's own
    fields win (a local judge's records name their dtype themselves)."""
    about = judge.server_about()
    return [{**about, **record} for record in judge.records(question, prompts)]
