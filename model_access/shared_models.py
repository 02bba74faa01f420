"""The one door to the local models a run shares: each model loaded once per load settings, a
vLLM engine attached once per model and engine settings, and each known by a reference
(ModelRef) that travels to a Ray actor, where the actor's own LocalModels opens it the same way.
close() stops the vLLM workers started here. The runner, the Ray actors and, through `get` and
`on_vllm`, the chatbots and judges of a run all load through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from diarylab.model_access.settings import LocalSettings, VllmSettings

if TYPE_CHECKING:
    from diarylab.model_access.local import LocalModel


@dataclass(frozen=True)
class ModelRef:
    """How another process loads its own copy of one of the run's local models: the very
    settings the design gave the run (a device_map or dtype reaches the actor's load
    unchanged)."""

    spec: str
    local: LocalSettings
    vllm: VllmSettings | None = None
    where: str = ""


class LocalModels:
    """One loaded copy per local model and load settings: the diarist model doubles as chatbot
    or judge when they name the same model (batch sizes stay each caller's own)."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, str], LocalModel] = {}
        self._engines: dict[tuple[str, str], LocalModel] = {}
        self._refs: dict[int, ModelRef] = {}

    def get(self, spec: str, settings: LocalSettings) -> LocalModel:
        from diarylab.model_access.local import LocalModel  # torch: only once a model loads

        key = (spec, _how(settings))
        if key not in self._models:
            self._models[key] = LocalModel.load(spec, settings)
            self._refs[id(self._models[key])] = ModelRef(spec, settings)
        return self._models[key]

    def on_vllm(
        self, spec: str, settings: LocalSettings, vllm: VllmSettings, where: str
    ) -> LocalModel:
        """The loaded model with a vLLM engine attached, one per model, load settings and
        engine settings: a diarist and a chatbot of the same model share the worker."""
        from diarylab.model_access.vllm_twin import attach_vllm

        key = (spec, _how(settings) + vllm.model_dump_json())
        if key not in self._engines:
            self._engines[key] = attach_vllm(self.get(spec, settings), vllm, where=where)
            self._refs[id(self._engines[key])] = ModelRef(spec, settings, vllm, where)
        return self._engines[key]

    def opened(self, ref: ModelRef) -> LocalModel:
        """The model a reference names, loaded here (a Ray actor's copy)."""
        if ref.vllm is not None:
            return self.on_vllm(ref.spec, ref.local, ref.vllm, ref.where)
        return self.get(ref.spec, ref.local)

    def refs(self) -> dict[int, ModelRef]:
        """id(model) → how to load it elsewhere, for every model loaded here so far."""
        return dict(self._refs)

    def close(self) -> None:
        """Stop the vLLM workers started here (their GPU memory is not the next run's)."""
        for model in self._engines.values():
            if model.engine is not None:
                model.engine.close()


def _how(settings: LocalSettings) -> str:
    return repr(sorted(settings.model_dump(exclude={"batch_size"}).items()))
