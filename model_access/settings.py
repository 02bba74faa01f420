"""The settings objects of the two doors. A design holds these very objects, and the runtime and
the served client read them unchanged: no copies, no renaming on the way.

- GenerationSettings: what determines a generation's text (it enters cache keys).
- LocalSettings: how a local model is loaded and batched (not in cache keys, except that dtype
  and revision change the model's numbers and so are part of the model's identity).
- EndpointSettings: how a served model is reached (never in cache keys)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from foundation.datafiles import FIX_MARK, DataModel

Dtype = Literal["bf16", "fp16", "fp32"]
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

    def key(self) -> dict[str, Any]:
        return self.model_dump()


class LocalSettings(DataModel):
    batch_size: int = Field(8, ge=1, le=4096, description="rows generated in one batch")
    dtype: Dtype | None = Field(None, description="default: bf16 on GPU, fp32 on CPU")
    device: str | None = Field(None, description='e.g. "cuda:0" or "cpu"; default: cuda if any')
    revision: str | None = Field(None, description="hub revision (branch, tag or commit)")
    trust_remote_code: bool = Field(False, description="run the model repository's own code")


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
