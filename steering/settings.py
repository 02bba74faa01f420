"""The settings objects of steering, as typed schemas: how a profile steers (SteerSettings), how a
vector is extracted (ExtractionSettings) and the calibration rule a preregistration fixes
instead of the numbers it will choose (CalibrationRule). Profile files and designs hold these
objects and steering reads them unchanged."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, field_validator

from foundation.datafiles import FIX_MARK, DataModel, Slug
from model_access.settings import GenerationSettings

Scale = Literal["relative", "raw"]
Positions = Literal["prompt", "response", "both"]
Layer = Annotated[int, Field(ge=0, le=1000)]
EXTRACTION_GENERATION = GenerationSettings(max_new_tokens=80, temperature=0.8, top_p=0.95)


def _unique_layers(layers: list[int]) -> list[int]:
    if len(set(layers)) != len(layers):
        raise ValueError(f"layers repeat: {list(layers)}{FIX_MARK}list each layer once")
    return layers


class SteerSettings(DataModel):
    """scale "relative": strength × the layer's mean residual norm × the unit direction (1.0 adds
    a vector as long as a typical residual, so it transfers across models); "raw": strength ×
    the raw mean difference. positions: which tokens get the addition."""

    layers: list[Layer] = Field(min_length=1, description="decoder blocks to steer")
    strength: float = Field(
        ge=-100,
        le=100,
        allow_inf_nan=False,
        description="multiple of the residual norm (relative) or raw vector",
    )
    scale: Scale = "relative"
    positions: Positions = "response"

    _layers = field_validator("layers")(_unique_layers)

    @field_validator("strength")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"strength {value} is not finite{FIX_MARK}write a number")
        return value


class ExtractionSettings(DataModel):
    """How a pattern vector is extracted from the pattern file's contrast set."""

    pairs: int = Field(20, ge=1, le=1000, description="contrast pairs to write")
    generation: GenerationSettings = EXTRACTION_GENERATION
    batch_size: int = Field(8, ge=1, le=4096)


class CalibrationRule(DataModel):
    """A sweep over layers × strengths on the pattern's held-out prompts, scored by one of the
    design's judges; the strongest setting whose mean coherence stays at or above `floor` wins."""

    judge: Slug = Field(description="id of one of the design's [[judges]]")
    layers: list[Layer] = Field(min_length=1)
    strengths: list[Annotated[float, Field(ge=-100, le=100, allow_inf_nan=False)]] = Field(
        min_length=1
    )
    floor: float = Field(60.0, ge=0, le=100, description="minimum mean coherence (0–100)")
    prompts: int | None = Field(None, ge=1, description="held-out prompts to use (default all)")
    scale: Scale = "relative"
    positions: Positions = "response"
    generation: GenerationSettings = EXTRACTION_GENERATION
    batch_size: int = Field(8, ge=1, le=4096)

    _layers = field_validator("layers")(_unique_layers)

    @field_validator("strengths")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"strengths must be finite numbers{FIX_MARK}remove nan/inf")
        return values
