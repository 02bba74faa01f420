"""What the diary experiment asks every judge: each entry's pattern scores (for every pattern the
design names), coherence and realism, and the person questions asked of the entry alone; each
reply's behavior-rubric questions. The person questions see the entry without the reply, so the
judge's view of the person does not depend on the chatbot."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from diarylab.diarists.patterns import load_pattern
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.engine.workload import PLACEHOLDER, ReadTogether
from diarylab.experiments.kinds.diary.cells import Cell
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow, history
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.rubric.behavior import reply_prompts
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts
from diarylab.rubric.prompts import JudgePrompt, load_template


def entry_items(spec: DiaryDesignFile) -> list[str]:
    scores = spec.scores
    items = [f"pattern:{p}" for p in scores.pattern_ids] if "pattern" in scores.entry else []
    return items + [s for s in ("coherence", "realism") if s in scores.entry]


def planned_readings(spec: DiaryDesignFile, cells: Sequence[Cell]) -> dict[str, int]:
    """Per judge, by question: what diary_tasks yields when no entry came back empty (an empty
    entry is not judged, so a run may read fewer)."""
    rubric = load_behavior_rubric()
    entries = len({c.entry_id(k) for c in cells for k in range(1, spec.design.entries + 1)})
    replies = len(cells) * spec.design.entries
    return {
        "number": entries * len(entry_items(spec)),
        "yes_no": entries * len(rubric.person) + replies * len(rubric.questions),
    }


def planned_together(spec: DiaryDesignFile, cells: Sequence[Cell]) -> tuple[ReadTogether, ...]:
    """How the judging phase reads diary_tasks (experiments/engine/judging.py reading_runs):
    every entry's 0–100 scores together, each entry's person questions and each reply's rubric
    questions as a group."""
    rubric = load_behavior_rubric()
    entries = len({c.entry_id(k) for c in cells for k in range(1, spec.design.entries + 1)})
    replies = len(cells) * spec.design.entries
    parts = (
        ReadTogether("number", entries * len(entry_items(spec)), 1),
        ReadTogether("yes_no", len(rubric.person), entries, whole=True),
        ReadTogether("yes_no", len(rubric.questions), replies, whole=True),
    )
    return tuple(p for p in parts if p.size and p.count)


def planned_per_judge(spec: DiaryDesignFile, cells: Sequence[Cell]) -> int:
    return sum(planned_readings(spec, cells).values())


def sample_prompts(spec: DiaryDesignFile, text: str = PLACEHOLDER) -> dict[str, JudgePrompt]:
    """A 0–100 and a yes/no prompt of this design on an entry: the placeholder (`diarylab plan`)
    or a real text (`plan --measure`)."""
    patterns = [(p.id, p.name, p.definition) for p in map(load_pattern, spec.scores.pattern_ids)]
    number = entry_prompts(text, patterns, EntryTemplates.load())
    rubric = load_behavior_rubric()
    person = load_template("person_question")
    out = {"number": next(iter(number.values()))}
    if rubric.person:
        out["yes_no"] = person.prompt(entry=text, question=rubric.person[0].question)
    return out


def diary_tasks(store: Store, spec: DiaryDesignFile, cells: Sequence[Cell]) -> Iterator[Task]:
    """Every judgment the design asks of one judge, entries first, in a fixed order."""
    templates = EntryTemplates.load()
    rubric = load_behavior_rubric()
    person_t, reply_t = load_template("person_question"), load_template("reply_question")
    wanted = set(entry_items(spec))
    patterns = [(p.id, p.name, p.definition) for p in map(load_pattern, spec.scores.pattern_ids)]
    refs = {"coherence": templates.coherence.ref, "realism": templates.realism.ref}
    seen: set[str] = set()
    for cell in cells:
        for k in range(1, spec.design.entries + 1):
            entry = store.get(EntryRow, cell.entry_id(k))
            reply = store.get(ReplyRow, cell.reply_id(k))
            assert entry is not None and reply is not None
            earlier, answers = history(store, cell, k - 1, k - 1)
            person, questions = reply_prompts(
                entry.text, reply.text, _conversation(earlier, answers), rubric, person_t, reply_t
            )
            if entry.entry_id not in seen and entry.text.strip():
                for item, prompt in entry_prompts(entry.text, patterns, templates).items():
                    if item in wanted:
                        ref = refs.get(item, templates.pattern.ref)
                        yield Task("entry", entry.entry_id, item, "number", prompt, ref)
                for qid, prompt in person.items():
                    yield Task(
                        "entry",
                        entry.entry_id,
                        f"person:{qid}",
                        "yes_no",
                        prompt,
                        person_t.ref,
                        group=f"person:{entry.entry_id}",
                    )
            seen.add(entry.entry_id)
            for qid, prompt in questions.items():
                yield Task(
                    "reply",
                    reply.reply_id,
                    qid,
                    "yes_no",
                    prompt,
                    reply_t.ref,
                    group=f"reply:{reply.reply_id}",
                )


def _conversation(entries: list[str], replies: list[str]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for entry, reply in zip(entries, replies, strict=True):
        out += [{"role": "user", "content": entry}, {"role": "assistant", "content": reply}]
    return out
