"""A judge-free reading of a pattern: how far a text's own activations lie along the pattern's
direction when the unsteered model reads it back.

The text is placed after a context (the chat that asked for it) and run through the model once,
unsteered; at each of the vector's layers the decoder block's output is averaged over the text's
tokens only and projected on the pattern's unit direction, in units of that layer's typical
residual norm (so layers and models compare). The value is the mean over the layers. Each text
runs alone (batch of one, no padding), so its value does not depend on what else is read with
it and a resumed run stores exactly what an unbroken one would."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.steering.vectors import PatternVector

METHOD = "mean over text tokens · unit direction / residual norm, mean over layers; batch of one"


@dataclass(frozen=True)
class Projection:
    value: float
    per_layer: dict[int, float]
    tokens: int

    def record(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "per_layer": {str(k): v for k, v in self.per_layer.items()},
            "tokens": self.tokens,
        }


def project(
    model: LocalModel,
    context_ids: Sequence[int],
    text_ids: Sequence[int],
    vector: PatternVector,
    layers: Sequence[int],
) -> Projection:
    if not text_ids:
        raise LabError("nothing to project: the text has no tokens", where="projection")
    if not layers:
        raise LabError("no layers to project at", where="projection")
    vector.check_model(model.info())
    for layer in layers:
        vector.check_layer(layer, where="projection layer")
    ids = torch.tensor([[*context_ids, *text_ids]], device=model.device)
    start = len(context_ids)
    means: dict[int, torch.Tensor] = {}

    def hook_for(layer: int) -> Any:
        def hook(module: torch.nn.Module, args: Any, output: Any) -> None:
            hidden = output[0] if isinstance(output, tuple) else output
            means[layer] = hidden[0, start:].double().mean(dim=0).cpu()

        return hook

    body = getattr(model.model, "model", model.model)  # the decoder stack, without lm_head
    handles = [model.layers[layer].register_forward_hook(hook_for(layer)) for layer in layers]
    try:
        with torch.no_grad():
            body(input_ids=ids, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    per_layer = {
        layer: float(
            means[layer] @ vector.unit(layer).double() / float(vector.residual_norms[layer])
        )
        for layer in layers
    }
    value = sum(per_layer.values()) / len(per_layer)
    return Projection(value, per_layer, len(text_ids))
