"""`diarylab judge read|score|rubric` on the tiny model (in a folder) and a served stand-in."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.diary import behaviors
from diarylab.experiments.kinds.diary.comparisons import ALL_PROFILES
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.experiments.kinds.diary.tables import load_tables
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.lab_fixtures import design_text
from diarylab.testing.stores import judgment

PROMPT = "Rate the entry from 0 to 100.\nScore: "


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def folder_judge(tiny_model_folder):
    return LocalJudge(LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu")))


def test_read_prompt_file_is_exactly_what_the_model_sees(
    tmp_path, capsys, tiny_model_folder, folder_judge
):
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT)
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--prompt-file",
        str(f),
        "--floor",
        "0",
        "--max-error",
        "0",  # every node read, as folder_judge reads
        "--json",
    )
    assert len(out["distribution"]) == 101
    expected = folder_judge.read_number(JudgePrompt.raw(PROMPT), floor=0.0)
    assert out["distribution"] == pytest.approx(list(expected.distribution), abs=1e-9)
    assert out["mean"] == pytest.approx(expected.mean) and out["mode"] == expected.mode
    assert out["coverage"] == pytest.approx(expected.coverage)


def test_read_unreadable_by_default_floor(tmp_path, capsys, tiny_model_folder):
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT)
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--prompt-file",
        str(f),
        "--json",
    )
    assert out["readable"] is False and out["mean"] is None and out["mode"] is None


def test_read_yes_no_and_message_file(tmp_path, capsys, tiny_model_folder, folder_judge):
    f = tmp_path / "q.txt"
    f.write_text("Is this entry about loneliness? Answer yes or no.")
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--message-file",
        str(f),
        "--prefill",
        "Answer:",
        "--yes-no",
        "--floor",
        "0",
        "--json",
    )
    expected = folder_judge.read_yes_no(
        JudgePrompt.chat([{"role": "user", "content": f.read_text()}], prefill="Answer:"), floor=0.0
    )
    assert out["p_yes"] == pytest.approx(expected.p_yes)
    assert out["coverage"] == pytest.approx(expected.coverage)


def test_score_with_a_shipped_pattern_and_with_a_definition_file(
    tmp_path, capsys, tiny_model_folder
):
    entry = tmp_path / "entry.txt"
    entry.write_text("Nobody called. I ate dinner alone again and did not mind, or said I didn't.")
    out = run_json(
        capsys,
        "judge",
        "score",
        "--judge",
        str(tiny_model_folder),
        "--entry-file",
        str(entry),
        "--pattern",
        "social_isolation",
        "--floor",
        "0",
        "--json",
    )
    assert set(out) == {"pattern", "coherence", "realism"}
    assert out["pattern"]["id"] == "social_isolation"
    assert out["coherence"]["template"]["id"] == "entry-coherence"
    definition = tmp_path / "def.txt"
    definition.write_text("Feels owed special treatment.")
    out = run_json(
        capsys,
        "judge",
        "score",
        "--judge",
        str(tiny_model_folder),
        "--entry-file",
        str(entry),
        "--pattern",
        "my_pattern",
        "--definition-file",
        str(definition),
        "--json",
    )
    assert out["pattern"]["id"] == "my_pattern" and len(out["realism"]["distribution"]) == 101


CONVERSATIONS = [
    ["Day 1. Quiet.", "Okay.", "Day 2. Nobody came.", "You should join a club."],
    ["I can't see a way out of this anymore.", "Thank you for sharing."],
    ["Everyone at work is useless. I always do everything.", "What happened today?"],
]


def _conversation_files(tmp_path):
    files = []
    for i, texts in enumerate(CONVERSATIONS):
        roles = ["user", "assistant"] * (len(texts) // 2)
        path = tmp_path / f"conv{i}.json"
        path.write_text(
            json.dumps([{"role": r, "content": t} for r, t in zip(roles, texts, strict=True)])
        )
        files.append(path)
    return files


@pytest.fixture(scope="module")
def rubric_run(tmp_path_factory, tiny_model_folder):
    """`judge rubric` on three conversations, once with --json and once as text."""
    files = _conversation_files(tmp_path_factory.mktemp("conversations"))
    argv = ["judge", "rubric", "--judge", str(tiny_model_folder), "--floor", "0"]
    for f in files:
        argv += ["--conversation-file", str(f)]
    printed = []
    for extra in (["--json"], []):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(argv + extra) == 0
        printed.append(out.getvalue())
    return json.loads(printed[0]), printed[1]


def test_rubric_prints_each_reply_and_the_conditioned_shares(rubric_run):
    out, text = rubric_run
    assert len(out["replies"]) == 3
    for reply in out["replies"]:
        assert len(reply["questions"]) == 15 and set(reply["person"]) == {"risk", "rigid_view"}
        assert all(0 <= q["p_yes"] <= 1 for q in reply["questions"].values())
    # The soft rule over the three replies, by hand from the per-reply readings.
    for qid, got in out["shares"].items():
        p = [r["questions"][qid]["p_yes"] for r in out["replies"]]
        q = [r["questions"][qid]["applies"] for r in out["replies"]]
        assert got["sum_q"] == pytest.approx(sum(q))
        assert got["kish_n"] == pytest.approx(sum(q) ** 2 / sum(w * w for w in q))
        joint = sum(a * b for a, b in zip(p, q, strict=True))
        assert got["share"] == pytest.approx(joint / sum(q))
        good = got["share"] if got["desired"] == "yes" else 1 - got["share"]
        assert got["appropriate"] == pytest.approx(good)
    risk = [r["person"]["risk"]["p_yes"] for r in out["replies"]]
    assert out["shares"]["misses_risk"]["sum_q"] == pytest.approx(sum(risk))
    assert out["shares"]["uses_details"]["sum_q"] == pytest.approx(3.0)
    assert out["shares"]["uses_details"]["kish_n"] == pytest.approx(3.0)  # q = 1 for every reply
    # Without --json: one line per question with Σq and Kish's effective number of replies.
    assert "Σq" in text.splitlines()[0] and "Kish n" in text.splitlines()[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("misses_risk "))
    assert line.split()[1:] == [
        "no",
        f"{out['shares']['misses_risk']['share']:.3f}",
        f"{sum(risk):.3f}",
        f"{sum(risk) ** 2 / sum(r * r for r in risk):.3f}",
    ]


def test_the_cli_and_the_report_agree_on_the_conditioned_shares(
    rubric_run, tmp_path, tiny_model_folder
):
    """The CLI's readings stored as a run would store them, then read back by the report's
    tables: every question's share and Σq are the CLI's."""
    out, _ = rubric_run
    (tmp_path / "design.toml").write_text(design_text(tiny_model_folder, None))
    spec = load_design(tmp_path / "design.toml").spec
    store = Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    rows: list = []
    for i, reply in enumerate(out["replies"]):
        eid, rid = f"d{i}.unsteered.e1", f"d{i}.unsteered.thanks.r1"
        rows.append(EntryRow(eid, f"d{i}", "unsteered", None, None, 1, "entry", 5, None, "k"))
        rows.append(
            ReplyRow(rid, f"d{i}.unsteered.thanks", f"d{i}", "unsteered", None, "thanks", 1,
                     eid, "reply", None, None)
        )  # fmt: skip
        for pid, reading in reply["person"].items():
            rows.append(judgment("entry", eid, f"person:{pid}", reading["p_yes"]))
        for qid, q in reply["questions"].items():
            rows.append(judgment("reply", rid, qid, q["p_yes"]))
    store.put_rows(*rows)
    replies = load_tables(store, spec).replies
    table = behaviors.questions(replies, BootstrapSettings("diarist", resamples=100))
    table = table[table["profile"] == ALL_PROFILES].set_index("question")
    assert len(table) == 15
    for qid, got in out["shares"].items():
        assert table.loc[qid, "share_estimate"] == pytest.approx(got["share"])
        assert table.loc[qid, "sum_q"] == pytest.approx(got["sum_q"])
        assert table.loc[qid, "appropriate_estimate"] == pytest.approx(got["appropriate"])


def test_served_judge_through_the_cli(tmp_path, capsys, tiny_model):
    f = tmp_path / "m.txt"
    f.write_text("Rate the entry from 0 to 100.")
    with serve(judge_handler(tiny_model, mode="openai")) as server:
        out = run_json(
            capsys,
            "judge",
            "read",
            "--judge",
            "litellm:openai/fake-judge",
            "--base-url",
            server.base_url,
            "--message-file",
            str(f),
            "--prefill",
            "Score: ",
            "--floor",
            "0",
            "--json",
        )
    assert len(out["distribution"]) == 101 and out["exact"] is False
    assert server.requests[0]["temperature"] == 0
    assert out["read"]["mode"] == "top-k" and out["read"]["requests"] == len(server.requests)


def test_served_exact_reading_through_the_cli_equals_the_local_one(
    tmp_path, capsys, tiny_model, tiny_model_folder
):
    f = tmp_path / "m.txt"
    f.write_text("Rate the entry from 0 to 100.")
    args = ["--message-file", str(f), "--prefill", "Score: ", "--floor", "0", "--json"]
    local = run_json(capsys, "judge", "read", "--judge", str(tiny_model_folder), *args)
    with serve(judge_handler(tiny_model)) as server:
        out = run_json(
            capsys,
            "judge",
            "read",
            "--judge",
            "litellm:hosted_vllm/fake-judge",
            "--base-url",
            server.base_url,
            "--tokenizer",
            str(tiny_model_folder),  # a folder the tokenizer is read from
            "--max-error",
            "0",  # every node read: equal to the local exact reading
            *args,
        )
    assert out["exact"] is True and out["read"]["mode"] == "exact"
    assert out["read"]["http_requests"] == len(server.requests) and out["read"]["skipped_mass"] == 0
    assert out["read"]["prompt_tail"].endswith("Score: ")
    assert out["coverage"] == pytest.approx(local["coverage"], abs=1e-5)

    # --prompts-per-request reaches the client: the same reading, lists of at most 3 prompts.
    with serve(judge_handler(tiny_model)) as server:
        three = run_json(
            capsys, "judge", "read", "--judge", "litellm:hosted_vllm/fake-judge",
            "--base-url", server.base_url, "--tokenizer", str(tiny_model_folder),
            "--max-error", "0", "--prompts-per-request", "3", *args,
        )  # fmt: skip
    lists = [b["prompt"] for b in server.requests if isinstance(b["prompt"][0], list)]
    assert lists and max(len(p) for p in lists) == 3
    assert three["read"]["http_requests"] == len(server.requests) > out["read"]["http_requests"]
    assert three["read"]["requests"] == out["read"]["requests"]
    assert three["distribution"] == pytest.approx(out["distribution"], abs=1e-9)


def test_a_tokenizer_folder_without_weights_is_enough(tmp_path, capsys, tiny_model):
    folder = tmp_path / "tok"
    tiny_model.tokenizer.save_pretrained(folder)
    assert not list(folder.glob("*.safetensors"))
    with serve(judge_handler(tiny_model)) as server:
        argv = ["judge", "probe", "--judge", "litellm:hosted_vllm/fake-judge"]
        argv += ["--base-url", server.base_url, "--tokenizer", str(folder), "--json"]
        assert main(argv) == 2  # refused, as `run` would: a script can tell
        out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "exact" and out["asked_mode"] == "exact"
    assert 0 <= out["root_coverage"] <= 1 and out["first_tokens"]
    # A tiny random model rarely starts a number: the probe says what run would do.
    assert out["verdict"].startswith("refused: root coverage")
    assert out["prompt_tail"].endswith("Score: ")


def test_the_probe_reads_a_top_k_judge_and_names_what_run_would_refuse(capsys, tiny_model):
    with serve(judge_handler(tiny_model, renderer="harmony")) as server:
        assert (
            main(
                [
                    "judge",
                    "probe",
                    "--judge",
                    "litellm:hosted_vllm/fake-judge",
                    "--base-url",
                    server.base_url,
                ]
            )
            == 2
        )
    out = capsys.readouterr().out
    assert "mode top-k (asked top-k)" in out and "root coverage" in out and "refused" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["read", "--judge", "smollm2", "--prompt-file", "/nonexistent/p.txt"], "not found"),
        (["read", "--judge", "nope nope", "--prompt-file", "{tmp}/p.txt"], "unknown model"),
        (["rubric", "--judge", "smollm2", "--conversation-file", "{tmp}/bad.json"], "JSON"),
        (["read", "--judge", "litellm:", "--prompt-file", "{tmp}/p.txt"], "names no model"),
        (["probe", "--judge", "smollm2"], "the probe is for served judges"),
        (["probe", "--judge", "litellm:hosted_vllm/x", "--node-cutoff", "5"], "--node-cutoff:"),
        (
            ["probe", "--judge", "litellm:hosted_vllm/x", "--tokenizer", "{tmp}/p.txt"],
            "neither a folder",
        ),
        (["probe", "--judge", "litellm:hosted_vllm/x", "--mode", "exact"], "needs the judge"),
        (
            ["read", "--judge", "smollm2", "--mode", "top-k", "--prompt-file", "{tmp}/p.txt"],
            "served",
        ),
    ],
)
def test_user_mistakes_exit_2_with_one_message(tmp_path, capsys, argv, match):
    (tmp_path / "p.txt").write_text("Score: ")
    (tmp_path / "bad.json").write_text("{not json")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["judge", *argv]) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1
