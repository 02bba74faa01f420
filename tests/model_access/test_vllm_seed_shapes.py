"""The Mistral-format seed judge on a real vLLM server (the `vllm` tier): a tiny random Mistral
in Mistral's own format (testing/seed_shapes.py) served with exactly the flags docs/gpu-study.md
gives Mistral-Small-3.1 (`--tokenizer-mode mistral --config-format mistral --load-format
mistral`), so vLLM tokenizes with mistral-common's Tekken, not a tokenizer.json. The server's
own tokenization of every rubric prompt kind is the ids the lab sends (but for the prefill's
trailing space, which mistral-common strips and the lab keeps); exact readings, 0–100 and
yes/no, equal the lab's local reading of the same weights in Hugging Face form; a bounded
reading holds the exact value; `judge probe` says ok."""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import TEMPLATES_DIR, JudgePrompt, load_template
from diarylab.testing.kill_resume import ROOT
from diarylab.testing.seed_shapes import docs_flags

pytestmark = pytest.mark.vllm

TOLERANCE = 1e-4
DOCS = ROOT / "docs" / "gpu-study.md"
MISTRAL = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
ENTRY = "Nobody called again today. I ate dinner standing at the counter and went to bed at eight."


@pytest.fixture(scope="module")
def mistral_shape(shape_servers) -> tuple[Path, Path]:
    """(Hugging Face folder, Mistral-format folder) of the tiny Mistral judge."""
    return shape_servers["mistral_hf"], shape_servers["servers"]["mistral"].model_folder


@pytest.fixture(scope="module")
def seed_servers(shape_servers) -> dict:
    """The two seed judges' servers (tests/conftest.py `shape_servers` launches them with the
    thinking chatbot's, their start-ups overlapping): Mistral with the docs' format flags,
    gpt-oss with the docs' line, which sets no format. A test that kills one puts the one it
    brings back in this dict."""
    page = DOCS.read_text(encoding="utf-8")
    line = page[page.index(f"serve {GPT_OSS}") :].split("\n\n")[0]
    assert not docs_flags(GPT_OSS) and "--max-logprobs 20" in line  # what launch() passes too
    return shape_servers["servers"]


@pytest.fixture(scope="module")
def mistral_server(seed_servers):
    return seed_servers["mistral"]


@pytest.fixture(scope="module")
def gpt_oss_server(seed_servers):
    return seed_servers["gpt-oss"]


@pytest.fixture(scope="module")
def tekken(mistral_shape):
    from transformers import AutoTokenizer

    hf, _ = mistral_shape
    return AutoTokenizer.from_pretrained(hf)


@pytest.fixture(scope="module")
def local_mistral(mistral_shape):
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings
    from diarylab.rubric.judging.local_judge import LocalJudge

    hf, _ = mistral_shape
    return LocalJudge(LocalModel.load(str(hf), LocalSettings(device="cpu", dtype="fp32")))


def _served(server, tokenizer, *, max_error: float = 0.0) -> ServedJudge:
    settings = EndpointSettings(base_url=server.base_url, max_retries=2, concurrency=8)
    return ServedJudge(
        ServedClient(server.litellm_model, settings),
        tokenizer=tokenizer,
        exact=ExactSettings(max_error=max_error),
    )


def _every_prompt_kind() -> dict[str, JudgePrompt]:
    """One prompt of each rubric template, every placeholder filled with diary-like text."""
    prompts = {}
    for path in sorted(TEMPLATES_DIR.glob("*.toml")):
        template = load_template(path)
        texts = [template.system, template.user]
        names = {n for text in texts for _, n, _, _ in string.Formatter().parse(text) if n}
        values = {n: f"{ENTRY} ({n})" for n in names}
        prompts[path.stem] = template.prompt(**values)
    return prompts


def _server_tokens(server, prompt: JudgePrompt) -> list[int]:
    body = {
        "model": server.served_name,
        "messages": [*prompt.chat_messages()],
        "continue_final_message": True,
        "add_generation_prompt": False,
    }
    request = urllib.request.Request(
        server.base_url.removesuffix("/v1") + "/tokenize",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return list(json.load(answer)["tokens"])


def test_the_server_is_started_with_the_docs_flags():
    assert docs_flags(MISTRAL) == (
        "--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral",
    )  # fmt: skip


@pytest.mark.parametrize("kind", sorted(p.stem for p in TEMPLATES_DIR.glob("*.toml")))
def test_the_servers_tokenization_is_the_ids_the_lab_sends(mistral_server, tekken, kind):
    prompt = _every_prompt_kind()[kind]
    sent = tekken(render_judge_prompt(tekken, prompt).text, add_special_tokens=False)["input_ids"]
    own = _server_tokens(mistral_server, prompt)
    assert sent[: len(own)] == own
    # mistral-common strips the prefill's trailing whitespace; the lab keeps it, so that the
    # number is the very next token (the reason it reads by ids, not by messages).
    rest = sent[len(own) :]
    assert len(rest) <= 1 and tekken.decode(rest).strip() == ""
    assert bool(rest) == (prompt.prefill != prompt.prefill.rstrip())


@pytest.fixture(scope="module")
def exact_number(mistral_server, tekken):
    prompt = _every_prompt_kind()["coherence"]
    return prompt, _served(mistral_server, tekken).read_number(prompt, floor=0.0)


def test_an_exact_number_reading_equals_the_local_one(exact_number, local_mistral):
    """Equal as probabilities of each number given that a number is written (≤ 1e-4), and in
    coverage to a relative 1e-3: a random model's numbers run past 100, so its coverage is
    small and an absolute 1e-4 on the raw probabilities would compare near-zero vectors."""
    prompt, served = exact_number
    local = local_mistral.read_number(prompt, floor=0.0)
    assert served.exact and served.record["mode"] == "exact"
    assert served.record["requests"] > 100  # Tekken writes one digit per token
    mine, theirs = served.coverage, local.coverage
    given = [b / theirs for b in local.distribution]
    worst = max(abs(a / mine - b) for a, b in zip(served.distribution, given, strict=True))
    assert worst <= TOLERANCE, worst
    assert mine == pytest.approx(theirs, rel=1e-3)
    assert max(given) > 3 / 101  # not a flat reading
    assert served.mean == pytest.approx(local.mean, abs=0.01)


def test_an_exact_yes_no_reading_equals_the_local_one(mistral_server, tekken, local_mistral):
    prompt = _every_prompt_kind()["person_question"]
    local = local_mistral.read_yes_no(prompt, floor=0.0)
    reading = _served(mistral_server, tekken).read_yes_no(prompt, floor=0.0)
    assert reading.record["mode"] == "exact"
    assert reading.p_yes == pytest.approx(local.p_yes, abs=TOLERANCE)
    assert reading.coverage == pytest.approx(local.coverage, rel=1e-3)
    assert abs(local.p_yes - 0.5) > 0.05  # the weights lean one way


def test_a_bounded_reading_holds_the_exact_value(mistral_server, tekken, exact_number):
    prompt, exact = exact_number
    reading = _served(mistral_server, tekken, max_error=1.0).read_number(prompt, floor=0.0)
    bound = reading.bound
    assert bound is not None and bound.mean is not None
    assert bound.mean[0] - TOLERANCE <= exact.mean <= bound.mean[1] + TOLERANCE
    assert abs(reading.mean - exact.mean) <= 1.0 + TOLERANCE
    assert reading.record["requests"] < exact.record["requests"]


def _probe(server, tokenizer: str) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "diarylab.experiments.cli",
            "judge",
            "probe",
            "--judge",
            f"litellm:{server.litellm_model}",
            "--base-url",
            server.base_url,
            "--tokenizer",
            tokenizer,
            "--json",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def test_judge_probe_says_ok(mistral_server, mistral_shape):
    hf, _ = mistral_shape
    probe = _probe(mistral_server, str(hf))
    assert probe["mode"] == "exact" and probe["verdict"] == "ok", probe


# gpt-oss: the vLLM CPU build serves GptOssForCausalLM (unquantized weights) with the docs'
# flags, so the shape itself is served, not a stand-in architecture.
GPT_OSS = "openai/gpt-oss-120b"


@pytest.fixture(scope="module")
def gpt_oss_folder(shape_servers) -> Path:
    return Path(shape_servers["gpt_oss"])


@pytest.fixture(scope="module")
def harmony():
    from diarylab.model_access.seed_tokenizers import seed_tokenizer

    return seed_tokenizer(GPT_OSS)


@pytest.fixture(scope="module")
def local_gpt_oss(gpt_oss_folder, harmony):
    """The lab's local reader of the same weights, reading harmony prompts as the served judge
    renders them (the stand-in tokenizer carries openai-harmony's renderer)."""
    import torch
    from transformers import AutoModelForCausalLM

    from diarylab.model_access.local import LocalModel
    from diarylab.rubric.judging.local_judge import LocalJudge

    model = AutoModelForCausalLM.from_pretrained(gpt_oss_folder, dtype=torch.float32)
    return LocalJudge(LocalModel(model.eval(), harmony, spec=str(gpt_oss_folder)))


@pytest.mark.parametrize("kind", sorted(p.stem for p in TEMPLATES_DIR.glob("*.toml")))
def test_gpt_oss_reads_the_harmony_ids_the_lab_sends(gpt_oss_server, harmony, kind):
    rendered = render_judge_prompt(harmony, _every_prompt_kind()[kind])
    assert rendered.form == "harmony" and rendered.ids
    body = {"model": gpt_oss_server.served_name, "prompt": rendered.text}
    request = urllib.request.Request(
        gpt_oss_server.base_url.removesuffix("/v1") + "/tokenize",
        json.dumps(body | {"add_special_tokens": False}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert json.load(answer)["tokens"] == list(rendered.ids)


def test_gpt_oss_exact_readings_equal_the_local_ones(gpt_oss_server, harmony, local_gpt_oss):
    number = _every_prompt_kind()["coherence"]
    served = _served(gpt_oss_server, harmony).read_number(number, floor=0.0)
    local = local_gpt_oss.read_number(number, floor=0.0)
    assert served.exact and served.record["mode"] == "exact"
    mine, theirs = served.coverage, local.coverage
    given = [b / theirs for b in local.distribution]
    worst = max(abs(a / mine - b) for a, b in zip(served.distribution, given, strict=True))
    assert worst <= TOLERANCE, worst
    assert mine == pytest.approx(theirs, rel=1e-3)
    assert max(given) > 3 / 101
    question = _every_prompt_kind()["person_question"]
    served_yes = _served(gpt_oss_server, harmony).read_yes_no(question, floor=0.0)
    local_yes = local_gpt_oss.read_yes_no(question, floor=0.0)
    assert served_yes.p_yes == pytest.approx(local_yes.p_yes, abs=TOLERANCE)
    assert served_yes.coverage == pytest.approx(local_yes.coverage, rel=1e-3)


def test_gpt_oss_bounded_reading_and_probe(gpt_oss_server, harmony):
    """The probe with the seed judge's own hub id as the tokenizer (the stand-in the lab
    builds offline) says ok; a bounded reading holds the exact value."""
    probe = _probe(gpt_oss_server, GPT_OSS)
    assert probe["mode"] == "exact" and probe["verdict"] == "ok", probe
    number = _every_prompt_kind()["coherence"]
    exact = _served(gpt_oss_server, harmony).read_number(number, floor=0.0)
    bounded = _served(gpt_oss_server, harmony, max_error=1.0).read_number(number, floor=0.0)
    assert bounded.bound is not None and bounded.bound.mean is not None
    assert bounded.bound.mean[0] - TOLERANCE <= exact.mean <= bounded.bound.mean[1] + TOLERANCE
    assert abs(bounded.mean - exact.mean) <= 1.0 + TOLERANCE


SERVED_JUDGE = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "{model}"
tokenizer = "{tokenizer}"
max_error = 0.05
endpoint = {{ base_url = "{url}", max_retries = 2, backoff_s = 0.2, concurrency = {concurrency} }}
"""


def _server_counts(server) -> tuple[int, int]:
    """What the server itself counted: prompts finished (its Prometheus counter
    vllm:request_success_total, one per prompt of a list; vllm/v1/metrics/loggers.py) and HTTP
    requests answered (its access log's POST lines)."""
    with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/metrics") as answer:
        metrics = answer.read().decode()
    prompts = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("vllm:request_success_total")
    )
    posts = sum(
        '"POST /v1/' in line for line in server.log.read_text(errors="replace").splitlines()
    )
    return round(prompts), posts


def _short_run(
    server, tokenizer: str, folder: Path, tiny_model_folder: Path, concurrency: int = 8
) -> ShortRun:
    """A short diary run judged by a seed-shaped server (bounded, max_error 0.05, as the
    shipped study reads), and what the server counted for it."""
    from diarylab.testing.kill_resume import finish
    from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text

    judges = SERVED_JUDGE.format(
        model=server.litellm_model,
        tokenizer=tokenizer,
        url=server.base_url,
        concurrency=concurrency,
    )
    text = design_text(
        tiny_model_folder, None, entries=2, diarists='["amara"]', chatbots=FIXED_ONLY, judges=judges
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "design.toml"
    path.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["pattern"]')
    )
    before = _server_counts(server)
    finish(path, folder / "run", timeout_s=600)
    after = _server_counts(server)
    return ShortRun(path, folder / "run", after[0] - before[0], after[1] - before[1])


@dataclass(frozen=True)
class ShortRun:
    design: Path
    folder: Path
    prompts: int  # what the server counted for the run
    http: int


@pytest.fixture(scope="module")
def mistral_run(seed_servers, mistral_shape, tiny_model_folder, tmp_path_factory) -> ShortRun:
    """One short run on the Mistral-shaped server, the reference both for the plan and for the
    run whose server is killed (one reading at a time, so that the kill lands partway)."""
    folder = tmp_path_factory.mktemp("mistral-run")
    server, tokenizer = seed_servers["mistral"], str(mistral_shape[0])
    return _short_run(server, tokenizer, folder, tiny_model_folder, concurrency=1)


@pytest.mark.parametrize("shape", ["mistral", "gpt-oss"])
def test_plan_measure_is_within_a_quarter_of_what_a_run_takes(
    shape, request, seed_servers, tmp_path, tiny_model_folder, capsys
):
    """`plan --measure --from` a short run judged by the seed-shaped server: the plan's prompts
    and HTTP requests are within ±25 % of what the server itself counted for the run."""
    from diarylab.experiments.cli import main

    server = seed_servers[shape]
    if shape == "mistral":
        short = request.getfixturevalue("mistral_run")
    else:
        short = _short_run(server, GPT_OSS, tmp_path, tiny_model_folder)
    capsys.readouterr()
    counted = _server_counts(server)
    assert (
        main(["plan", str(short.design), "--json", "--measure", "--from", str(short.folder)]) == 0
    )
    plan = json.loads(capsys.readouterr().out)
    cost = plan["requests"]["served"]
    assert cost["expected_basis"] == "measured"
    assert cost["expected"] == pytest.approx(short.prompts, rel=0.25), (cost, short)
    assert cost["http_expected"] == pytest.approx(short.http, rel=0.25), (cost, short)
    assert _server_counts(server)[0] > counted[0]  # the measure read on the server too


def test_a_judge_server_killed_mid_run_stops_it_with_one_line_and_the_run_resumes(
    seed_servers, mistral_run, tmp_path, capsys
):
    """The Mistral-shaped judge's server is SIGKILLed while a run reads (out of memory, a
    preempted machine): the run stops with one clear line and no traceback, nothing
    half-written; the server is brought back on its port and the same command resumes to the
    store of the unbroken run. Kept last in the module: the server it brings back serves on.

    The run is made after `plan --measure --from` the short run, which keeps its measurement
    beside the design: the run keeps that plan, and `status` and the report put it (named as
    measured) beside what the run took, the 0–100 and yes/no readings within ±25 %."""
    import time

    from diarylab.experiments.cli import main
    from diarylab.testing.kill_resume import finish, progress, run_cli
    from diarylab.testing.stores import close, snapshot
    from diarylab.testing.vllm_server import kill, launch, wait_up

    assert main(["plan", str(mistral_run.design), "--measure", "--from",
                 str(mistral_run.folder)]) == 0  # fmt: skip
    assert "kept in" in capsys.readouterr().out
    server = seed_servers["mistral"]
    expected = snapshot(mistral_run.folder, ("entries", "replies", "judgments"))
    judged = [c for c in expected["calls"] if c[1] == "judge"]
    assert expected["judgments"] and len(judged) > 4

    broken = tmp_path / "broken"
    proc = run_cli(mistral_run.design, broken)
    entries = len(expected["calls"]) - len(judged)
    while proc.poll() is None and progress(broken) < entries + 2:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before its judge could be killed"
    kill(server)
    output = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode != 0, output
    errors = [line for line in output.splitlines() if line.startswith("diarylab: error:")]
    assert len(errors) == 1 and "Traceback" not in output, output
    stored = progress(broken)
    assert entries < stored < len(expected["calls"])  # stopped partway, what was read is kept

    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    back = wait_up(
        launch(server.model_folder, server.log.with_name("mistral-back.log"),
               extra_args=docs_flags(MISTRAL), max_model_len=2048, port=port, kv_cache_gib=1)
    )  # fmt: skip
    seed_servers["mistral"] = back
    finish(mistral_run.design, broken, timeout_s=600)
    got = snapshot(broken, ("entries", "replies", "judgments"))
    assert [c[:4] for c in got["calls"]] == [c[:4] for c in expected["calls"]]
    for name in ("entries", "replies"):
        assert got[name] == expected[name]
    assert close(got["judgments"], expected["judgments"], "judgments") == []
    assert close([c[4] for c in got["calls"]], [c[4] for c in expected["calls"]], "calls") == []

    assert json.loads((broken / "plan.json").read_text())["basis"]["kind"] == "measured"
    capsys.readouterr()
    assert main(["status", str(broken)]) == 0
    out = capsys.readouterr().out
    assert "the plan: measured on the judges on" in out
    for question in ("0–100", "yes/no"):
        line = next(x for x in out.splitlines() if f"served {question}:" in x)
        ratio = float(line.split("(")[-1].split("×")[0])
        assert 0.75 <= ratio <= 1.25, line
    assert main(["report", str(broken)]) == 0
    findings = (broken / "report" / "findings.md").read_text(encoding="utf-8")
    assert "The plan the run is held to: measured on the judges on" in findings
