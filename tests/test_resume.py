"""A run killed with SIGKILL at arbitrary moments and resumed ends with exactly the store of an
uninterrupted run: no duplicated rows, no missing rows, no different text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diarylab.testing.kill_resume import finish, kill_partway, run_cli, tables
from diarylab.testing.kill_resume import (
    progress as progress,  # for tests that still import it from here
)
from diarylab.testing.lab_fixtures import design_text, make_profile

CHATBOT = """
[[chatbots]]
id = "tiny-chat"
kind = "local"
model = "{model}"
generation = {{ max_new_tokens = 6, temperature = 0.7 }}
"""


@pytest.fixture(scope="module")
def design(tmp_path_factory, tiny_model_folder) -> Path:
    folder = tmp_path_factory.mktemp("resume")
    profile = make_profile(folder, tiny_model_folder)
    text = design_text(
        tiny_model_folder,
        profile,
        entries=2,
        diarists='["amara"]',
        chatbots=CHATBOT.format(model=tiny_model_folder),
    ).replace('baseline_chatbot = "thanks"', 'baseline_chatbot = "tiny-chat"')
    text = text.replace(
        'kind = "diary"', 'kind = "diary"\nversion = 3\ndescription = "a resumable run"'
    )
    path = folder / "design.toml"
    path.write_text(text)
    return path


def test_killed_runs_resume_to_the_same_store(design, tmp_path):
    reference = tmp_path / "reference"
    finish(design, reference, timeout_s=600)
    expected = tables(reference)
    assert expected["judgments"] and expected["entries"] and expected["replies"]

    # Kill when the store has reached given fractions of the calls, whatever the machine's
    # speed, then let the last run finish.
    broken = tmp_path / "broken"
    total = len(expected["calls"])
    seen = kill_partway(design, broken, total, (0.1, 0.3, 0.5, 0.7))
    finish(design, broken, timeout_s=600)
    assert all(0 < n < total for n in seen) and seen == sorted(seen), seen
    assert tables(broken) == expected

    # Once complete, running again makes no model call at all.
    assert "model calls made 0" in finish(design, broken, timeout_s=300)


def test_changed_design_into_existing_folder_is_refused(design, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "design.sha256").write_text("0" * 64 + "  design.toml\n")
    proc = run_cli(design, out)
    text = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 2
    assert "holds a different design" in text and "Traceback" not in text
    assert sorted(p.name for p in out.iterdir()) == ["design.sha256"]


def test_run_records_design_and_manifest(design, tmp_path):
    out = tmp_path / "run"
    proc = run_cli(design, out)
    assert proc.wait(timeout=600) == 0
    assert (out / "design.toml").read_bytes() == design.read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["design"]["sha256"] == (out / "design.sha256").read_text().split()[0]
    assert manifest["design"]["name"] == "tiny-test" and manifest["design"]["version"] == 3
    assert manifest["design"]["description"] == "a resumable run"
    assert out.name == "run"  # --out wins over results/<name>-<hash>
    assert manifest["diarist_model"]["tokenizer_sha256"]
    assert manifest["profiles"]["tiny-social_isolation"]["steer"]["vector_sha256"]
    assert manifest["diarist_settings"]["local"]["batch_size"] == 3
    assert "torch" in manifest["packages"]
    assert manifest["folder_format"] == 1  # a later diarylab's folder is refused, not misread
