"""What a rehearsal runs on: a seed design (diary-full.toml, friends.toml) rewritten so that every
model is a zero-cost stand-in on the lab's real code paths, and the stand-ins themselves.

- The diarist model (and any local chatbot or judge): a random two-block Llama built in code with
  the embedded tokenizer, written as a model folder. It writes every text to its token cap (a
  random model rarely ends early), so texts have the study's length. Its two blocks are what a
  steered forward pass costs little on (nnsight's per-module work grows with the blocks: a
  20-block stand-in wrote 288 texts in 10 minutes here), so the profiles' layers are mapped onto
  them: a calibration sweep over the design's four layers becomes one over blocks 0 and 1.
- Served judges: the vLLM-faithful judge stand-in (bench/judge_standin.py over
  testing/fake_judge_server.py, a confident judge) in a process of its own per seed judge, each
  over that judge's own vocabulary (Tekken for Mistral Small 3.1, o200k-harmony for gpt-oss:
  the stand-ins the lab builds offline, model_access/seed_tokenizers.py). The design keeps each
  judge's tokenizer and prompt form, so the client renders, encodes and reads every prompt as in
  a real run, exactly by token ids. It runs --costless: the judge's next-token rows come from its
  bigram bias and prompt-seeded noise, not from a forward pass, so the stand-in answers at once
  whatever the prompt's length. (Before 2026-12-05 both judges read a 382-token test vocabulary
  that spells most words letter by letter: prompts 3.7 times as long in tokens as a real
  judge's, and no shared encoding of a reply's questions; docs/scaling.md.)
- Served chatbots: a loopback OpenAI-compatible stand-in (testing/fake_openai.py) answering each
  request at once with seeded prose of a reply's length (about 120 words).
- The diarist writes without the nucleus (top_p 1; see rehearsal_design).
- Role cards: the eight shipped cards, and for a larger cast copies of them under new ids (a
  folder of cards the run reads in place of diarists/cards/).

Nothing here is a result: the figures are the lab's own cost around models that cost nothing."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.foundation.toml_writing import dump_toml

ROOT = Path(__file__).resolve().parents[1]
DESIGNS = ROOT / "experiments" / "designs"
STUDIES = {"diary": DESIGNS / "diary-full.toml", "friends": DESIGNS / "friends.toml"}
CLI = [sys.executable, "-m", "diarylab.experiments.cli"]
KEY_ENV = "DIARYLAB_REHEARSAL_KEY"  # the served stand-ins' key: present, never a real one
SENTENCE = (
    "today the kitchen light flickered again and I kept thinking about the message I never sent "
    "walked to the station early because the house felt too quiet after dinner and my sister "
    "called but I let it ring while the kettle boiled and the rain kept on all afternoon"
)
WORDS = SENTENCE.split(" ")


@dataclass(frozen=True)
class StandIns:
    # by the judge's tokenizer (hub id): its stand-in's URL, or its replicas' (a base_url list)
    judge_urls: dict[str, str | list[str]]
    chat_url: str
    model_folder: Path
    cards: Path
    judge_pids: tuple[int, ...] = ()  # the judge stand-ins' processes (their CPU is measured)


# The stand-in writer's chat template: ChatML's layout, written here.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
WRITER_VOCABULARY = 2048


def writer_tokenizer() -> Any:
    """A byte-level BPE of 2,048 tokens trained here on the lab's own role cards, templates and
    patterns. A writer's cost on a CPU is mostly its vocabulary (the output layer, the sampler's
    noise and its Gumbel transform run over every token id per row and step: 49,152 with the
    embedded tokenizer); with 2,048 its texts keep about the length in characters a real
    tokenizer's give (whole words are tokens) and every text still encodes losslessly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    sources = [ROOT / "diarists", ROOT / "rubric" / "templates", ROOT / "chatbots"]
    corpus = [p.read_text(encoding="utf-8") for d in sources for p in sorted(d.rglob("*.toml"))]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=WRITER_VOCABULARY,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([*corpus, SENTENCE], trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def model_folder(work: Path, layers: int = 2) -> Path:
    """The random Llama the diarist (and any local model) is replaced with."""
    folder = work / f"tiny-llama-{layers}-v{WRITER_VOCABULARY}"
    if (folder / "config.json").is_file():
        return folder
    from diarylab.testing.tiny_models import build_tiny_llama

    tokenizer = writer_tokenizer()
    build_tiny_llama(tokenizer, layers=layers).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def fresh_run_folder(folder: Path) -> Path:
    """A run folder emptied for the bench: an earlier rehearsal's run left there would be
    resumed as finished, and its figures would measure nothing."""
    if folder.exists():
        print(f"removing the earlier run folder {folder}", file=sys.stderr)
        shutil.rmtree(folder)
    return folder


def cards_folder(work: Path, count: int) -> tuple[Path, list[str]]:
    """A folder of `count` role cards: the shipped eight, then copies under new ids."""
    from diarylab.diarists.cards import CARDS_DIR

    folder = work / f"cards-{count}"
    folder.mkdir(parents=True, exist_ok=True)
    shipped = sorted(CARDS_DIR.glob("*.toml"))
    ids = []
    for i in range(count):
        source = shipped[i % len(shipped)]
        copy = i // len(shipped)
        card_id = source.stem if copy == 0 else f"{source.stem}{copy + 1}"
        text = source.read_text(encoding="utf-8")
        if copy:
            text = text.replace(f'id = "{source.stem}"', f'id = "{card_id}"', 1)
        (folder / f"{card_id}.toml").write_text(text, encoding="utf-8")
        ids.append(card_id)
    return folder, ids


def reply_text(body: dict[str, Any]) -> str:
    """Seeded prose of a chatbot reply's length, different per request and per chatbot (the
    model it names), as two chatbots' replies to one entry are."""
    seed = json.dumps([body.get("model", ""), body.get("messages", "")], sort_keys=True)
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(120)).capitalize() + "."


@contextmanager
def chat_standin() -> Iterator[str]:
    from diarylab.testing.fake_openai import chat_response, serve

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, chat_response(reply_text(body), model=str(body.get("model", "stand-in")))

    with serve(answer, keep_alive=True, record=False) as server:
        yield server.base_url


# The seed judges' tokenizers (by hub id, as the seed designs name them) and the judge stand-in
# kind that serves each with the same vocabulary (bench/judge_standin.py).
JUDGE_KINDS = {
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": "tekken",
    "openai/gpt-oss-120b": "o200k",
}


@contextmanager
def judge_standin(kind: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "judge_standin.py"), kind, "--costless"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stdin is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise SystemExit(f"the judge stand-in did not start: {line!r}")
    try:
        yield f"http://127.0.0.1:{line.split()[1]}/v1", process
    finally:
        process.stdin.close()
        process.wait(timeout=60)


@contextmanager
def stand_ins(work: Path, cards: Path, replicas: int = 1) -> Iterator[StandIns]:
    """Every stand-in a rehearsal runs on, started for the length of the block: one judge
    stand-in per seed judge tokenizer, each in a process of its own (as each judge is served
    apart); with `replicas` > 1 that many processes per judge, listed as the judge's replicas
    (one stand-in process answers ~670 prompts a second: on a many-core machine one per judge
    would measure the stand-ins, not the lab). Their answers are a function of the request
    alone, so which replica answers changes nothing stored."""
    with ExitStack() as stack:
        chat_url = stack.enter_context(chat_standin())
        urls: dict[str, str | list[str]] = {}
        pids: list[int] = []
        for hub_id, kind in JUDGE_KINDS.items():
            made = [stack.enter_context(judge_standin(kind)) for _ in range(replicas)]
            started = [url for url, _ in made]
            pids += [process.pid for _, process in made]
            urls[hub_id] = started[0] if replicas == 1 else started
        yield StandIns(urls, chat_url, model_folder(work), cards, tuple(pids))


def rehearsal_design(
    study: str, work: Path, stand_ins: StandIns, cards: list[str], *, small_profiles: bool = False
) -> Path:
    """The seed design of `study` with every model a stand-in and `cards` as its cast.
    `small_profiles` (the CI test's reduced rehearsal): each inline profile made from 4 contrast
    pairs and a 2 x 2 calibration sweep over 2 prompts, and texts of at most 48 tokens; the
    study keeps its shape (profiles, chatbots, judges, entries, scores, hypotheses)."""
    data = tomllib.loads(STUDIES[study].read_text(encoding="utf-8"))
    for rule in data.get("profiles", []):
        c = rule.get("calibration")
        if c is not None:
            c["layers"] = [0, 1]  # the stand-in's two blocks
        if rule.get("steer"):
            rule["steer"]["layers"] = [1]
        if small_profiles:
            rule["extraction"]["pairs"] = 4
            if c is not None:
                c.update(strengths=c["strengths"][:2], prompts=2)
    data["design"]["name"] = f"{data['design']['name']}-rehearsal-{len(cards)}"
    data["diarist_model"]["model"] = str(stand_ins.model_folder)
    data["diarist_model"]["local"] = {"batch_size": 64}  # float32 on CPU: no bf16 here
    # Without the nucleus: the lab's top-p sort of the whole vocabulary (model_access/sampling.py
    # _nucleus) was 43% of the stand-in's writing time on these CPUs (py-spy, 2026-12-04); on a
    # GPU the sort runs on the device.
    data["diarist_model"]["generation"]["top_p"] = 1.0
    if small_profiles:
        data["diarist_model"]["generation"]["max_new_tokens"] = 48
    if study == "diary":
        data["cast"]["diarists"] = cards
    else:
        data["pairs"]["cards"] = cards
    data["analysis"]["no_verdicts"] = "a rehearsal on stand-in models: it measures the lab's costs"
    for bot in data.get("chatbots", []):
        if bot["kind"] == "local":
            bot["model"] = str(stand_ins.model_folder)
        elif bot["kind"] != "fixed":
            bot["kind"] = "litellm"
            bot["model"] = f"openai/{bot['id']}"
            bot["endpoint"] = {"base_url": stand_ins.chat_url, "api_key_env": KEY_ENV,
                               "concurrency": 16}  # fmt: skip
    for judge in data["judges"]:
        # Each judge keeps its own tokenizer (the seed stand-in the lab builds offline, as a
        # machine without the hub cache would run the study) and its prompt form (harmony for
        # gpt-oss): the client's work per prompt is a real run's.
        judge["model"] = f"hosted_vllm/{judge['id']}"
        url = stand_ins.judge_urls[judge["tokenizer"]]
        judge["endpoint"] = {**judge["endpoint"], "base_url": url}
    path = work / f"{study}-{len(cards)}{'-small' if small_profiles else ''}.toml"
    path.write_text(dump_toml(data), encoding="utf-8")
    return path


def timed_command(args: list[str], env: dict[str, str]) -> float:
    return measured_command(args, env)[0]


def measured_command(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run a lab command as a user does; its wall seconds and its own peak memory in MB, read
    from its /proc VmHWM while it runs (rusage would count the bench's own memory: a forked
    child's high-water mark starts at its parent's)."""
    import tempfile

    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [*CLI, *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors
        )
        peak_kb = 0
        status = Path(f"/proc/{process.pid}/status")
        while process.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        wall = round(time.perf_counter() - start, 2)
        if process.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{' '.join(args)} failed:\n{message}")
    return wall, round(peak_kb / 1024, 1)
