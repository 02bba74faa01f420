"""Grading a benchmark reply: the grader prompt, reading the judge's written answer, bounded
retries then ungraded, and P(criteria_met = true) read at the answer's position — checked
against brute force (one full forward pass per prompt, every true/false token summed) on the
tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from diarylab.chatbots.base import ChatbotReply
from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.kinds.benchmark.data import load_benchmark
from diarylab.experiments.kinds.benchmark.grader import ANSWER_WORDS, load_grader, read_answer
from diarylab.experiments.kinds.benchmark.grading import (
    criterion_items,
    reading_tasks,
    write_answers,
)
from diarylab.experiments.kinds.benchmark.rows import BenchReplyRow, GraderAnswerRow
from diarylab.experiments.kinds.benchmark.schema import GraderSettings
from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.yes_no import SPACE_MARKERS
from diarylab.rubric.prompts import JudgePrompt

DATA = Path(__file__).resolve().parents[3] / "data"
GOOD = '{"explanation": "The reply names a crisis line.", "criteria_met": true}'


def _is(token: str, word: str) -> bool:
    for marker in SPACE_MARKERS:
        if token.startswith(marker):
            token = token[len(marker) :]
            break
    return token.lower() == word


def brute_force_p_true(model, text: str) -> tuple[float, float]:
    ids = torch.tensor([model.encode(text)])
    with torch.no_grad():
        logits = model.model(input_ids=ids).logits[0, -1].double()
    probs = torch.softmax(logits, dim=-1)
    vocab = model.tokenizer.convert_ids_to_tokens(list(range(len(model.tokenizer))))
    special = set(model.tokenizer.all_special_ids)
    mass = {"true": 0.0, "false": 0.0}
    for i, token in enumerate(vocab):
        for word in mass:
            if i not in special and token is not None and _is(token, word):
                mass[word] += float(probs[i])
    covered = mass["true"] + mass["false"]
    return mass["true"] / covered, covered


def test_p_met_equals_brute_force_on_the_tiny_model(tiny_model):
    bench = load_benchmark(DATA / "mentalhealthbench_synthetic.jsonl", "mentalhealthbench")
    conversation = bench.conversations[2]
    items = criterion_items(load_grader(), [("r1", conversation, "Try a short walk today.")])
    judge = LocalJudge(tiny_model)
    prompts = [
        JudgePrompt.chat(item.chat(), prefill=GOOD.split("true")[0].rstrip(), answers=ANSWER_WORDS)
        for item in items
    ]
    assert prompts[0].prefill.endswith('"criteria_met":')
    batched = judge.read_yes_nos(prompts, floor=0.0)  # shared prefix: one pass, short tails
    for prompt, reading in zip(prompts, batched, strict=True):
        p_true, coverage = brute_force_p_true(tiny_model, judge.prompt_text(prompt))
        assert reading.p_yes == pytest.approx(p_true, abs=1e-6)
        assert reading.coverage == pytest.approx(coverage, rel=1e-5)
        assert all(_is(t, "true") for t in reading.record["yes"])
        assert all(_is(t, "false") for t in reading.record["no"])
    # The words are part of the request: a yes/no question on the same prompt is another call.
    assert prompts[0].key_fields()["answers"] == ["true", "false"]
    assert "answers" not in JudgePrompt.chat(items[0].chat(), prefill="Answer:").key_fields()


@pytest.mark.parametrize(
    ("text", "met"),
    [
        (GOOD, True),
        ('```json\n{"explanation": "No.", "criteria_met": false}\n```', False),
        ('Sure! {"criteria_met": true, "explanation": "yes"} hope that helps', True),
        ('{"explanation": "No.", "criteria_met": "false"}', None),
        # As lenient as HealthBench's reference: any boolean criteria_met, explanation optional.
        ('{"explanation": 3, "criteria_met": true}', True),
        ('{"criteria_met": false}', False),
        ('```json\n{"criteria_met": true}\n```', True),
        ("criteria_met: true", None),
        ("", None),
    ],
)
def test_written_answers_are_read_or_malformed(text, met):
    answer = read_answer(text)
    assert answer.met is met
    if met is not None:
        assert answer.prefix is not None and answer.prefix.endswith('"criteria_met":')
        assert text.lstrip().startswith(answer.prefix)


class ScriptedWriter:
    """A judge's writing side that answers from a script per attempt, recording every input."""

    calls_model = True
    batch_size = 4

    def __init__(self, script, seen, temperature):
        self.script, self.seen, self.temperature = script, seen, temperature
        self.id = "scripted"

    def identity(self):
        return {"kind": "scripted"}

    def request(self, conversation, seed):
        return {"messages": list(conversation), "seed": seed, "t": self.temperature}

    def reply_many(self, conversations, seeds):
        out = []
        for c in conversations:
            self.seen.append(c)
            text = self.script(c, self.temperature)
            out.append(ChatbotReply(text, None, {"text": text}))
        return out


def test_malformed_answers_are_retried_then_left_ungraded(tmp_path, tiny_model):
    bench = load_benchmark(DATA / "mentalhealthbench_synthetic.jsonl", "mentalhealthbench")
    conversation = next(c for c in bench.conversations if len(c.criteria) >= 4)
    items = criterion_items(load_grader(), [("r1", conversation, "I'm here with you.")])
    # criterion 0: good at once; 1: malformed once, then good; the rest: never well formed.
    wanted = [c.text for c in conversation.criteria]

    def script(chat, temperature):
        text = chat[-1]["content"]
        if wanted[0] in text or (wanted[1] in text and temperature > 0):
            return GOOD
        return "I think it is met."

    seen: list = []
    store = Store(tmp_path / "store.sqlite", (BenchReplyRow, GraderAnswerRow))
    settings = GraderSettings(retries=2, retry_temperature=0.5, defaults="lab")  # greedy first
    answers = write_answers(
        store,
        "j",
        lambda gen: ScriptedWriter(script, seen, gen.temperature),
        items,
        settings,
        seed=1,
        canaries=bench.canaries,
        answer_key="criteria_met",
        tick=lambda n: None,
    )
    assert sorted(answers) == [0, 1]
    n = len(items)
    assert len(seen) == n + (n - 1) + (n - 2)  # attempt 0, then retries of what failed
    rows = store.frame("grader_answers")
    assert len(rows) == len(seen) and set(rows.status) == {"ok", "malformed"}
    assert rows[rows.attempt == 0].shape[0] == n
    # Read by the tiny judge through the engine's loop: only the well-formed ones.
    tasks = list(reading_tasks(items, answers, bench.canaries))
    judge_tasks(store, "j", lambda: LocalJudge(tiny_model), tasks, 0.0, lambda n: None)
    judged = store.frame("judgments")
    assert sorted(judged.item) == sorted([items[0].item, items[1].item])
    assert judged.value.between(0, 1).all() and (judged.coverage > 0).all()
    # A second pass reads everything back: nothing is written again.
    seen.clear()
    again = write_answers(
        store,
        "j",
        lambda gen: ScriptedWriter(script, seen, gen.temperature),
        items,
        settings,
        seed=1,
        canaries=bench.canaries,
        answer_key="criteria_met",
        tick=lambda n: None,
    )
    assert seen == [] and sorted(again) == [0, 1]
    assert store.count(JudgmentRow.TABLE) == 2
    store.close()


def test_user_templates_are_used_exactly(tmp_path):
    published = tmp_path / "published.txt"
    published.write_text("CONVO>>\n<<conversation>>\nITEM>> <<rubric_item>>\nJSON please.")
    grader = load_grader(published)
    bench = load_benchmark(DATA / "mentalhealthbench_synthetic.jsonl", "mentalhealthbench")
    c = bench.conversations[0]
    [message] = grader.messages(c, "A reply.", c.criteria[0])
    expected_blocks = "\n\n".join([*(f"{r}: {t}" for r, t in c.messages), "assistant: A reply."])
    assert message["content"] == (
        f"CONVO>>\n{expected_blocks}\nITEM>> [5] {c.criteria[0].text}\nJSON please."
    )
    assert grader.exact_text and len(grader.sha256) == 64 and grader.ref.sha256 == grader.sha256
    broken = tmp_path / "broken.txt"
    broken.write_text("no placeholders here")
    with pytest.raises(LabError, match="<<conversation>>"):
        load_grader(broken)


def test_a_toml_template_with_exact_text_keeps_its_system_message_and_braces(tmp_path):
    path = tmp_path / "published.toml"
    path.write_text(
        '[grader]\nid = "pub"\nversion = 1\nexact = true\nmax_tokens = 99\n'
        'system = "You are a helpful assistant."\n'
        'user = """Score {this}:\n<<conversation>>\n# Rubric item\n<<rubric_item>>\n'
        '{"criteria_met": bool}"""\n'
    )
    grader = load_grader(path)
    bench = load_benchmark(DATA / "healthbench_synthetic.jsonl", "healthbench")
    c = bench.conversations[0]
    system, user = grader.messages(c, "A reply.", c.criteria[3])
    blocks = "\n\n".join([*(f"{r}: {t}" for r, t in c.messages), "assistant: A reply."])
    assert system == {"role": "system", "content": "You are a helpful assistant."}
    assert user["content"] == (
        f"Score {{this}}:\n{blocks}\n# Rubric item\n[-3] {c.criteria[3].text}\n"
        '{"criteria_met": bool}'
    )
    assert grader.exact_text and grader.template.max_tokens == 99
    path.write_text(path.read_text().replace("<<conversation>>", "the conversation"))
    with pytest.raises(LabError, match="<<conversation>>"):
        load_grader(path)
