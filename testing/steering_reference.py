"""The test oracle for steered generation: plain forward hooks on the decoder blocks adding the
same steering plan (steering.apply.build_plan) that the nnsight path adds, then transformers'
own generate. The lab generates through nnsight only; this path exists so the tests can hold
it to an independent way of doing the same additions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from diarylab.model_access.local import Generation, GenerationSettings, LocalModel
from diarylab.steering.apply import Steer, SteeringPlan, add_to_output, build_plan


@contextmanager
def hooked(model: LocalModel, plan: SteeringPlan) -> Iterator[None]:
    """Plain forward hooks adding the plan's vectors, removed whatever happens inside."""
    calls = dict.fromkeys(plan.layers, 0)

    def hook_for(layer: int) -> Any:
        def hook(module: torch.nn.Module, args: Any, output: Any) -> Any:
            # The first forward is the prompt pass; every later one is one decoding step.
            adds = plan.prompt_pass if calls[layer] == 0 else plan.decode_step
            calls[layer] += 1
            return add_to_output(output, adds[layer])

        return hook

    handles = []
    try:
        for layer in plan.layers:
            handles.append(model.layers[layer].register_forward_hook(hook_for(layer)))
        yield
    finally:
        for handle in handles:
            handle.remove()


def generate_steered_hooks(
    model: LocalModel,
    prompts: Sequence[Sequence[int]],
    settings: GenerationSettings,
    *,
    seeds: Sequence[int] | None = None,
    steers: Sequence[Steer | None],
) -> list[Generation]:
    """What steering.apply.generate_steered returns, with forward hooks instead of nnsight."""
    ids, mask = model.batch_inputs(prompts)
    plan = build_plan(model, mask, steers)
    kwargs = model.generation_kwargs(settings, seeds, len(prompts))
    with hooked(model, plan), torch.no_grad():
        output = model.model.generate(input_ids=ids, attention_mask=mask, **kwargs)
    return model.finish(prompts, output)
