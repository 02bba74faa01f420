"""The local open-model runtime: one object that holds a model and its tokenizer and does the
three things the lab asks of a local model — render a chat, generate for a batch, and read
next-token probabilities with the prompt's KV cache computed once (model_access/next_token.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.chat_tokens import ChatTokens, Message
from diarylab.model_access.generation_steps import Generation, GenerationSteps
from diarylab.model_access.loading import (
    ModelSource,
    load_pretrained,
    pick_device,
    pick_dtype,
    resolve,
)
from diarylab.model_access.next_token import NextTokenReader
from diarylab.model_access.placement import (
    check_loaded,
    check_placement,
    execution_device,
    main_device,
    placement_record,
    pretrained_kwargs,
)
from diarylab.model_access.settings import GenerationSettings, LocalSettings
from diarylab.model_access.vllm_engine import RowSteer, VllmEngine


@dataclass(frozen=True)
class ModelInfo:
    """What identifies a model's behaviour; goes into cache keys and run manifests. Where the
    model sits (device, device map, memory limits, offload) is deliberately not here: a
    placement moves the same weights' arithmetic between devices, so it writes the same text,
    and a run resumed on other hardware (one GPU → two) must find its stored texts. The
    manifest records the placement beside this identity (LocalModel.placement)."""

    spec: str
    location: str
    revision: str | None
    num_layers: int
    hidden_size: int
    vocab_size: int
    dtype: str
    tokenizer_sha256: str
    chat_template_sha256: str | None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LocalModel(ChatTokens, NextTokenReader, GenerationSteps):
    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        spec: str,
        source: ModelSource | None = None,
        settings: LocalSettings | None = None,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.spec = spec
        self.source = source
        # How it was loaded: the manifest's placement record reads the asked-for map from it.
        self.settings = settings or LocalSettings()
        self._devices: dict[str, torch.device] = {}
        if tokenizer.pad_token_id is None:
            # Pad with a token that is never the model's own EOS where possible; pad positions
            # are masked, so the choice only matters for models that misbehave on pad == EOS.
            tokenizer.pad_token = tokenizer.unk_token or tokenizer.eos_token
        tokenizer.padding_side = "left"
        self._neutralise_generation_config()
        self._info: ModelInfo | None = None
        self._nnsight: Any = None
        # Set on a diarist whose design asks for engine = "vllm" (model_access.vllm_engine):
        # generation then runs there; everything else (templates, info, extraction) stays here.
        self.engine: VllmEngine | None = None

    @classmethod
    def load(cls, spec: str, settings: LocalSettings | None = None) -> LocalModel:
        """Load by embedded name, folder or hub id; `settings` says where and how (batch_size
        is read by the callers that batch, each from its own settings)."""
        settings = settings or LocalSettings()
        source = resolve(spec)
        check_placement(source, settings)
        dev = main_device(settings) if settings.device_map else pick_device(settings.device)
        model, tokenizer = load_pretrained(
            source,
            device=dev,
            dtype=pick_dtype(dev, settings.dtype),
            revision=settings.revision,
            trust_remote_code=settings.trust_remote_code,
            placement=pretrained_kwargs(settings),
        )
        check_loaded(model)
        return cls(model, tokenizer, spec=spec, source=source, settings=settings)

    def _neutralise_generation_config(self) -> None:
        """transformers fills every generation setting a call leaves unset from the model's own
        generation_config (transformers/generation/utils.py, _prepare_generation_config): a
        repetition_penalty or no_repeat_ngram_size shipped with a model would silently act
        inside the lab's generate, in no cache key. Keep only the special-token ids; the lab's
        GenerationSettings say everything else."""
        from transformers import GenerationConfig

        shipped = getattr(self.model, "generation_config", None)
        self.shipped_generation_config = shipped.to_dict() if shipped is not None else {}
        tokens = {
            k: getattr(shipped, k, None) for k in ("bos_token_id", "eos_token_id", "pad_token_id")
        }
        self._bare_config = GenerationConfig(**{k: v for k, v in tokens.items() if v is not None})
        self.model.generation_config = self._bare_config

    def _check_bare_config(self) -> None:
        """Something that swapped the model's generation_config after loading (a wrapper, a
        caller) would bring its settings back into play: neutralise again before generating."""
        if getattr(self.model, "generation_config", None) is not self._bare_config:
            self._neutralise_generation_config()

    # ----------------------------------------------------------------- description
    @property
    def device(self) -> torch.device:
        """Where inputs go: the device the input embeddings run on (asked of accelerate's
        hooks: with a device map, an offloaded module's parameters sit on "meta")."""
        return self.module_device(self._embeddings_path())

    def layer_device(self, layer: int) -> torch.device:
        """Where decoder block `layer` runs, so its residual stream is there: with a device map
        layer 0 and layer 1 may sit on different GPUs."""
        return self.module_device(f"{self._layers_path()}.{layer}")

    def module_device(self, path: str) -> torch.device:
        # Placement does not change after loading, and nnsight's steps would ask per token.
        if path not in self._devices:
            self._devices[path] = execution_device(self.model, path)
        return self._devices[path]

    def _embeddings_path(self) -> str:
        embeddings = self.model.get_input_embeddings()
        return next(n for n, m in self.model.named_modules() if m is embeddings)

    def _layers_path(self) -> str:
        layers = self.layers
        return next(n for n, m in self.model.named_modules() if m is layers)

    def placement(self) -> dict[str, Any]:
        """Where this model's modules are (model_access.placement.placement_record): for the
        manifest, never for cache keys — the same weights write the same text anywhere."""
        return placement_record(self.model, self.settings)

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    @property
    def layers(self) -> torch.nn.ModuleList:
        """The decoder blocks, whose outputs are the residual stream."""
        inner = getattr(self.model, "model", None)
        layers = getattr(inner, "layers", None)
        if layers is None:
            raise LabError(
                f"model {self.spec!r} has no model.layers; the lab supports decoder-only models "
                "laid out like Llama, Mistral, Qwen, Gemma and gpt-oss",
                where="model",
            )
        return layers

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def eos_token_ids(self) -> list[int]:
        ids: set[int] = set()
        for source in (self.model.generation_config, self.model.config, self.tokenizer):
            value = getattr(source, "eos_token_id", None)
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, list | tuple):
                ids.update(int(v) for v in value)
        return sorted(ids)

    def info(self) -> ModelInfo:
        if self._info is None:
            vocab = json.dumps(sorted(self.tokenizer.get_vocab().items()))
            template = getattr(self.tokenizer, "chat_template", None)
            self._info = ModelInfo(
                spec=self.spec,
                location=self.source.location if self.source else self.spec,
                revision=getattr(self.model.config, "_commit_hash", None),
                num_layers=self.num_layers,
                hidden_size=self.hidden_size,
                vocab_size=len(self.tokenizer),
                dtype=str(self.dtype).removeprefix("torch."),
                tokenizer_sha256=_sha256(vocab),
                chat_template_sha256=_sha256(template) if isinstance(template, str) else None,
            )
        return self._info

    def nnsight_model(self) -> Any:
        """The model wrapped by nnsight, for steered generation (steering.apply). Made once per
        LocalModel: wrapping builds a pipeline and patches module forwards, so it is kept."""
        if self._nnsight is None:
            import nnsight

            # transformers' pipeline (which nnsight builds) takes the first value of a device
            # map as its device: the map's order is the user's, and its first module may be
            # on "disk" (no torch device) or not the one inputs go to. Show it the inputs'
            # device while it is built; accelerate's hooks, not this map, place the modules.
            made = getattr(self.model, "hf_device_map", None)
            if made:
                self.model.hf_device_map = {"": str(self.device), **made}
            try:
                self._nnsight = nnsight.TransformersModel(
                    self.model, tokenizer=self.tokenizer, task="text-generation"
                )
            finally:
                if made:
                    self.model.hf_device_map = made
        return self._nnsight

    def generate_on_engine(
        self,
        prompts: Sequence[Sequence[int]],
        settings: GenerationSettings,
        *,
        seeds: Sequence[int] | None,
        steers: Sequence[RowSteer | None],
    ) -> list[Generation]:
        """Generate on the attached engine (a row's steer, or None, per prompt)."""
        if self.engine is None:
            raise LabError(f"model {self.spec!r} has no generation engine attached", where="model")
        if not prompts or any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        outputs = self.engine.generate(prompts, settings, seeds, steers)
        return [
            self._generation(p, list(o.token_ids)) for p, o in zip(prompts, outputs, strict=True)
        ]

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        settings: GenerationSettings,
        *,
        seeds: Sequence[int] | None = None,
    ) -> list[Generation]:
        """Generate for a batch of token-id prompts at once (left padding). With temperature > 0
        each row samples from its own seed, so its text does not depend on its batch."""
        if self.engine is not None:
            return self.generate_on_engine(
                prompts, settings, seeds=seeds, steers=[None] * len(prompts)
            )
        ids, mask = self.batch_inputs(prompts)
        kwargs = self.generation_kwargs(settings, seeds, len(prompts))
        with torch.no_grad():
            output = self.model.generate(input_ids=ids, attention_mask=mask, **kwargs)
        return self.finish(prompts, output)

    def generate_chats(
        self,
        conversations: Sequence[Sequence[Message]],
        settings: GenerationSettings,
        *,
        seeds: Sequence[int] | None = None,
    ) -> list[Generation]:
        return self.generate([self.chat_ids(c) for c in conversations], settings, seeds=seeds)
