"""The Mistral-format seed judge on a real vLLM server (the `vllm` tier): a tiny random Mistral
in Mistral's own format (tests/seed_shapes.py) served with exactly the flags docs/gpu-study.md
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
from pathlib import Path

import pytest

from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import TEMPLATES_DIR, JudgePrompt, load_template
from tests.kill_resume import ROOT

pytestmark = pytest.mark.vllm

TOLERANCE = 1e-4
DOCS = ROOT / "docs" / "gpu-study.md"
MISTRAL = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
ENTRY = "Nobody called again today. I ate dinner standing at the counter and went to bed at eight."


def docs_flags(model: str) -> tuple[str, ...]:
    """The flags docs/gpu-study.md serves `model` with that set its formats (tokenizer, config,
    load), in the page's order."""
    page = DOCS.read_text(encoding="utf-8")
    line = page[page.index(f"vllm serve {model}") :].split("\n    vllm serve")[0]
    words = line.replace("\\\n", " ").split()
    flags: list[str] = []
    for i, word in enumerate(words):
        if word in ("--tokenizer-mode", "--config-format", "--load-format"):
            flags += [word, words[i + 1]]
    return tuple(flags)


@pytest.fixture(scope="module")
def mistral_shape(tmp_path_factory) -> tuple[Path, Path]:
    from tests.seed_shapes import build_mistral_judge

    return build_mistral_judge(tmp_path_factory.mktemp("mistral-shape"))


@pytest.fixture(scope="module")
def seed_servers(mistral_shape, gpt_oss_folder, tmp_path_factory):
    """Both seed shapes' servers, launched together (their start-ups overlap): Mistral with
    the docs' format flags, gpt-oss with the docs' line, which sets no format."""
    from tests.vllm_server import launch, start_together, stop

    _, native = mistral_shape
    page = DOCS.read_text(encoding="utf-8")
    line = page[page.index(f"vllm serve {GPT_OSS}") :].split("\n    vllm serve")[0]
    assert not docs_flags(GPT_OSS) and "--max-logprobs 20" in line  # what launch() passes too
    logs = tmp_path_factory.mktemp("seed-vllm")
    servers = start_together(
        launch(native, logs / "mistral.log", extra_args=docs_flags(MISTRAL), max_model_len=2048),
        launch(gpt_oss_folder, logs / "gpt-oss.log", max_model_len=2048),
    )
    try:
        yield dict(zip(("mistral", "gpt-oss"), servers, strict=True))
    finally:
        for server in servers:
            stop(server, grace_s=3.0)


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
def gpt_oss_folder(tmp_path_factory) -> Path:
    from tests.seed_shapes import build_gpt_oss_judge

    return build_gpt_oss_judge(tmp_path_factory.mktemp("gpt-oss-shape") / "hf")


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
