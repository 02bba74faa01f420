"""The settings objects of steering, as typed schemas: how a profile steers (SteerSettings), how a
vector is extracted (ExtractionSettings) and the calibration rule a preregistration fixes
instead of the numbers it will choose (CalibrationRule). Profile files and designs hold these
objects and steering reads them unchanged."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, Slug
from diarylab.model_access.settings import GenerationSettings, used_whole

Scale = Literal["relative", "raw"]
Positions = Literal["prompt", "response", "both"]
Layer = Annotated[int, Field(ge=0, le=1000)]
EXTRACTION_GENERATION = GenerationSettings(max_new_tokens=80, temperature=0.8, top_p=0.95)
# The largest relative strength a design may ask for. At 1.0 the addition is as long as a
# typical residual; at 2.0 it is twice as long and turns the residual more than 60 degrees off
# its own direction, past where any model tried here still writes text (the shipped
# calibrations sweep 0.05–0.3; smollm2 degrades from about 0.5). A larger number is a unit
# mistake (a raw-scale number written with the relative scale), refused before a GPU is used.
RELATIVE_LIMIT = 2.0


def _sane(strength: float, scale: str, field: tuple[int | str, ...]) -> None:
    if scale == "relative" and abs(strength) > RELATIVE_LIMIT:
        raise At(
            field,
            f"relative strength {strength:g} is beyond ±{RELATIVE_LIMIT:g} (1.0 adds a vector as "
            f"long as the residual itself){FIX_MARK}use a strength between "
            f"-{RELATIVE_LIMIT:g} and {RELATIVE_LIMIT:g} (the shipped calibrations sweep "
            '0.05–0.3), or set scale = "raw" for a multiple of the raw mean difference',
        )


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
    scale: Scale = Field(
        "relative",
        description='"relative" (default): strength × the layer\'s mean residual norm, |strength| '
        '≤ 2; "raw": × the raw mean difference',
    )
    positions: Positions = Field(
        "response",
        description='"response" (default): the generated tokens; "prompt": the prompt\'s; "both"',
    )

    _layers = field_validator("layers")(_unique_layers)

    @field_validator("strength")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"strength {value} is not finite{FIX_MARK}write a number")
        return value

    @model_validator(mode="after")
    def _sane_strength(self) -> SteerSettings:
        _sane(self.strength, self.scale, ("strength",))
        return self


class ExtractionSettings(DataModel):
    """How a pattern vector is extracted from the pattern file's contrast set."""

    pairs: int = Field(20, ge=1, le=1000, description="contrast pairs to write")
    generation: GenerationSettings = Field(
        EXTRACTION_GENERATION,
        description="how the contrast texts are generated (default: 80 new tokens, temperature "
        "0.8, top_p 0.95)",
    )
    batch_size: int = Field(8, ge=1, le=4096, description="rows generated in one batch")

    _whole = field_validator("generation")(used_whole)


class CalibrationRule(DataModel):
    """A sweep over layers × strengths on the pattern's held-out prompts, scored by one of the
    design's judges; the strongest setting whose mean coherence stays at or above `floor` wins."""

    judge: Slug = Field(description="id of one of the design's [[judges]]")
    layers: list[Layer] = Field(
        min_length=1,
        description="decoder blocks swept (each one alone), 0 to the model's layers − 1",
    )
    strengths: list[Annotated[float, Field(ge=-100, le=100, allow_inf_nan=False)]] = Field(
        min_length=1, description="strengths swept at each layer (relative scale: within ±2)"
    )
    floor: float = Field(60.0, ge=0, le=100, description="minimum mean coherence (0–100)")
    prompts: int | None = Field(None, ge=1, description="held-out prompts to use (default all)")
    scale: Scale = Field(
        "relative",
        description='"relative" (default): strength × the layer\'s mean residual norm; "raw": × '
        "the raw mean difference",
    )
    positions: Positions = Field(
        "response",
        description='"response" (default): the generated tokens; "prompt": the prompt\'s; "both"',
    )
    generation: GenerationSettings = Field(
        EXTRACTION_GENERATION,
        description="how the sweep's samples are generated (default: 80 new tokens, temperature "
        "0.8, top_p 0.95)",
    )
    batch_size: int = Field(8, ge=1, le=4096, description="rows generated in one batch")

    _layers = field_validator("layers")(_unique_layers)
    _whole = field_validator("generation")(used_whole)

    @field_validator("strengths")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"strengths must be finite numbers{FIX_MARK}remove nan/inf")
        return values

    @model_validator(mode="after")
    def _sane_strengths(self) -> CalibrationRule:
        for i, strength in enumerate(self.strengths):
            if strength < 0:
                raise At(
                    ("strengths", i),
                    f"strength {strength:g} steers away from the pattern, and a sweep chooses "
                    f"the strongest push toward it{FIX_MARK}sweep strengths of 0 or more, e.g. "
                    "strengths = [0.05, 0.1, 0.2] (to steer away, give a fixed steer = { layers, "
                    "strength } with a negative strength instead)",
                )
            _sane(strength, self.scale, ("strengths", i))
        return self
