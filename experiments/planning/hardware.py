"""The table the plan's GPU-hours come from (experiments/planning/hardware.toml): GPU kinds
with their published peaks, model sizes, and the utilisation assumed of each peak; and the
rates (tokens per second on one GPU) an estimate derives from them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import Field

from diarylab.foundation.datafiles import DataModel, HashedDataFile, NonEmpty

HARDWARE_FILE = Path(__file__).with_name("hardware.toml")
KV_BYTES = 2  # one element of a BF16 KV cache


class Assumptions(DataModel):
    prefill_utilisation: float = Field(gt=0, le=1)
    decode_utilisation: float = Field(gt=0, le=1)
    memory_share: float = Field(gt=0, le=1)
    source: NonEmpty


class Gpu(DataModel):
    name: NonEmpty
    memory_gb: float = Field(gt=0)
    bf16_tflops: float = Field(gt=0)
    bandwidth_tb_s: float = Field(gt=0)
    source: NonEmpty
    dated: NonEmpty


class ModelSize(DataModel):
    name: NonEmpty
    params_b: float = Field(gt=0)
    active_params_b: float = Field(gt=0)
    weights_gb: float = Field(gt=0)
    layers: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    vllm_flags: tuple[str, ...] = Field((), strict=False)
    reasoning_parser: str | None = None
    download: tuple[str, ...] = Field((), strict=False)
    gated: bool = False
    source: NonEmpty
    dated: NonEmpty

    def kv_bytes_per_token(self) -> float:
        return 2 * self.layers * self.kv_heads * self.head_dim * KV_BYTES


class Hardware(HashedDataFile):
    file_table = "hardware"

    version: int
    assumptions: Assumptions
    gpus: tuple[Gpu, ...] = Field(strict=False)
    models: tuple[ModelSize, ...] = Field(strict=False)

    def gpu(self, name: str) -> Gpu | None:
        return next((g for g in self.gpus if g.name == name), None)

    def model(self, name: str) -> ModelSize | None:
        """A model by its hub id, with or without litellm's provider prefix."""
        names = {name, name.split("/", 1)[-1]}
        return next((m for m in self.models if m.name in names), None)

    def prefill_rate(self, gpu: Gpu, model: ModelSize) -> float:
        """Prompt tokens a second on one GPU: 2 FLOPs a parameter a token at the assumed share
        of the dense peak (an estimate)."""
        flops = gpu.bf16_tflops * 1e12 * self.assumptions.prefill_utilisation
        return flops / (2 * model.active_params_b * 1e9)

    def decode_rate(self, gpu: Gpu, model: ModelSize, batch: int, context: float) -> float:
        """Generated tokens a second on one GPU, `batch` sequences decoding together with
        `context` tokens each in view: every step reads the weights once and each sequence's
        KV cache, at the assumed share of the bandwidth (an estimate)."""
        step_bytes = model.weights_gb * 1e9 + batch * context * model.kv_bytes_per_token()
        bandwidth = gpu.bandwidth_tb_s * 1e12 * self.assumptions.decode_utilisation
        return batch * bandwidth / step_bytes


@cache
def load_hardware(path: Path = HARDWARE_FILE) -> Hardware:
    return Hardware.from_file(path)
