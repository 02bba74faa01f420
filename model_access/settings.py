"""The settings objects of the two doors. A design holds these very objects, and the runtime and
the served client read them unchanged: no copies, no renaming on the way.

- GenerationSettings: what determines a generation's text (it enters cache keys).
- LocalSettings: how a local model is loaded, placed and batched (not in cache keys, except
  that dtype and revision change the model's numbers and so are part of the model's identity;
  device, device_map, max_memory and offload_folder only say where the same numbers are made).
- EndpointSettings: how a served model is reached (never in cache keys)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from diarylab.foundation.datafiles import FIX_MARK, At, DataModel
from diarylab.model_access.devices import Device, device_name, size_bytes

Dtype = Literal["bf16", "fp16", "fp32"]
# A sentence's end: its mark, any closing quotes or brackets, then a space or the text's end.
SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s|$)")
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# How provider keys begin (OpenAI, Anthropic, OpenRouter, Hugging Face, Google, xAI, Groq...).
KEY_PREFIXES = ("sk-", "sk_", "hf_", "AIza", "xai-", "gsk_", "pk-", "key-")


def looks_like_a_key(value: str) -> bool:
    """A value that is a secret, not the name of a variable holding one: not a variable name,
    a provider's key prefix, or a long run of mixed letters and digits."""
    if not VARIABLE_NAME.match(value) or value.startswith(KEY_PREFIXES):
        return True
    mixed = any(c.islower() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 32 and mixed


class GenerationSettings(DataModel):
    max_new_tokens: int = Field(200, ge=1, le=32768, description="tokens to generate at most")
    temperature: float = Field(0.0, ge=0, le=5, description="0 = greedy decoding")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    end_at_sentence: bool = Field(
        False,
        description="a text the token cap cut is used up to its last full sentence, so that no "
        "reader meets a sentence broken off: entries, letters and chatbot replies (its flag "
        "still says truncated; the store's call records keep every word written)",
    )

    def key(self) -> dict[str, Any]:
        # Left out when unset, so that the keys of calls made before the field existed hold.
        return self.model_dump(exclude=None if self.end_at_sentence else {"end_at_sentence"})

    def ended(self, text: str, cut: bool) -> str:
        """The text as the study uses it: where the cap cut it and end_at_sentence is set, up
        to its last full sentence; all of it where no sentence ended."""
        if not (cut and self.end_at_sentence):
            return text
        ends = list(SENTENCE_END.finditer(text))
        return text[: ends[-1].end()].rstrip() if ends else text


def used_whole(generation: GenerationSettings | None) -> GenerationSettings | None:
    """A field validator for generations whose texts are used whole (a vector's contrast
    texts, a calibration's samples, a grader's answer): end_at_sentence there is refused."""
    if generation is not None and generation.end_at_sentence:
        raise ValueError(
            "end_at_sentence acts on the texts a reader meets (entries, letters, chatbot "
            f"replies); these are used whole{FIX_MARK}remove end_at_sentence from this table"
        )
    return generation


class LocalSettings(DataModel):
    batch_size: int = Field(8, ge=1, le=4096, description="rows generated in one batch")
    dtype: Dtype | None = Field(None, description="default: bf16 on GPU, fp32 on CPU")
    device: str | None = Field(None, description='e.g. "cuda:0" or "cpu"; default: cuda if any')
    revision: str | None = Field(None, description="hub revision (branch, tag or commit)")
    trust_remote_code: bool = Field(False, description="run the model repository's own code")
    device_map: Literal["auto"] | dict[str, int | str] | None = Field(
        None,
        description='spread a model larger than one GPU over devices (accelerate): "auto" fills '
        "the GPUs in order, then the CPU, then disk; or a map from module name "
        '("model.embed_tokens", "model.layers.0", "lm_head"; "" = the whole model) to a GPU '
        '(0 or "cuda:0"), "cpu" or "disk". Placement only: the same texts, the same cache keys',
    )
    max_memory: dict[str, int | str] | None = Field(
        None,
        description='with device_map = "auto": the most each device may hold, e.g. '
        '{ "0" = "70GiB", "1" = "70GiB", cpu = "200GiB" } (bytes, or a number with B, KB, MB, '
        "GB, TB, KiB, MiB, GiB, TiB); what does not fit goes to the next device, then to disk",
    )
    offload_folder: str | None = Field(
        None,
        description='where weights placed on "disk" are written when the checkpoint is not '
        "safetensors (.bin, .gguf); safetensors weights are read in place and need none",
    )

    @field_validator("device_map")
    @classmethod
    def _map_devices(
        cls, value: Literal["auto"] | dict[str, int | str] | None
    ) -> Literal["auto"] | dict[str, int | str] | None:
        if isinstance(value, dict):
            if not value:
                raise ValueError(
                    f"the device map is empty{FIX_MARK}map module names to devices, or write "
                    'device_map = "auto"'
                )
            if "" in value and len(value) > 1:
                raise ValueError(
                    '"" places the whole model, so no other module can be mapped beside it'
                    f'{FIX_MARK}map the whole model ("" = 0) or its modules, not both'
                )
            for module, device in value.items():
                try:
                    device_name(device)
                except ValueError as exc:
                    raise At((module,), f"module {module!r}: {exc}") from None
        return value

    @field_validator("max_memory")
    @classmethod
    def _memory_sizes(cls, value: dict[str, int | str] | None) -> dict[str, int | str] | None:
        for device, size in (value or {}).items():
            try:
                device_name(device)
                size_bytes(size)
            except ValueError as exc:
                raise At((device,), str(exc)) from None
        return value

    @model_validator(mode="after")
    def _placement_settings_agree(self) -> LocalSettings:
        if self.device_map is not None and self.device is not None:
            raise At(
                ("device",),
                "device and device_map both place the model"
                f"{FIX_MARK}give device for a model on one device, or device_map, not both",
            )
        if self.max_memory is not None and self.device_map != "auto":
            raise At(
                ("max_memory",),
                'max_memory sizes the map that device_map = "auto" makes'
                f'{FIX_MARK}add device_map = "auto", or drop max_memory (an explicit map '
                "places every module itself)",
            )
        if self.offload_folder is not None and self.device_map is None:
            raise At(
                ("offload_folder",),
                "offload_folder holds weights a device map puts on disk, and there is no map"
                f'{FIX_MARK}add device_map (with "disk" in it, or "auto"), or drop offload_folder',
            )
        return self

    def placement_map(self) -> Literal["auto"] | dict[str, Device] | None:
        """device_map with every device in accelerate's form (GPU "cuda:1" is 1)."""
        if isinstance(self.device_map, dict):
            return {module: device_name(d) for module, d in self.device_map.items()}
        return self.device_map

    def memory_limits(self) -> dict[Device, int] | None:
        """max_memory in accelerate's form: canonical device names, sizes in bytes."""
        if self.max_memory is None:
            return None
        return {device_name(d): size_bytes(s) for d, s in self.max_memory.items()}


class EndpointSettings(DataModel):
    base_url: str | list[str] | None = Field(
        None,
        description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1, or a list of "
        "replicas serving the same model: requests are spread over them, and a failed try is "
        "made again on the next one",
    )
    api_key_env: str | None = Field(
        None, description="the NAME of the environment variable holding the key, never the key"
    )
    timeout_s: float = Field(120.0, gt=0, le=3600, description="seconds before one try gives up")
    max_retries: int = Field(4, ge=0, le=20, description="tries after the first")
    backoff_s: float = Field(1.0, ge=0, le=600, description="first retry delay, doubled per try")
    concurrency: int = Field(4, ge=1, le=1024, description="requests in flight at once")
    retry_budget_s: float = Field(
        600.0,
        gt=0,
        le=86400,
        description="seconds one call may spend across all its tries and waits between them; "
        "a retry whose wait (backoff or the server's Retry-After) would pass it is not made",
    )
    prompts_per_request: int = Field(
        16,
        ge=1,
        le=4096,
        description="token prompts sent in one /v1/completions request (a list, answered one "
        "choice per prompt); 1 for a server that takes one prompt at a time (llama.cpp)",
    )

    @field_validator("api_key_env")
    @classmethod
    def _a_name_not_a_key(cls, value: str | None) -> str | None:
        # The value is never repeated in the message: it may be the key itself.
        if value is not None and looks_like_a_key(value):
            raise ValueError(
                "api_key_env names an environment variable, not the key itself (this value "
                f"is not a variable name, or looks like a key; it is not repeated here)"
                f'{FIX_MARK}write the variable\'s name, e.g. api_key_env = "OPENAI_API_KEY", and '
                "export the key in that variable; if a key was written into this file, remove "
                "it and revoke it"
            )
        return value

    @field_validator("base_url")
    @classmethod
    def _urls_given(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and (not value or not all(u.strip() for u in value)):
            raise ValueError("a list of base URLs needs at least one, none empty")
        for url in [value] if isinstance(value, str) else value or []:
            if not url.startswith(("http://", "https://")):
                raise ValueError(
                    f"base_url {url!r} has no scheme{FIX_MARK}write it whole, e.g. base_url = "
                    f'"http://{url.strip("/") or "127.0.0.1:8000"}/v1"'
                )
        return value

    @property
    def urls(self) -> tuple[str, ...]:
        """The replicas' base URLs ((), the provider's default)."""
        if self.base_url is None:
            return ()
        return (self.base_url,) if isinstance(self.base_url, str) else tuple(self.base_url)

    @property
    def where(self) -> str:
        return ", ".join(self.urls) or "provider default"


class VllmSettings(DataModel):
    """The vLLM diarist engine's settings ([diarist_model].vllm): how the worker is sized. None
    of them changes the numbers, so none enters a cache key (the dtype does, from `local`)."""

    max_model_len: int = Field(
        4096, ge=64, le=1_048_576, description="prompt + generated tokens per row at most"
    )
    max_num_seqs: int = Field(8, ge=1, le=4096, description="rows vLLM runs at once")
    gpu_memory_utilization: float = Field(
        0.5, gt=0, le=1, description="GPU: share of the GPU's memory vLLM may take"
    )
    block_size: int | None = Field(
        None, ge=1, le=1024, description="KV-cache block size (default: vLLM's; CPU: 32 is good)"
    )
