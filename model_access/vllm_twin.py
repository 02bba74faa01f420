"""A local model whose generation runs on the vLLM engine: the one place that joins the local
runtime (model_access/local.py) and the vLLM worker's client (model_access/vllm_engine.py),
so neither of those imports the other's other half."""

from __future__ import annotations

import copy

from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import VllmSettings
from diarylab.model_access.vllm_engine import VllmEngine


def attach_vllm(
    model: LocalModel, settings: VllmSettings, *, where: str = "[diarist_model].engine"
) -> LocalModel:
    """A copy of `model` (sharing its weights, tokenizer and identity) whose generation runs on
    a vLLM worker serving the same weights in the same dtype. The original stays a plain
    transformers model, so a local chatbot or judge of the same model is unaffected."""
    twin = copy.copy(model)
    location = model.source.location if model.source is not None else model.spec
    twin.engine = VllmEngine(
        location=location,
        dtype=model.dtype,
        settings=settings,
        stop_token_ids=tuple(model.eos_token_ids),
        where=where,
    )
    twin.engine.check()
    return twin
