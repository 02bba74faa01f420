"""The vLLM diarist engine's worker: a process of its own, run by the vLLM venv's python
(scripts/setup-vllm.sh), which loads one model into vLLM and generates for the lab, steered.

It imports nothing from the lab (the lab's environment has transformers 5.24, vLLM's CPU build
pins < 5.20), and speaks JSON lines: requests on stdin, answers on the file descriptor given by
--answers (stdout is handed to vLLM's logging, which writes there). model_access/vllm_engine.py
starts it and holds the protocol's other end.

Steering, with vLLM's own model: a forward hook on each steered decoder layer adds each
request's vector to its tokens' residual stream. vLLM runs a batch as one flat run of tokens;
the hook finds which tokens belong to which request from the attention metadata's
query_start_loc and the runner's input batch (vllm/v1/worker/gpu_model_runner.py keeps both in
the same order), and each token's absolute position from the layer's own `positions` argument,
so chunked prefill, preemption (recomputed tokens keep their positions) and decoding all steer
the same tokens the transformers path steers (steering/apply.py build_plan): "response" = the
last prompt token and every generated one, "prompt" = the prompt's tokens, "both" = all.
The request's steering travels in SamplingParams.extra_args, which reaches the runner's
CachedRequestState. A steered request gets its own prefix-cache salt, so no request reads
KV blocks computed under another's steering. The model runs eagerly (no torch.compile, no
graphs): hooks must see every forward."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any

STEER_KEY = "diarylab_steer"
STEERS: dict[str, dict[str, Any]] = {}  # key -> {"positions": str, "additions": {layer: tensor}}


def _metadata_start_loc(context: Any) -> list[int] | None:
    metadata = getattr(context, "attn_metadata", None)
    if isinstance(metadata, list):  # micro-batched: one dict per micro-batch
        metadata = metadata[0] if metadata else None
    if isinstance(metadata, dict):
        metadata = next(iter(metadata.values()), None)
    loc = getattr(metadata, "query_start_loc", None)
    return None if loc is None else [int(i) for i in loc.tolist()]


def _hook(runner: Any, layer: int) -> Any:
    import torch
    from vllm.forward_context import get_forward_context, is_forward_context_available

    def hook(module: Any, args: Any, output: Any) -> Any:
        if not STEERS or not is_forward_context_available():
            return None
        starts = _metadata_start_loc(get_forward_context())
        if starts is None:  # a dummy run (profiling, warm-up): nothing to steer
            return None
        positions = args[0]
        hidden, residual = output
        addition = None
        for i, req_id in enumerate(runner.input_batch.req_ids[: len(starts) - 1]):
            state = runner.requests.get(req_id)
            extra = getattr(getattr(state, "sampling_params", None), "extra_args", None) or {}
            steer = STEERS.get(extra.get(STEER_KEY, ""))
            if steer is None or layer not in steer["additions"]:
                continue
            a, b = starts[i], starts[i + 1]
            where = positions[a:b]
            prompt = int(state.num_prompt_tokens)
            if steer["positions"] == "response":
                mask = where >= prompt - 1
            elif steer["positions"] == "prompt":
                mask = where < prompt
            else:
                mask = torch.ones_like(where, dtype=torch.bool)
            if addition is None:
                addition = torch.zeros_like(hidden)
            addition[a:b] += mask[:, None].to(hidden.dtype) * steer["additions"][layer]
        if addition is None:
            return None
        # vLLM's Llama-style blocks return (mlp output, residual); the residual stream after
        # the block is their sum, which the next block's fused add-norm forms.
        return hidden + addition, residual

    return hook


class Worker:
    def __init__(self, args: argparse.Namespace) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # hooks live in this process
        from vllm import LLM

        self.llm = LLM(
            model=args.model,
            tokenizer=args.model,
            dtype=args.dtype,
            max_model_len=args.max_model_len,
            max_num_seqs=args.max_num_seqs,
            gpu_memory_utilization=args.gpu_memory_utilization,
            enforce_eager=True,
            compilation_config={"mode": 0},
            enable_prefix_caching=True,
            generation_config="vllm",  # the model's own generation_config never acts
            seed=0,
            **({"block_size": args.block_size} if args.block_size else {}),
        )
        self.runner = self.llm.collective_rpc(lambda worker: worker.model_runner)[0]
        self.layers = self.runner.model.model.layers
        self.hooked: set[int] = set()

    def _device_dtype(self) -> tuple[Any, Any]:
        weight = next(self.runner.model.parameters())
        return weight.device, weight.dtype

    def register(self, key: str, spec: dict[str, Any]) -> None:
        import torch

        device, dtype = self._device_dtype()
        additions = {}
        for layer_text, values in spec["additions"].items():
            layer = int(layer_text)
            if not 0 <= layer < len(self.layers):
                raise ValueError(f"layer {layer} is outside the model's {len(self.layers)}")
            additions[layer] = torch.tensor(values, dtype=torch.float32).to(device, dtype)
            if layer not in self.hooked:
                self.layers[layer].register_forward_hook(_hook(self.runner, layer))
                self.hooked.add(layer)
        STEERS[key] = {"positions": spec["positions"], "additions": additions}

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        STEERS.clear()
        for key, spec in request.get("steers", {}).items():
            self.register(key, spec)
        prompts, params = [], []
        for row in request["rows"]:
            prompt = TokensPrompt(prompt_token_ids=list(row["prompt"]))
            extra = {}
            if row.get("steer"):
                prompt["cache_salt"] = row["steer"]
                extra[STEER_KEY] = row["steer"]
            prompts.append(prompt)
            params.append(
                SamplingParams(
                    n=1,
                    max_tokens=int(request["max_new_tokens"]),
                    temperature=float(request["temperature"]),
                    top_p=float(request["top_p"]),
                    seed=row.get("seed"),
                    stop_token_ids=list(request["stop_token_ids"]),
                    ignore_eos=False,
                    skip_special_tokens=False,
                    detokenize=False,
                    extra_args=extra or None,
                )
            )
        try:
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
        finally:
            STEERS.clear()
        return {
            "outputs": [
                {
                    "token_ids": list(o.outputs[0].token_ids),
                    "finish_reason": o.outputs[0].finish_reason,
                }
                for o in outputs
            ]
        }

    def describe(self) -> dict[str, Any]:
        import vllm

        config = self.llm.llm_engine.vllm_config
        return {
            "vllm": vllm.__version__,
            "num_layers": len(self.layers),
            "hidden_size": int(config.model_config.get_hidden_size()),
            "dtype": str(self._device_dtype()[1]).removeprefix("torch."),
            # What vLLM runs with, as the lab asked (tests hold these to the design).
            "max_model_len": int(config.model_config.max_model_len),
            "max_num_seqs": int(config.scheduler_config.max_num_seqs),
            "block_size": int(config.cache_config.block_size),
            "gpu_memory_utilization": float(config.cache_config.gpu_memory_utilization),
        }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--max-num-seqs", type=int, default=8)
    parser.add_argument("--block-size", type=int, default=0)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--answers", type=int, required=True, help="file descriptor for answers")
    args = parser.parse_args()
    answers = os.fdopen(args.answers, "w", buffering=1)
    os.dup2(2, 1)  # whatever vLLM prints goes to stderr, never into the answers

    def say(payload: dict[str, Any]) -> None:
        answers.write(json.dumps(payload) + "\n")

    try:
        worker = Worker(args)
    except Exception as error:  # noqa: BLE001 - reported to the lab, which raises it
        say({"ok": False, "error": f"{type(error).__name__}: {error}"})
        traceback.print_exc()
        return 1
    say({"ok": True, **worker.describe()})
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "close":
            break
        try:
            say({"ok": True, **worker.generate(request)})
        except Exception as error:  # noqa: BLE001 - one bad request does not end the worker
            traceback.print_exc()
            say({"ok": False, "error": f"{type(error).__name__}: {error}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
