"""Entry scores as data: templates with id, version and hash; prompts that end right where the
number starts; readings that carry the template they came from."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import diarylab.rubric as rubric
from diarylab.foundation.errors import LabError
from diarylab.rubric.entry_scores import EntryScores, EntryTemplates, entry_prompts, score_entry
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.prompts import load_template

ENTRY = "Tuesday. Nobody answered my message again. I made tea and sat by the window."
PATTERN = (
    "social_isolation",
    "Social isolation",
    "The writer is cut off from other people and expects to stay that way.",
)


def test_templates_are_versioned_and_hashed():
    templates = EntryTemplates.load()
    ids = set()
    for t in (templates.pattern, templates.coherence, templates.realism):
        assert t.id and t.version >= 1 and len(t.sha256) == 64
        assert t.prefill == "Score: "  # the space before a number is its own token
        ids.add(t.id)
    assert len(ids) == 3


def test_pattern_template_is_filled_from_plain_strings():
    prompts = entry_prompts(ENTRY, [PATTERN], EntryTemplates.load())
    assert set(prompts) == {"pattern:social_isolation", "coherence", "realism"}
    user = dict(prompts["pattern:social_isolation"].messages)["user"]
    assert PATTERN[1] in user and PATTERN[2] in user and ENTRY in user
    assert prompts["coherence"].prefill == "Score: "


def test_rubric_does_not_import_diarists():
    for path in Path(rubric.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(
                n.split(".")[0] in ("diarists", "experiments", "chatbots") for n in names
            ), (path, names)


def test_local_prompt_ends_where_the_number_starts(tiny_model):
    prompts = entry_prompts(ENTRY, [PATTERN], EntryTemplates.load())
    text = LocalJudge(tiny_model).prompt_text(prompts["coherence"])
    assert text.endswith("<|im_start|>assistant\nScore: ")


def test_score_entry_records_templates(tiny_model):
    scores = score_entry(LocalJudge(tiny_model), ENTRY, patterns=[PATTERN], floor=0.0)
    assert scores.coherence.template == load_template("coherence").ref
    assert scores.pattern["social_isolation"].template.id == "entry-pattern"
    assert all(len(r.distribution) == 101 for r in (scores.coherence, scores.realism))
    again = EntryScores.from_record(scores.to_record(), floor=0.0)
    assert again.realism.distribution == scores.realism.distribution
    assert again.pattern["social_isolation"].template == scores.pattern["social_isolation"].template
    # A random tiny model puts little mass on numbers: at the default floor it is unreadable.
    strict = EntryScores.from_record(scores.to_record())
    assert not strict.coherence.readable and strict.coherence.mean is None


def test_entry_mistakes_are_lab_errors(tiny_model):
    with pytest.raises(LabError, match="empty"):
        score_entry(LocalJudge(tiny_model), "  ", patterns=[PATTERN])
    with pytest.raises(LabError, match="repeat"):
        score_entry(LocalJudge(tiny_model), ENTRY, patterns=[PATTERN, PATTERN])


def _template_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabError) as err:
        load_template(path)
    message = str(err.value)
    assert message.startswith(f"{path} ") and "fix:" in message
    return message.removeprefix(f"{path} ")


def test_malformed_templates_name_file_and_field(tmp_path):
    head = '[template]\nid = "t"\nversion = 1\nprefill = "Score: "\n'
    assert _template_error(tmp_path, head).startswith("template.user: missing")
    assert _template_error(tmp_path, head + 'user = "{entry}"\nusr = "x"\n').startswith(
        "template.usr: unknown field"
    )
    bad_version = head.replace("version = 1", "version = 1.5") + 'user = "{entry}"\n'
    assert _template_error(tmp_path, bad_version).startswith("template.version:")
    assert _template_error(tmp_path, 'id = "t"\n').startswith("template: missing")
    stray = head + 'user = "{entry}"\n[notes]\ntext = "x"\n'
    assert _template_error(tmp_path, stray).startswith("notes: unknown field")


def test_a_template_without_system_or_parts(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[template]\nid = "t"\nversion = 1\nuser = "{entry}"\nprefill = "A:"\n')
    template = load_template(path)
    assert template.system == "" and str(template.path) == str(path) and len(template.sha256) == 64
    assert template.prompt(entry="x").messages == (("user", "x"),)
    with pytest.raises(LabError, match=r"t\.toml template\.history_entry: missing"):
        template.part("history_entry")
    assert set(load_template("reply_question").parts) == {
        "history_intro",
        "history_entry",
        "history_reply",
    }
