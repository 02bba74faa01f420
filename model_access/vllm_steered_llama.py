"""Steering as part of vLLM's own Llama forward: the model class the vLLM worker registers
(vllm_worker.py; run by the vLLM venv's python, which imports this file beside it — the lab's
environment never imports it).

vLLM compiles the decoder stack (torch.compile; CUDA graphs on a GPU), so no Python hook may
run inside it. Each decoder layer instead adds, after its own forward, `directions[index]`:
`directions` ((slots + 1) × hidden) holds the layer's addition for each steering slot (row 0,
and any slot that does not steer this layer, stays zero), `index` (one entry per token of the
flat batch) names the row each token takes (0: an unsteered request, a position the steering
skips, a padded token). Both are buffers of fixed size allocated before the model is compiled
and only ever written in place, so the compiled graph reads their current values on every
step; the gather and the add are one elementwise pass at every layer for every token, with no
data-dependent branch (a gather, not a tokens × slots matmul: the compiler fuses it into the
layer's other elementwise work).

`index` is filled once per step, outside the compiled region, by the model's outer forward
(`DiarylabSteeredLlamaForCausalLM.forward`, which vLLM runs eagerly around the compiled
stack), from what the runner already holds on the host — its query_start_loc and each
request's computed-token count, from which vllm/v1/worker/gpu_model_runner.py
(_prepare_inputs) derives the positions itself — so no device value is read back and a GPU
step never waits on it. Positions the steering covers: "response" = the last prompt token and
every generated one, "prompt" = the prompt's tokens, "both" = all (the transformers path's
plan, steering/apply.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from vllm.forward_context import get_forward_context, is_forward_context_available
from vllm.model_executor.models.llama import LlamaDecoderLayer, LlamaForCausalLM

ARCHITECTURE = "DiarylabSteeredLlamaForCausalLM"
SLOTS = 16  # distinct steerings one generate call may hold (vllm_worker.py refuses more)
STEER_KEY = "diarylab_steer"


class SteeringState:
    """What the worker tells the model: its runner, and each steering key's slot and
    positions. One per process (the worker runs vLLM's engine in-process)."""

    runner: Any = None
    slots: dict[str, int] = {}
    positions: dict[str, str] = {}
    # req_id -> (slot, positions) or None, looked up once per request, not once per step.
    requests: dict[str, tuple[int, str] | None] = {}


STATE = SteeringState()


class SteeredDecoderLayer(LlamaDecoderLayer):
    def __init__(self, vllm_config: Any, prefix: str = "", **kwargs: Any) -> None:
        super().__init__(vllm_config=vllm_config, prefix=prefix, **kwargs)
        self.layer_index = int(prefix.rsplit(".", 1)[-1])
        # Created under vLLM's model dtype and device (it builds the model in that context).
        # Row 0 is the zero row every unsteered token takes; slot s is row s + 1.
        self.register_buffer(
            "steer_directions", torch.zeros(SLOTS + 1, self.hidden_size), persistent=False
        )

    def forward(
        self,
        positions: torch.Tensor,
        hidden_states: torch.Tensor,
        residual: torch.Tensor | None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states, residual = super().forward(positions, hidden_states, residual, **kwargs)
        # The residual stream after the block is hidden + residual (the next block's fused
        # add-norm forms it): adding here adds to the stream, as the transformers path does.
        rows = self.steer_index[: hidden_states.shape[0]]
        return hidden_states + self.steer_directions[rows], residual


class DiarylabSteeredLlamaForCausalLM(LlamaForCausalLM):
    def __init__(self, *, vllm_config: Any, prefix: str = "") -> None:
        super().__init__(vllm_config=vllm_config, prefix=prefix, layer_type=SteeredDecoderLayer)
        tokens = int(vllm_config.scheduler_config.max_num_batched_tokens)
        first = next(iter(self.model.layers))
        index = torch.zeros(tokens, dtype=torch.long, device=first.steer_directions.device)
        # One tensor, the same buffer in every layer: filled once per step.
        for layer in self.model.layers:
            if isinstance(layer, SteeredDecoderLayer):
                layer.register_buffer("steer_index", index, persistent=False)
        self.steer_index = index
        self.host_index = np.zeros(tokens, dtype=np.int64)

    def forward(
        self,
        input_ids: torch.Tensor | None,
        positions: torch.Tensor,
        intermediate_tensors: Any = None,
        inputs_embeds: torch.Tensor | None = None,
    ) -> Any:
        fill_index(self.steer_index, self.host_index, int(positions.shape[0]))
        return super().forward(input_ids, positions, intermediate_tensors, inputs_embeds)


def _request_steering(runner: Any, req_id: str) -> tuple[int, str] | None:
    if req_id not in STATE.requests:
        state = runner.requests.get(req_id)
        extra = getattr(getattr(state, "sampling_params", None), "extra_args", None) or {}
        key = extra.get(STEER_KEY, "")
        slot = STATE.slots.get(key)
        STATE.requests[req_id] = None if slot is None else (slot, STATE.positions[key])
    return STATE.requests[req_id]


def covered(mode: str, computed: int, count: int, prompt: int) -> tuple[int, int]:
    """Which of a request's `count` tokens this step (positions computed .. computed+count-1)
    the steering covers, as a range of offsets [lo, hi)."""
    if mode == "response":  # the last prompt token and every generated one
        return min(count, max(0, prompt - 1 - computed)), count
    if mode == "prompt":
        return 0, min(count, max(0, prompt - computed))
    return 0, count


def fill_index(index: torch.Tensor, host: np.ndarray, tokens: int) -> None:
    """Write this step's per-token rows into `index` in place (0 where nothing steers: a
    dummy run, an unsteered request, an uncovered position, padding)."""
    runner = STATE.runner
    rows = host[:tokens]
    rows.fill(0)
    if (
        runner is not None
        and STATE.slots
        and is_forward_context_available()
        and getattr(get_forward_context(), "attn_metadata", None) is not None
    ):  # else a dummy run (profiling, warm-up, compilation): nothing to steer
        batch = runner.input_batch
        starts = runner.query_start_loc.np
        computed = batch.num_computed_tokens_cpu
        for i, req_id in enumerate(batch.req_ids):
            steering = _request_steering(runner, req_id)
            if steering is None:
                continue
            a, b = int(starts[i]), int(starts[i + 1])
            slot, mode = steering
            prompt = int(runner.requests[req_id].num_prompt_tokens)
            lo, hi = covered(mode, int(computed[i]), b - a, prompt)
            rows[a + lo : a + hi] = slot + 1
    index[:tokens].copy_(torch.from_numpy(rows), non_blocking=True)
