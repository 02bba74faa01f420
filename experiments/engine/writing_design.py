"""The design tables of a kind that writes its texts with a steered local model (the diary, the
friends' letters): [diarist_model] and the inline [[profiles]] rules, on top of the kind-neutral
DesignFile (experiments/engine/design.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import Field, model_validator

from diarylab.experiments.engine.design import (
    UNSTEERED,
    DesignFile,
    DiaristModel,
    ProfileRule,
    _unique,
)
from diarylab.foundation.datafiles import FIX_MARK, At


class WritingDesignFile(DesignFile):
    """A kind that writes its texts with a local diarist model, steered by profiles (the diary
    and the friends' letters): [diarist_model] and the inline [[profiles]] rules."""

    writes: ClassVar[bool] = True

    diarist_model: DiaristModel | None = Field(
        None,
        description="[diarist_model]: the local model that writes (required)",
    )
    profiles: list[ProfileRule] = Field([], description="inline profiles: pattern + rule")

    @model_validator(mode="after")
    def _writer_is_named(self) -> WritingDesignFile:
        if self.diarist_model is None:
            raise At(
                ("diarist_model",),
                f"a {self.design.kind} design writes texts with a local model"
                f'{FIX_MARK}add [diarist_model] with model = "smollm2" (the embedded default),'
                " a model folder or a hub id",
            )
        return self

    @model_validator(mode="after")
    def _profile_names(self) -> WritingDesignFile:
        _unique("profiles", [p.id for p in self.profiles], "profile")
        judges = {j.id for j in self.judges}
        for i, rule in enumerate(self.profiles):
            if rule.calibration and rule.calibration.judge not in judges:
                raise At(
                    ("profiles", i, "calibration", "judge"),
                    f"profile {rule.id!r} calibrates with unknown judge "
                    f"{rule.calibration.judge!r}{FIX_MARK}name one of {', '.join(sorted(judges))}",
                )
            if rule.id == UNSTEERED:
                raise At(
                    ("profiles", i, "id"), f"{UNSTEERED!r} is built in{FIX_MARK}choose another id"
                )
        return self

    @property
    def writing_model(self) -> DiaristModel | None:
        return self.diarist_model

    @property
    def profile_rules(self) -> Sequence[ProfileRule]:
        return self.profiles
