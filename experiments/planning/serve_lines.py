"""`diarylab serve-lines DESIGN`: the commands that put a design's models on GPUs, made from the
design and its plan rather than written by hand. For each served model (a judge or chatbot on an
OpenAI-compatible server of the researcher's own): the `hf download` of its weights and the
`vllm serve` line — the port its base URL names, `--max-model-len` from the plan's longest
prompt plus its new tokens, the format flags and reasoning parser the hardware table gives the
model, `--max-logprobs` from what the judge's readings ask, prefix caching, and the tensor
parallel size that holds it on the named GPU kind. Then what the machine that runs `diarylab
run` needs: the diarist's and local chatbots' weights, and the exact judges' tokenizer files."""

from __future__ import annotations

import math
from urllib.parse import urlparse

from diarylab.chatbots.specs import ChatbotSpec, LocalChatbotSpec, ServedChatbotSpec
from diarylab.experiments.checks.reach import served_name
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.planning.gpu_hours import ModelCost
from diarylab.experiments.planning.hardware import ModelSize
from diarylab.experiments.planning.render_gpu import GpuPlan
from diarylab.model_access.settings import EndpointSettings

VLLM_DEFAULT_LOGPROBS = 20  # vLLM's own --max-logprobs default
# The model's context: the plan's longest prompt and its new tokens, with room for the prompt
# estimate's error (instruction text at CHARS_PER_TOKEN), rounded up to a multiple of 512.
CONTEXT_ROOM = 1.25
CONTEXT_ROUND = 512
TOKENIZER_FILES = '"tokenizer*" "special_tokens_map.json" "chat_template*"'
# Where scripts/setup-vllm.sh puts vLLM (it prints the venv's python; `vllm` is beside it).
VLLM_LINE = 'VLLM="$(dirname "$(./scripts/setup-vllm.sh)")/vllm"'


def serve_lines(design: Design, g: GpuPlan) -> list[str]:
    spec = design.spec
    costs = {c.work.who: c for c in g.costs}
    out = [
        f"# {design.name}: the vLLM servers its design names and the weights each machine needs,",
        f"# on {g.gpu.name} (diarylab serve-lines; `--gpu` names another kind).",
        "# vLLM is installed by the lab's script, which prints its python; `vllm` is beside it:",
        VLLM_LINE,
    ]
    served: list[tuple[str, str, EndpointSettings, ModelCost, list[str]]] = []
    for named in spec.judges:
        judge = named.served()
        if judge is not None and judge.endpoint.urls and judge.id in costs:
            logprobs = max(VLLM_DEFAULT_LOGPROBS, judge.logprobs_asked())
            served.append(("judge", judge.id, judge.endpoint, costs[judge.id],
                           ["--max-logprobs", str(logprobs)]))  # fmt: skip
    for bot in spec.chatbots:
        if isinstance(bot, ServedChatbotSpec) and costs.get(bot.id) is not None:
            cost = costs[bot.id]
            if cost.work.where == "served":
                served.append(("chatbot", bot.id, bot.endpoint, cost, _thinks(bot, g)))
    for role, who, endpoint, cost, extra in served:
        model = served_name(cost.work.model)
        size = g.hardware.model(model)
        gpus = f"{cost.gpus} × {g.gpu.name}" if cost.gpus else "GPUs unknown (not in the table)"
        out += ["", f"# {role} {who}: {gpus}, at {', '.join(endpoint.urls)}"]
        out += _download(model, size)
        for url in endpoint.urls:
            flags = [
                *(size.vllm_flags if size else ()),
                "--port", str(urlparse(url).port or 8000),
                "--max-model-len", str(context_length(cost.work.longest)),
                *extra,
                "--enable-prefix-caching",
                "--tensor-parallel-size", str(cost.gpus or 1),
            ]  # fmt: skip
            out += _wrapped(f"$VLLM serve {model}", flags)
    out += ["", "# the machine that runs `diarylab run` (the diarist and local chatbots load here)"]
    local = [spec.writing_model.model] if spec.writing_model is not None else []
    local += [b.model for b in spec.chatbots if isinstance(b, LocalChatbotSpec)]
    for model in dict.fromkeys(local):
        out += _download(model, g.hardware.model(model))
    for named in spec.judges:
        if (tokenizer := named.hub_tokenizer()) is not None:
            out += [
                f"# {named.id}'s tokenizer files (optional: without them the lab builds an "
                "offline stand-in, model_access/seed_tokenizers.toml)",
                f"hf download {tokenizer} --include {TOKENIZER_FILES}",
            ]
    return out


def context_length(longest: float) -> int:
    """--max-model-len for sequences of at most `longest` tokens (the plan's estimate)."""
    return int(math.ceil(longest * CONTEXT_ROOM / CONTEXT_ROUND) * CONTEXT_ROUND)


def context_floor(longest: float) -> int:
    """The context a server must hold for the plan's longest sequence: the estimate itself,
    without serve-lines' room (a check refuses less than this)."""
    return int(math.ceil(longest))


def _thinks(bot: ChatbotSpec, g: GpuPlan) -> list[str]:
    """A chatbot let think (or told not to, in case it still does) gets its model's parser."""
    assert isinstance(bot, ServedChatbotSpec)
    size = g.hardware.model(served_name(bot.model))
    if bot.thinking == "none" or size is None or size.reasoning_parser is None:
        return []
    return ["--reasoning-parser", size.reasoning_parser]


def _download(model: str, size: ModelSize | None) -> list[str]:
    if model.startswith((".", "/", "~")) or "/" not in model:
        return [f"# {model}: a folder or the lab's own, nothing to download"]
    lines = []
    if size is not None and size.gated:
        lines.append(
            f"# gated: accept its licence at https://huggingface.co/{model}, then `hf auth login`"
        )
    include = f" --include {' '.join(size.download)}" if size and size.download else ""
    return [*lines, f"hf download {model}{include}"]


def _wrapped(head: str, flags: list[str]) -> list[str]:
    """A command with its flags, a flag and its value kept together, as shell continuation
    lines under 100 characters."""
    pairs: list[str] = []
    for flag in flags:
        if flag.startswith("--") or not pairs:
            pairs.append(flag)
        else:
            pairs[-1] += f" {flag}"
    lines, line = [], head
    for pair in pairs:
        if len(line) + len(pair) + 3 > 96:
            lines.append(line + " \\")
            line = "    " + pair
        else:
            line += f" {pair}"
    return [*lines, line]
