"""Steering as part of vLLM's own Llama forward: the model class the vLLM worker registers
(vllm_worker.py; run by the vLLM venv's python, which imports this file beside it — the lab's
environment never imports it).

vLLM compiles the decoder stack (torch.compile; CUDA graphs on a GPU), so no Python hook may
run inside it. Each decoder layer instead adds, after its own forward, `coef @ directions`:
`directions` (slots × hidden) is the layer's addition for each steering slot (zero where the
slot does not steer this layer), `coef` (tokens × slots) says which slot each token of the
flat batch takes (1) and which it does not (0: an unsteered request, a position the steering
skips, a padded token). Both are buffers of fixed size allocated before the model is compiled
and only ever written in place, so the compiled graph reads their current values on every
step; the add is done at every layer for every token, with no data-dependent branch.

`coef` is filled once per step, outside the compiled region, by the model's outer forward
(`DiarylabSteeredLlamaForCausalLM.forward`, which vLLM runs eagerly around the compiled
stack): from the forward context's query_start_loc and the runner's input batch (the same
order vllm/v1/worker/gpu_model_runner.py keeps them in) it finds each token's request and its
steering slot, and from the positions which tokens the steering covers: "response" = the last
prompt token and every generated one, "prompt" = the prompt's tokens, "both" = all (the
transformers path's plan, steering/apply.py)."""

from __future__ import annotations

from typing import Any

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


STATE = SteeringState()


class SteeredDecoderLayer(LlamaDecoderLayer):
    def __init__(self, vllm_config: Any, prefix: str = "", **kwargs: Any) -> None:
        super().__init__(vllm_config=vllm_config, prefix=prefix, **kwargs)
        self.layer_index = int(prefix.rsplit(".", 1)[-1])
        # Created under vLLM's model dtype and device (it builds the model in that context).
        self.register_buffer(
            "steer_directions", torch.zeros(SLOTS, self.hidden_size), persistent=False
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
        addition = self.steer_coef[: hidden_states.shape[0]] @ self.steer_directions
        return hidden_states + addition.to(hidden_states.dtype), residual


class DiarylabSteeredLlamaForCausalLM(LlamaForCausalLM):
    def __init__(self, *, vllm_config: Any, prefix: str = "") -> None:
        super().__init__(vllm_config=vllm_config, prefix=prefix, layer_type=SteeredDecoderLayer)
        tokens = int(vllm_config.scheduler_config.max_num_batched_tokens)
        first = next(iter(self.model.layers))
        coef = torch.zeros(
            tokens, SLOTS, dtype=first.steer_directions.dtype, device=first.steer_directions.device
        )
        # One tensor, the same buffer in every layer: filled once per step.
        for layer in self.model.layers:
            if isinstance(layer, SteeredDecoderLayer):
                layer.register_buffer("steer_coef", coef, persistent=False)
        self.steer_coef = coef

    def forward(
        self,
        input_ids: torch.Tensor | None,
        positions: torch.Tensor,
        intermediate_tensors: Any = None,
        inputs_embeds: torch.Tensor | None = None,
    ) -> Any:
        fill_coefficients(self.steer_coef, positions)
        return super().forward(input_ids, positions, intermediate_tensors, inputs_embeds)


def _start_loc(context: Any) -> list[int] | None:
    metadata = getattr(context, "attn_metadata", None)
    if isinstance(metadata, list):  # micro-batched: one dict per micro-batch
        metadata = metadata[0] if metadata else None
    if isinstance(metadata, dict):
        metadata = next(iter(metadata.values()), None)
    loc = getattr(metadata, "query_start_loc", None)
    return None if loc is None else [int(i) for i in loc.tolist()]


def fill_coefficients(coef: torch.Tensor, positions: torch.Tensor) -> None:
    """Write this step's token × slot coefficients into `coef` in place (zeros where nothing
    steers: a dummy run, an unsteered request, an uncovered position, padding)."""
    coef.zero_()
    runner = STATE.runner
    if runner is None or not STATE.slots or not is_forward_context_available():
        return
    starts = _start_loc(get_forward_context())
    if starts is None:  # a dummy run (profiling, warm-up, compilation): nothing to steer
        return
    for i, req_id in enumerate(runner.input_batch.req_ids[: len(starts) - 1]):
        state = runner.requests.get(req_id)
        extra = getattr(getattr(state, "sampling_params", None), "extra_args", None) or {}
        key = extra.get(STEER_KEY, "")
        slot = STATE.slots.get(key)
        if slot is None:
            continue
        a, b = starts[i], starts[i + 1]
        where = positions[a:b]
        prompt = int(state.num_prompt_tokens)
        mode = STATE.positions[key]
        if mode == "response":
            mask = where >= prompt - 1
        elif mode == "prompt":
            mask = where < prompt
        else:
            mask = torch.ones_like(where, dtype=torch.bool)
        coef[a:b, slot] = mask.to(coef.dtype)
