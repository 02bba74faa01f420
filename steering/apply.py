"""Adding pattern vectors to the residual stream while a batch generates.

Each row of a batch carries its own Steer (or None), so unsteered twins and rows steered toward
different patterns share one generate call. For every steered layer the plan holds two additions:
one for the prompt pass (batch, width, hidden), zero at pad positions and at positions the Steer
does not cover, and one for each later decoding step (batch, 1, hidden). The decoder block's
output gets the addition on every forward generate makes — the prompt pass and every new token.

Generation runs through nnsight (the route to steering on vLLM later); the tests hold it to a
plain forward-hook reference doing the same arithmetic (testing/steering_reference.py)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import Generation, GenerationSettings, LocalModel
from diarylab.model_access.vllm_engine import RowSteer, steer_key
from diarylab.steering.settings import Positions, Scale, SteerSettings
from diarylab.steering.vectors import PatternVector


@dataclass(frozen=True)
class Steer:
    """How one row is steered.

    scale "relative": the added vector is strength × residual_norm[layer] × unit direction, so
    1.0 adds a vector as long as a typical residual at that layer (transfers across models);
    "raw": strength × the raw mean difference.
    positions "prompt": the prompt's tokens (prompt pass only); "response": the positions whose
    outputs pick response tokens — the last prompt token and every generated token; "both": all.
    """

    vector: PatternVector
    layers: tuple[int, ...]
    strength: float
    scale: Scale = "relative"
    positions: Positions = "response"

    def __post_init__(self) -> None:
        if not self.layers:
            raise LabError("no layers to steer", where="steer", fix="name at least one layer")
        if len(set(self.layers)) != len(self.layers):
            raise LabError(f"layers repeat: {self.layers}", where="steer")
        if not math.isfinite(self.strength):
            raise LabError(f"strength {self.strength} is not finite", where="steer")
        for layer in self.layers:
            self.vector.check_layer(layer)

    @staticmethod
    def of(vector: PatternVector, settings: SteerSettings) -> Steer:
        """A vector steered as a design's or a profile's `steer` settings say."""
        return Steer(
            vector, tuple(settings.layers), settings.strength, settings.scale, settings.positions
        )

    def addition(self, layer: int) -> torch.Tensor:
        """The float32 vector added at one of this Steer's layers."""
        if self.scale == "relative":
            return self.strength * self.vector.residual_norms[layer] * self.vector.unit(layer)
        return self.strength * self.vector.raw(layer)

    def spec(self) -> dict[str, Any]:
        """What identifies this steering in cache keys and records."""
        return {
            "pattern": self.vector.pattern_id,
            "vector_sha256": self.vector.content_sha256(),
            "layers": list(self.layers),
            "strength": self.strength,
            "scale": self.scale,
            "positions": self.positions,
        }


@dataclass(frozen=True, eq=False)
class SteeringPlan:
    """Per-layer additions for one batch, ready to add to decoder-block outputs."""

    layers: tuple[int, ...]  # ascending: nnsight must touch modules in execution order
    prompt_pass: dict[int, torch.Tensor]  # layer -> (batch, width, hidden)
    decode_step: dict[int, torch.Tensor]  # layer -> (batch, 1, hidden)


def build_plan(
    model: LocalModel, attention_mask: torch.Tensor, steers: Sequence[Steer | None]
) -> SteeringPlan:
    batch, width = attention_mask.shape
    if len(steers) != batch:
        raise LabError(f"{len(steers)} steers for {batch} prompts", where="generate_steered")
    info = model.info()
    for steer in steers:
        if steer is not None:
            steer.vector.check_model(info)
    layers = tuple(sorted({layer for s in steers if s is not None for layer in s.layers}))
    hidden = model.hidden_size
    real = attention_mask.to(torch.float32).cpu()  # 1 at real tokens, 0 at left pads
    last = torch.zeros(batch, width)
    last[:, -1] = 1.0  # left padding puts every row's last real token in the last column
    prompt_pass, decode_step = {}, {}
    for layer in layers:
        rows = torch.zeros(batch, hidden)
        where = torch.zeros(batch, width)
        step = torch.zeros(batch, 1)
        for row, steer in enumerate(steers):
            if steer is None or layer not in steer.layers:
                continue
            rows[row] = steer.addition(layer).to(torch.float32)
            where[row] = last[row] if steer.positions == "response" else real[row]
            step[row] = 0.0 if steer.positions == "prompt" else 1.0
        # Multiplying by masks in float32 and casting once keeps both paths bit-identical.
        prompt_pass[layer] = _to_layer(model, layer, rows[:, None, :] * where[:, :, None])
        decode_step[layer] = _to_layer(model, layer, rows[:, None, :] * step[:, :, None])
    return SteeringPlan(layers, prompt_pass, decode_step)


def _to_layer(model: LocalModel, layer: int, t: torch.Tensor) -> torch.Tensor:
    # Each block's own device: with a device map the residual stream moves between GPUs at
    # block boundaries, so layer 0's addition and layer 20's may live on different devices.
    return t.to(device=model.layer_device(layer), dtype=model.dtype)


def add_to_output(output: Any, addition: torch.Tensor) -> Any:
    # transformers 5 decoder blocks return the hidden states as a tensor; older ones (and some
    # remote-code models) return a tuple whose first item is the hidden states. Indexing [0] of a
    # tensor would steer batch row 0 only, so check the type.
    if isinstance(output, tuple):
        return (output[0] + addition, *output[1:])
    return output + addition


def generate_steered(
    model: LocalModel,
    prompts: Sequence[Sequence[int]],
    settings: GenerationSettings,
    *,
    seeds: Sequence[int] | None = None,
    steers: Sequence[Steer | None],
) -> list[Generation]:
    """Generate for a batch with one Steer (or None = unsteered) per row, through nnsight.
    Sampling keeps the runtime's per-row seeds, so a row's text does not depend on its batch."""
    if len(steers) != len(prompts):
        raise LabError(f"{len(steers)} steers for {len(prompts)} prompts", where="generate_steered")
    if model.engine is not None:  # [diarist_model].engine = "vllm": the same additions, there
        rows = [_row_steer(model, s) for s in steers]
        return model.generate_on_engine(prompts, settings, seeds=seeds, steers=rows)
    if all(s is None for s in steers):
        return model.generate(prompts, settings, seeds=seeds)
    ids, mask = model.batch_inputs(prompts)
    plan = build_plan(model, mask, steers)
    kwargs = model.generation_kwargs(settings, seeds, len(prompts))
    output = _nnsight_generate(model, ids, mask, kwargs, plan)
    return model.finish(prompts, output)


def _row_steer(model: LocalModel, steer: Steer | None) -> RowSteer | None:
    """A row's steering as an engine applies it: build_plan's vectors, per layer, in float32."""
    if steer is None:
        return None
    steer.vector.check_model(model.info())
    additions = {layer: steer.addition(layer).to(torch.float32) for layer in steer.layers}
    return RowSteer(steer_key(steer.spec()), steer.positions, additions)


def _nnsight_generate(
    model: LocalModel,
    ids: torch.Tensor,
    mask: torch.Tensor,
    kwargs: dict[str, Any],
    plan: SteeringPlan,
) -> torch.Tensor:
    lm = model.nnsight_model()
    blocks = [lm.model.layers[layer] for layer in plan.layers]
    with warnings.catch_warnings():
        # An open tracer.all() loop always ends with a "step never reached" warning when
        # generation stops; that is the expected end of the loop, not a problem.
        warnings.filterwarnings("ignore", message=".*was never reached.*")
        with torch.no_grad():  # kept on its own line: nnsight must not see it in the trace
            with lm.generate(**kwargs) as tracer:
                with tracer.invoke({"input_ids": ids, "attention_mask": mask}):
                    first = True
                    for _ in tracer.all():
                        adds = plan.prompt_pass if first else plan.decode_step
                        for layer, block in zip(plan.layers, blocks, strict=True):
                            block.output = add_to_output(block.output, adds[layer])
                        first = False
                # Code after an open tracer.all() loop never runs: read the result here.
                with tracer.invoke():
                    result = tracer.result.save()
    return result


def write_steered(
    model: LocalModel,
    chats: Sequence[Sequence[dict[str, str]]],
    settings: GenerationSettings,
    *,
    seeds: Sequence[int],
    steers: Sequence[Steer | None],
) -> list[dict[str, Any]]:
    """generate_steered on chat messages, as the records the store keeps for a written text."""
    gens = generate_steered(
        model, [model.chat_ids(c) for c in chats], settings, seeds=seeds, steers=steers
    )
    return [
        {
            "text": g.text,
            "token_ids": list(g.token_ids),
            "new_tokens": g.new_tokens,
            "stopped_at_eos": g.stopped_at_eos,
        }
        for g in gens
    ]
