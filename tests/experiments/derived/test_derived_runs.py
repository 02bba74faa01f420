"""Derived runs: a design naming a finished run in [derived_from] reuses its texts — no entry,
letter or reply is written again — and makes only what it judges differently; a derived design
that changes what made the texts, or a run whose texts changed, is refused before anything is
written; the derived folder reports and resumes without the run it came from."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import diarylab.experiments.engine.writes as writes
from diarylab.chatbots.fixed import FixedReply
from diarylab.chatbots.local import LocalChatbot
from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.reuse import store_texts
from diarylab.experiments.engine.runfolder import read_locked_sha
from diarylab.experiments.kinds.benchmark.rows import BenchReplyRow
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.running.runner import run_design
from diarylab.testing.benchmark_runs import design as bench_design
from diarylab.testing.benchmark_runs import servers as servers  # the fixture, for this module
from diarylab.testing.friends_fixtures import friends_design
from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text, make_profile
from diarylab.testing.stores import opened
from diarylab.testing.tiny_models import build_tiny_llama

SECOND_JUDGE = """
[[judges]]
id = "second-judge"
kind = "local"
model = "{model}"
"""

SERVED_GRADER = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
tokenizer = "{model}"
probe_floor = 0.0
endpoint = {{ base_url = "{url}", api_key_env = "DIARYLAB_TEST_KEY" }}
"""


@pytest.fixture(scope="module")
def other_model_folder(tmp_path_factory, shipped_tokenizer) -> Path:
    """Another tiny random model: the judge a derived design adds reads with other weights."""
    folder = tmp_path_factory.mktemp("other-tiny")
    model = build_tiny_llama(shipped_tokenizer, seed=1)
    model.save_pretrained(folder)
    shipped_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def diary(tmp_path_factory, tiny_model_folder):
    """A finished tiny diary run: one diarist, unsteered and one steered profile, the fixed
    reply and a local chatbot, one judge."""
    origin = tmp_path_factory.mktemp("diary-source")
    profile = make_profile(origin, tiny_model_folder)
    text = design_text(tiny_model_folder, profile, entries=1, diarists='["amara"]').replace(
        'entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]'
    )
    path = origin / "source.toml"
    path.write_text(text)
    run = origin / "run"
    run_design(load_design(path), run, progress=False)
    return origin, text, run


TEXT_CALLS = {
    EntryRow: ("diarist", "chatbot"),
    LetterRow: ("diarist",),
    BenchReplyRow: ("chatbot",),
}


def locks(run: Path, row_types: tuple) -> str:
    texts = store_texts(run / "store.sqlite", row_types, TEXT_CALLS[row_types[0]])
    return f'design_sha256 = "{read_locked_sha(run)}"\ntexts_sha256 = "{texts.sha256}"\n'


def derived(
    folder: Path, text: str, run: Path, *, more: str = "", hashes: str | None = None
) -> Path:
    """The source design renamed, with `more` appended and [derived_from] naming `run`."""
    hashes = locks(run, (EntryRow, ReplyRow)) if hashes is None else hashes
    body = text.replace('name = "tiny-test"', 'name = "tiny-derived"') + more
    path = folder / "derived.toml"
    path.write_text(f'{body}\n[derived_from]\nrun = "{run}"\n{hashes}')
    return path


class Counts:
    """Texts written by the diarist model, and replies asked of each chatbot (by id: a local
    judge writes a benchmark's grader answers through the same chatbot door, as itself)."""

    def __init__(self, monkeypatch) -> None:
        self.writes = 0
        self.by: dict[str, int] = {}
        real_write, real_local, real_fixed = (
            writes.write_steered,
            LocalChatbot.reply_many,
            FixedReply.reply_many,
        )

        def write(*args, **kwargs):
            self.writes += len(args[1])
            return real_write(*args, **kwargs)

        def local(bot, views, seeds):
            self.by[bot.id] = self.by.get(bot.id, 0) + len(views)
            return real_local(bot, views, seeds)

        def fixed(bot, views, seeds):
            self.by[bot.id] = self.by.get(bot.id, 0) + len(views)
            return real_fixed(bot, views, seeds)

        monkeypatch.setattr(writes, "write_steered", write)
        monkeypatch.setattr(LocalChatbot, "reply_many", local)
        monkeypatch.setattr(FixedReply, "reply_many", fixed)

    def asked(self, *chatbots: str) -> int:
        return sum(self.by.get(bot, 0) for bot in chatbots)


def rows(folder: Path, table: str, columns: list[str] | None = None, **where: Any) -> list[tuple]:
    """The rows of a table of the run's store (those whose columns equal `where`), sorted."""
    with opened(folder) as store:
        return sorted(store.select(table, columns, where=where), key=repr)


def calls_per_kind(folder: Path) -> dict[str, int]:
    with opened(folder) as store:
        return dict(Counter(kind for _, kind, *_ in store.calls_of()))


def test_adding_a_judge_writes_nothing_and_reads_the_run_judge_from_its_calls(
    diary, other_model_folder, tmp_path, monkeypatch, capsys
):
    origin, text, source = diary
    work = tmp_path / "work"
    work.mkdir()
    # A copy of the run, so it can be removed once the derived run is made.
    run = work / "source-run"
    shutil.copytree(source, run)
    path = derived(work, text, run, more=SECOND_JUDGE.format(model=other_model_folder))

    assert main(["design", "check", str(path)]) == 0
    checked = capsys.readouterr().out
    assert "texts copied: reused from" in checked
    assert "2 entries, 4 replies — written again: none" in checked
    assert "judge tiny-judge: as in source-run — " in checked and "readings reused" in checked
    assert "judge second-judge: new — " in checked and "readings to make" in checked
    [total] = [line for line in checked.splitlines() if "in all:" in line]
    found = re.search(r"(\d+) judge readings reused from source-run, (\d+) to make", total)
    assert found is not None, total
    reused, made = int(found[1]), int(found[2])
    assert "0 texts to write" in total and reused == made > 0  # one judge kept, one added

    assert main(["plan", str(path)]) == 0
    planned = capsys.readouterr().out
    assert "entries (reused): 0" in planned and "replies by tiny-chat (reused): 0" in planned

    counts = Counts(monkeypatch)
    out = work / "derived-run"
    summary = run_design(load_design(path), out, progress=False)
    assert counts.writes == 0 and counts.asked("thanks", "tiny-chat") == 0
    assert summary.calls_made > 0  # the new judge's readings, and nothing else
    made, theirs = calls_per_kind(out), calls_per_kind(run)
    assert made["diarist"] == theirs["diarist"]
    assert made["chatbot"] == theirs["chatbot"]
    assert made["judge"] == summary.calls_made + theirs["judge"]

    for table in ("entries", "replies"):
        assert rows(out, table) == rows(run, table)
    first = {"judge": "tiny-judge"}
    assert rows(out, "judgments", **first) == rows(run, "judgments", **first)
    new = rows(out, "judgments", ["target_id", "item"], judge="second-judge")
    assert new == rows(run, "judgments", ["target_id", "item"], judge="tiny-judge")

    manifest = json.loads((out / "manifest.json").read_text())
    reused = manifest["derived_from"]
    assert reused["run"] == str(run.resolve())
    assert reused["design_sha256"] == read_locked_sha(run)
    assert (
        reused["texts_sha256"]
        == store_texts(run / "store.sqlite", (EntryRow, ReplyRow), ("diarist", "chatbot")).sha256
    )
    assert reused["rows"] == {"entries": 2, "replies": 4}

    # Self-contained: the run it came from gone and the folder moved, it reports and resumes.
    shutil.rmtree(run)
    moved = tmp_path / "elsewhere" / "derived-run"
    shutil.move(str(out), moved)
    assert main(["report", str(moved), "--resamples", "200"]) == 0
    findings = (moved / "report" / "findings.md").read_text()
    assert "second-judge" in findings and "tiny-judge" in findings
    again = run_design(load_design(path), moved, progress=False)
    assert again.calls_made == 0 and counts.writes == 0 and counts.asked("thanks", "tiny-chat") == 0


def test_missing_hashes_are_printed_as_the_fix(diary, tmp_path, capsys):
    _, text, run = diary
    path = derived(tmp_path, text, run, hashes="")
    assert main(["design", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "derived_from" in err
    assert locks(run, (EntryRow, ReplyRow)).splitlines()[0] in err


CHANGES = {
    "the diarist model": (
        "generation = { max_new_tokens = 8, temperature = 0.9 }",
        "generation = { max_new_tokens = 9, temperature = 0.9 }",
        "`diarist_model` differs",
    ),
    "a chatbot": (
        "generation = { max_new_tokens = 6, temperature = 0.7 }",
        "generation = { max_new_tokens = 6, temperature = 0.5 }",
        "`chatbots` differs",
    ),
    "the cast": ('diarists = ["amara"]', 'diarists = ["tomasz"]', "`cast` differs"),
    "the seed": ("seed = 7", "seed = 8", "`design` differs"),
}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_derived_design_that_changes_what_made_the_texts_is_refused(
    diary, tmp_path, capsys, what
):
    _, text, run = diary
    old, new, said = CHANGES[what]
    assert old in text
    path = derived(tmp_path, text.replace(old, new), run)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "make a new run" in err, err
    assert "Traceback" not in err and not out.exists()


def test_a_profile_that_steers_differently_is_refused(diary, tmp_path, capsys, tiny_model_folder):
    _, text, run = diary
    other = tmp_path / "other"
    other.mkdir()
    profile = make_profile(other, tiny_model_folder)
    body = profile.read_text().replace("strength = 0.8", "strength = 0.5")
    assert body != profile.read_text()
    profile.write_text(body)
    capsys.readouterr()  # loading the model to make the profile says so on stderr
    old = next(line for line in text.splitlines() if line.startswith("profiles = "))
    path = derived(tmp_path, text.replace(old, f'profiles = ["unsteered", "{profile}"]'), run)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "profile 'tiny-social_isolation' steers differently" in err and "strength" in err
    assert not out.exists()


def test_a_run_whose_texts_changed_or_are_unfinished_is_refused(diary, tmp_path, capsys):
    _, text, source = diary
    run = tmp_path / "run"
    shutil.copytree(source, run)
    path = derived(tmp_path, text, run)  # locked as the run is now
    with opened(run) as store:
        first = min(r for (r,) in store.select("replies", ["reply_id"]))
        store.update("replies", {"text": "edited"}, where={"reply_id": first})
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "texts changed since this design locked them" in err
    assert "texts_sha256" in err and not out.exists()

    # A run killed before it finished, locked as it is: the missing text is named.
    with opened(run) as store:
        last = max(r for (r,) in store.select("replies", ["reply_id"]))
        store.delete("replies", where={"reply_id": last})
    path = derived(tmp_path, text, run)
    assert main(["design", "check", "--offline", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds 1 fewer replies than this design needs" in err and "not finished" in err


def test_friends_letters_are_reused_by_a_design_adding_a_judge(
    tmp_path, tiny_model_folder, other_model_folder, monkeypatch
):
    path = friends_design(
        tmp_path,
        tiny_model_folder,
        controls='["fixed_friend"]',
        entries=1,
        outcome="[1]",
        hypotheses="",
    )
    # Read to the judge's default bound, not exactly: the fixture's exact reading takes long.
    path.write_text(path.read_text().replace("max_error = 0  #", "# max_error = 0 #"))
    run = tmp_path / "run"
    run_design(load_design(path), run, progress=False)
    text = path.read_text().replace('name = "tiny-friends"', 'name = "tiny-friends-2"')
    text += SECOND_JUDGE.format(model=other_model_folder)
    text += f'\n[derived_from]\nrun = "run"\n{locks(run, (LetterRow,))}'
    second = tmp_path / "derived.toml"
    second.write_text(text)  # the run named relative to the design file

    counts = Counts(monkeypatch)
    out = tmp_path / "derived-run"
    summary = run_design(load_design(second), out, progress=False)
    assert counts.writes == 0 and summary.calls_made > 0
    assert rows(out, "letters") == rows(run, "letters")
    first = {"judge": "tiny-judge"}
    assert rows(out, "judgments", **first) == rows(run, "judgments", **first)
    new = rows(out, "judgments", ["target_id", "item"], judge="second-judge")
    assert new and new == rows(run, "judgments", ["target_id", "item"], judge="tiny-judge")
    assert main(["report", str(out), "--resamples", "200"]) == 0


def test_benchmark_replies_are_reused_by_a_design_adding_a_grader_judge(
    tmp_path, tiny_model_folder, servers, monkeypatch
):
    chat, judge = servers
    path = bench_design(
        tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=2, local_judge=True
    )
    run = tmp_path / "run"
    run_design(load_design(path), run, progress=False)
    asked = len(chat.requests)
    assert asked > 0
    text = path.read_text().replace('name = "bench-test"', 'name = "bench-derived"')
    # A served grader (the loopback stand-in writes well-formed answers, read by probability).
    text += SERVED_GRADER.format(model=tiny_model_folder, url=judge.base_url)
    text += f'\n[derived_from]\nrun = "run"\n{locks(run, (BenchReplyRow,))}'
    second = tmp_path / "derived.toml"
    second.write_text(text)

    counts = Counts(monkeypatch)
    out = tmp_path / "derived-run"
    summary = run_design(load_design(second), out, progress=False)
    assert counts.asked("thanks", "tiny") == 0 and len(chat.requests) == asked
    assert summary.calls_made > 0
    assert rows(out, "bench_replies") == rows(run, "bench_replies")
    first = {"judge": "tiny-judge"}
    assert rows(out, "judgments", **first) == rows(run, "judgments", **first)
    # The new judge wrote its own answer to every criterion of every reply the run's judge did.
    answered = ["reply_id", "item"]
    theirs = rows(run, "grader_answers", answered, judge="tiny-judge", attempt=0)
    assert theirs and rows(out, "grader_answers", answered, judge="served", attempt=0) == theirs
    assert rows(out, "judgments", judge="served")
    assert main(["report", str(out)]) == 0


INLINE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2, generation = { max_new_tokens = 5, temperature = 0.8 } }
steer = { layers = [1], strength = 0.5 }
"""


def test_inline_profiles_come_from_the_run_and_are_never_made_again(
    tmp_path, tiny_model_folder, other_model_folder, shipped_tokenizer, monkeypatch, capsys
):
    # The diarist model named by a link, so the same name can later hold another model.
    writer = tmp_path / "writer-model"
    writer.symlink_to(tiny_model_folder, target_is_directory=True)
    judge = f'[[judges]]\nid = "tiny-judge"\nkind = "local"\nmodel = "{tiny_model_folder}"\n'
    text = design_text(
        writer, None, entries=1, diarists='["amara"]', chatbots=FIXED_ONLY, judges=judge
    ).replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    text = text.replace('profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]') + INLINE
    path = tmp_path / "source.toml"
    path.write_text(text)
    run = tmp_path / "run"
    run_design(load_design(path), run, progress=False)

    counts = Counts(monkeypatch)  # extraction writes through the same door as entries
    second = derived(tmp_path, text, run, more=SECOND_JUDGE.format(model=other_model_folder))
    assert main(["design", "check", "--offline", str(second)]) == 0
    checked = capsys.readouterr().out
    assert "profile lonely: copied from run (its profiles/lonely.toml" in checked
    assert "will be made" not in checked
    out = tmp_path / "derived-run"
    run_design(load_design(second), out, progress=False)
    assert counts.writes == 0
    for name in ("lonely.toml", "lonely.safetensors", "lonely.json"):
        assert (out / "profiles" / name).read_bytes() == (run / "profiles" / name).read_bytes()
    ours, theirs = (json.loads((f / "manifest.json").read_text()) for f in (out, run))
    assert ours["profiles"] == theirs["profiles"]
    assert rows(out, "entries") == rows(run, "entries")

    # The rule changed: refused naming the field, nothing written.
    changed = derived(tmp_path, text.replace("strength = 0.5", "strength = 0.6"), run)
    assert main(["design", "check", "--offline", str(changed)]) == 2
    said = capsys.readouterr()
    assert "`profiles` differs" in said.err and "profiles[0].steer.strength" in said.err
    assert "ok" not in said.out  # a refusal never follows an "ok"

    # The same name now holds a model of another shape: not the model that wrote the texts.
    deeper = tmp_path / "deeper-model"
    build_tiny_llama(shipped_tokenizer, layers=3).save_pretrained(deeper)
    shipped_tokenizer.save_pretrained(deeper)
    writer.unlink()
    writer.symlink_to(deeper, target_is_directory=True)
    again = tmp_path / "again"
    second = derived(tmp_path, text, run, more=SECOND_JUDGE.format(model=other_model_folder))
    assert main(["run", str(second), "--out", str(again), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "loaded diarist_model is not the one that wrote them (at num_layers)" in err, err
    assert not again.exists()
