"""Phase two of a diary run: every judge scores every entry (pattern for each pattern the design
names, coherence, realism) and every reply (the behavior rubric). Questions about the person are
asked of the entry alone, so the judge's view of the person does not depend on the chatbot.

Each judge call goes through the store: its key is the judge's request key (identity + prompt),
its raw per-node log-probabilities are stored with the judgment row in one transaction, and the
reading is recomputed from that stored record — the same path whether the call was just made or
read back on resume."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from diarists.patterns import load_pattern
from experiments.cells import Cell
from experiments.conversations import DiaristProfile, history
from experiments.design import Design, JudgeSpec
from experiments.store import JudgmentRow, Store
from rubric.behavior import load_behavior_rubric, reply_prompts
from rubric.entry_scores import EntryTemplates, entry_prompts
from rubric.expected import NumberReading
from rubric.judge_base import Judge
from rubric.judges import make_judge
from rubric.local_judge import LocalJudge
from rubric.prompts import JudgePrompt, TemplateRef, load_template
from rubric.yes_no import YesNoReading

Tick = Callable[[int], None]
Question = Literal["number", "yes_no"]


@dataclass(frozen=True)
class Task:
    """One judge call to make (or read back): what it judges and the prompt."""

    target_kind: str  # "entry" | "reply"
    target_id: str
    item: str
    question: Question
    prompt: JudgePrompt
    template: TemplateRef


class JudgeSet:
    """The design's judges, built on first use; local ones share the run's loaded models."""

    def __init__(self, design: Design, models: Any) -> None:
        self.specs = design.judges
        self.models = models
        self._built: dict[str, Judge] = {}

    def get(self, spec: JudgeSpec) -> Judge:
        if spec.id not in self._built:
            if spec.kind == "local":
                self._built[spec.id] = LocalJudge(self.models.get(spec.model))
            else:
                model = spec.model
                self._built[spec.id] = make_judge(
                    f"litellm:{model}",
                    base_url=spec.base_url,
                    api_key_env=spec.api_key_env,
                    tokenizer=spec.tokenizer,
                )
        return self._built[spec.id]


def pattern_specs(design: Design) -> list[tuple[str, str, str]]:
    return [(p.id, p.name, p.definition) for p in map(load_pattern, design.score_patterns)]


def entry_items(design: Design) -> list[str]:
    items = (
        [f"pattern:{p}" for p in design.score_patterns] if "pattern" in design.entry_scores else []
    )
    return items + [s for s in ("coherence", "realism") if s in design.entry_scores]


def planned_judgments(design: Design, cells: Sequence[Cell], profiles: Any) -> int:
    rubric = load_behavior_rubric()
    entries = {c.entry_id(k) for c in cells for k in range(1, design.entries + 1)}
    replies = len(cells) * design.entries
    per_entry = len(entry_items(design)) + len(rubric.person)
    return len(design.judges) * (len(entries) * per_entry + replies * len(rubric.questions))


def tasks(store: Store, design: Design, cells: Sequence[Cell]) -> Iterator[Task]:
    """Every judgment the design asks for, entries first, in a fixed order."""
    templates = EntryTemplates.load()
    rubric = load_behavior_rubric()
    person_t, reply_t = load_template("person_question"), load_template("reply_question")
    wanted = set(entry_items(design))
    patterns = pattern_specs(design)
    refs = {"coherence": templates.coherence.ref, "realism": templates.realism.ref}
    seen: set[str] = set()
    for cell in cells:
        for k in range(1, design.entries + 1):
            entry = store.entry(cell.entry_id(k))
            reply = store.reply(cell.reply_id(k))
            assert entry is not None and reply is not None
            earlier, answers = history(store, cell, k - 1, k - 1)
            conversation = _conversation(earlier, answers)
            person, questions = reply_prompts(
                entry.text, reply.text, conversation, rubric, person_t, reply_t
            )
            if entry.entry_id not in seen and entry.text.strip():
                prompts = entry_prompts(entry.text, patterns, templates)
                for item, prompt in prompts.items():
                    if item in wanted:
                        ref = refs.get(item, templates.pattern.ref)
                        yield Task("entry", entry.entry_id, item, "number", prompt, ref)
                for qid, prompt in person.items():
                    yield Task(
                        "entry", entry.entry_id, f"person:{qid}", "yes_no", prompt, person_t.ref
                    )
            seen.add(entry.entry_id)
            for qid, prompt in questions.items():
                yield Task("reply", reply.reply_id, qid, "yes_no", prompt, reply_t.ref)


def _conversation(entries: list[str], replies: list[str]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for entry, reply in zip(entries, replies, strict=True):
        out += [{"role": "user", "content": entry}, {"role": "assistant", "content": reply}]
    return out


def _row(task: Task, judge_id: str, key: str, record: dict[str, Any], floor: float) -> JudgmentRow:
    reading: NumberReading | YesNoReading
    if task.question == "number":
        reading = NumberReading.from_record(record, floor=floor)
        value = reading.mean
    else:
        reading = YesNoReading.from_record(record, floor=floor)
        value = reading.p_yes
    return JudgmentRow(
        judgment_id=f"{judge_id}:{task.target_id}:{task.item}",
        target_kind=task.target_kind,
        target_id=task.target_id,
        judge=judge_id,
        item=task.item,
        value=value,
        coverage=reading.coverage,
        readable=reading.readable,
        template=f"{task.template.id}@{task.template.version}:{task.template.sha256[:12]}",
        call_key=key,
    )


def judge_all(
    store: Store,
    judges: JudgeSet,
    design: Design,
    cells: Sequence[Cell],
    profiles: dict[str, DiaristProfile],
    tick: Tick,
) -> None:
    done = store.ids("judgments", "judgment_id")
    for spec in design.judges:
        pending: list[tuple[Task, str]] = []
        judge: Judge | None = None
        for task in tasks(store, design, cells):
            jid = f"{spec.id}:{task.target_id}:{task.item}"
            if jid in done:
                tick(1)
                continue
            done.add(jid)
            judge = judge or judges.get(spec)
            key = judge.request_key(task.prompt, task.question)
            cached = store.get_call(key)
            if cached is not None:
                store.put_rows(_row(task, spec.id, key, cached, design.coverage_floor))
                tick(1)
            else:
                pending.append((task, key))
        if pending:
            assert judge is not None
            _call(store, judge, spec, pending, design.coverage_floor, tick)


def _groups(pending: list[tuple[Task, str]]) -> list[list[tuple[Task, str]]]:
    """Consecutive yes/no questions about the same entry or reply: their prompts share all but
    the question, so a local judge reads them in one pass over the shared part."""
    groups: list[list[tuple[Task, str]]] = []
    for item in pending:
        task = item[0]
        last = groups[-1][0][0] if groups else None
        if (
            last is not None
            and task.question == "yes_no"
            and last.question == "yes_no"
            and (last.target_kind, last.target_id, last.item.startswith("person:"))
            == (task.target_kind, task.target_id, task.item.startswith("person:"))
        ):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _call(
    store: Store,
    judge: Judge,
    spec: JudgeSpec,
    pending: list[tuple[Task, str]],
    floor: float,
    tick: Tick,
) -> None:
    def one(item: tuple[Task, str]) -> dict[str, Any]:
        task, _ = item
        if task.question == "number":
            return judge.number_record(task.prompt)
        return judge.yes_no_record(task.prompt)

    def store_one(item: tuple[Task, str], record: dict[str, Any]) -> None:
        task, key = item
        store.put_call(
            key,
            "judge",
            spec.id,
            {"question": task.question, "prompt": task.prompt.key_fields()},
            record,
            _row(task, spec.id, key, record, floor),
        )
        tick(1)

    if spec.kind == "local":
        for group in _groups(pending):
            task = group[0][0]
            batched = getattr(judge, "yes_no_records", None)
            if task.question == "yes_no" and len(group) > 1 and batched is not None:
                records = batched([t.prompt for t, _ in group])
                store.put_calls(
                    [
                        (
                            key,
                            "judge",
                            spec.id,
                            {"question": t.question, "prompt": t.prompt.key_fields()},
                            rec,
                            (_row(t, spec.id, key, rec, floor),),
                        )
                        for (t, key), rec in zip(group, records, strict=True)
                    ]
                )
                tick(len(group))
            else:
                for item in group:
                    store_one(item, one(item))
        return
    # Served judges answer in parallel; results come back in order and are stored by this
    # thread, the store's only writer.
    with ThreadPoolExecutor(max_workers=max(1, spec.concurrency)) as pool:
        for start in range(0, len(pending), 4 * spec.concurrency):
            part = pending[start : start + 4 * spec.concurrency]
            for item, record in zip(part, pool.map(one, part), strict=True):
                store_one(item, record)
