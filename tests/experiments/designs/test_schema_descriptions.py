"""Every field of every design schema (each kind's, and the pieces they share: models,
endpoints, steering, judges, hypotheses) has a description, so that `design schema` and an
editor tell a user what a setting means, its unit and what its default does."""

from __future__ import annotations

from pydantic import BaseModel

from diarylab.experiments.kinds import get_kind, kind_names
from diarylab.foundation.validation_errors import models_of


def undescribed(schema: type[BaseModel]) -> list[str]:
    return sorted(
        f"{model.__module__}.{model.__name__}.{name}"
        for model in models_of(schema)
        for name, info in model.model_fields.items()
        if not (info.description or "").strip()
    )


def test_every_field_of_every_design_schema_has_a_description():
    missing = sorted(
        {f for kind in kind_names() for f in undescribed(get_kind(kind, where="t").schema)}
    )
    assert missing == [], f"{len(missing)} fields have no description=: {missing}"


def test_the_walk_finds_a_field_without_one():
    from pydantic import Field

    class Inner(BaseModel):
        bare: int = 1

    class Outer(BaseModel):
        inner: list[Inner] | None = Field(None, description="some")

    assert undescribed(Outer) == [f"{__name__}.Inner.bare"]
