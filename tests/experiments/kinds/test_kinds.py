"""Experiment kinds are plug-ins: a new kind is a package under experiments/kinds/ and nothing
else changes. Here a toy kind ("echo": every chatbot answers one greeting; every judge asks one
yes/no question of each answer) is added from outside the diary's files and run by the engine:
design schema, lock, store tables from its row types, the cached-call door, resume, the shared
judging phase and its report."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import diarylab.experiments.kinds as kinds
from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.running.runner import run_design

ECHO = """
from dataclasses import dataclass
from typing import ClassVar

from diarylab.experiments.engine.contract import TaskJudging
from diarylab.experiments.engine.design import DesignFile
from diarylab.experiments.engine.tasks import Task
from diarylab.rubric.prompts import JudgePrompt, TemplateRef


@dataclass(frozen=True)
class AnswerRow:
    TABLE: ClassVar[str] = "answers"
    answer_id: str
    chatbot: str
    text: str
    call_key: str | None


@dataclass(frozen=True)
class Cell:
    id: str
    chatbot: str


class EchoDesign(DesignFile):
    writes: ClassVar[bool] = False  # it answers with chatbots, writes nothing with a diarist


class EchoKind(TaskJudging):
    name = "echo"
    schema = EchoDesign
    row_types = (AnswerRow,)

    def profile_refs(self, design):
        return []

    def cells(self, design, profile_ids):
        return [Cell(f"echo.{c.id}", c.id) for c in design.spec.chatbots]

    def describe(self, design, cells):
        return f"{len(cells)} greetings"

    def planned_units(self, design, cells):
        return len(cells) * (1 + len(design.spec.judges))

    def converse(self, run):
        for cell in run.cells:
            bot = run.chatbots[cell.chatbot]
            view = [{"role": "user", "content": "Hello, how are you?"}]
            if not bot.calls_model:
                reply = bot.reply_many([view], [0])[0]
                run.store.put_rows(AnswerRow(cell.id, cell.chatbot, reply.text, None))
                continue
            run.store.cached_calls(
                "chatbot", bot.id, bot.identity(), [bot.request(view, 1)],
                lambda idx: [{"text": r.text} for r in bot.reply_many([view], [1])],
                rows=lambda i, r, key: (AnswerRow(cell.id, cell.chatbot, r["text"], key),),
            )

    def judge_tasks(self, run):
        ref = TemplateRef("echo-question", 1, "0" * 64)
        for cell in run.cells:
            row = run.store.get(AnswerRow, cell.id)
            prompt = JudgePrompt.chat(
                [{"role": "user", "content": f"Is this friendly? {row.text} Answer yes or no."}],
                prefill="Answer:",
            )
            yield Task("answer", cell.id, "friendly", "yes_no", prompt, ref)

    def input_files(self, design):
        return []

    def manifest(self, run):
        return {}

    def report(self, folder, store, design, resamples):
        out = folder / "report" / "findings.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"answers {store.count('answers')}, judgments {store.count('judgments')}")
        return out


KIND = EchoKind()
"""


@pytest.fixture()
def echo_kind(tmp_path, monkeypatch):
    package = tmp_path / "plugins" / "echo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(ECHO)
    # kind_names reads the folders on each call: nothing cached to clear
    monkeypatch.setattr(kinds, "__path__", [*kinds.__path__, str(tmp_path / "plugins")])
    yield


def test_a_new_kind_runs_on_the_engine(tmp_path, tiny_model_folder, echo_kind, capsys):
    assert "echo" in kinds.kind_names() and "diary" in kinds.kind_names()
    design = tmp_path / "echo.toml"
    design.write_text(
        textwrap.dedent(
            f"""
            [design]
            name = "echo-test"
            kind = "echo"
            seed = 1
            coverage_floor = 0.0

            [[chatbots]]
            id = "tiny"
            kind = "local"
            model = "{tiny_model_folder}"
            generation = {{ max_new_tokens = 4 }}

            [[judges]]
            id = "tiny-judge"
            kind = "local"
            model = "{tiny_model_folder}"
            """
        )
    )
    assert main(["design", "check", str(design)]) == 0
    checked = capsys.readouterr().out
    assert "echo design 'echo-test'" in checked and "1 greetings" in checked
    out = tmp_path / "run"
    first = run_design(load_design(design), out, progress=False)
    assert first.rows == {"answers": 1, "judgments": 1} and first.calls_made == 2
    again = run_design(load_design(design), out, progress=False)
    assert again.calls_made == 0 and again.rows == first.rows
    assert main(["report", str(out)]) == 0
    assert (out / "report" / "findings.md").read_text() == "answers 1, judgments 1"
    assert main(["design", "schema", "--kind", "echo"]) == 0
    assert '"cast"' not in capsys.readouterr().out  # the echo kind has no diary tables


def test_the_engine_and_the_shelf_do_not_name_a_kind():
    root = Path(__file__).resolve().parents[3] / "experiments"
    shared = [
        root / "running" / "runner.py",
        *(root / "engine").glob("*.py"),
        *(root / "analysis").glob("*.py"),
    ]
    assert len(shared) > 10
    for path in shared:
        text = path.read_text()
        for kind in ("diary", "friends", "benchmark"):
            assert f"kinds.{kind}" not in text, f"{path.name} depends on the {kind} kind"
