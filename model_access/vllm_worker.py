"""The vLLM diarist engine's worker: a process of its own, run by the vLLM venv's python
(scripts/setup-vllm.sh), which loads one model into vLLM and generates for the lab, steered.

It imports nothing from the lab (the lab's environment has transformers 5.24, vLLM's CPU build
pins < 5.20), and speaks JSON lines: requests on stdin, answers on the file descriptor given by
--answers (stdout is handed to vLLM's logging, which writes there). model_access/vllm_engine.py
starts it and holds the protocol's other end.

Steering is part of the model's own forward: a Llama-architecture model is loaded as
vllm_steered_llama.py's class (registered with vLLM's model registry), whose decoder layers add
each token's steering from buffers of fixed size, so vLLM runs in its default mode (compiled;
CUDA graphs on a GPU) and no Python hook runs inside the model. The request's steering travels
in SamplingParams.extra_args, which reaches the runner's CachedRequestState; the model's outer
forward reads it each step. A steered request gets its own prefix-cache salt, so no request
reads KV blocks computed under another's steering. A model of another architecture loads as
vLLM's own class and is refused steered requests."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any

STEERABLE = ("LlamaForCausalLM",)


class Worker:
    def __init__(self, args: argparse.Namespace) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the model reads STATE
        from transformers import AutoConfig
        from vllm import LLM, ModelRegistry
        from vllm_steered_llama import ARCHITECTURE, STATE, DiarylabSteeredLlamaForCausalLM

        # bench/steering_speed.py: "plain" loads vLLM's own class (nothing steerable), "eager"
        # the steered class without compilation, to time both beside the default; the vLLM
        # resume test runs "eager" too (its worker starts are what it waits on).
        variant = os.environ.get("DIARYLAB_VLLM_VARIANT", "")
        architectures = list(getattr(AutoConfig.from_pretrained(args.model), "architectures", []))
        self.steerable = (
            bool(architectures) and architectures[0] in STEERABLE and variant != "plain"
        )
        self.architecture = architectures[0] if architectures else "unknown"
        overrides: dict[str, Any] = {}
        if self.steerable:
            ModelRegistry.register_model(ARCHITECTURE, DiarylabSteeredLlamaForCausalLM)
            overrides["hf_overrides"] = {"architectures": [ARCHITECTURE]}
            import torch

            if torch.cuda.is_available():
                # A FULL CUDA graph wraps the whole model, outer forward included, and a replay
                # would skip the step's fill of the steering buffers (vllm/v1/worker/
                # gpu_model_runner.py wraps self.model in CUDAGraphWrapper for FULL modes):
                # piecewise graphs keep torch.compile and CUDA graphs for the decoder stack and
                # run the outer forward each step. Breakable graphs wrap it too: kept off.
                os.environ["VLLM_USE_BREAKABLE_CUDAGRAPH"] = "0"
                overrides["compilation_config"] = {"cudagraph_mode": "PIECEWISE"}
        self.llm = LLM(
            model=args.model,
            tokenizer=args.model,
            dtype=args.dtype,
            max_model_len=args.max_model_len,
            max_num_seqs=args.max_num_seqs,
            gpu_memory_utilization=args.gpu_memory_utilization,
            enable_prefix_caching=True,
            generation_config="vllm",  # the model's own generation_config never acts
            seed=0,
            enforce_eager=variant == "eager",
            **overrides,
            **({"block_size": args.block_size} if args.block_size else {}),
        )
        self.runner = self.llm.collective_rpc(lambda worker: worker.model_runner)[0]
        self.layers = self.runner.model.model.layers
        self.state = STATE
        STATE.runner = self.runner

    def _device_dtype(self) -> tuple[Any, Any]:
        weight = next(self.runner.model.parameters())
        return weight.device, weight.dtype

    def register(self, key: str, spec: dict[str, Any]) -> None:
        """Give a steering a slot: its additions go into that slot of each layer's buffer."""
        import torch
        from vllm_steered_llama import SLOTS

        if not self.steerable:
            raise ValueError(
                f"steering inside vLLM needs a Llama-architecture model ({', '.join(STEERABLE)}); "
                f"this one is {self.architecture}: use the transformers engine for it"
            )
        if len(self.state.slots) >= SLOTS:
            raise ValueError(f"more than {SLOTS} distinct steerings in one generate call")
        device, dtype = self._device_dtype()
        slot = len(self.state.slots)
        for layer_text, values in spec["additions"].items():
            layer = int(layer_text)
            if not 0 <= layer < len(self.layers):
                raise ValueError(f"layer {layer} is outside the model's {len(self.layers)}")
            vector = torch.tensor(values, dtype=torch.float32).to(device, dtype)
            self.layers[layer].steer_directions[slot + 1].copy_(vector)  # row 0 stays zero
        self.state.slots[key] = slot
        self.state.positions[key] = spec["positions"]

    def _clear(self) -> None:
        """No steering left in the buffers: zero directions, no slots."""
        self.state.slots.clear()
        self.state.positions.clear()
        self.state.requests.clear()
        if self.steerable:
            for layer in self.layers:
                layer.steer_directions.zero_()

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt
        from vllm_steered_llama import STEER_KEY

        self._clear()
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
            self._clear()
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
            # Compiled (not eager) unless vLLM was told otherwise; steering inside the model.
            "enforce_eager": bool(config.model_config.enforce_eager),
            "compilation_mode": str(getattr(config.compilation_config, "mode", "")),
            "steered_model": self.steerable,
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
