"""The entry prompt template (diarists/templates/entry.toml) and building an entry's messages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, PrivateAttr

from diarists.cards import RoleCard
from foundation.datafiles import DataModel, NonEmpty, file_sha256, load_data

TEMPLATES_DIR = Path(__file__).parent / "templates"


class EntryTemplate(DataModel):
    """The `[template]` table; `sha256` is the hash of the file it was read from."""

    id: str
    version: int
    system: str
    first_entry: str
    next_entry: str
    days: Annotated[tuple[NonEmpty, ...], Field(strict=False, min_length=1)]
    _sha256: str = PrivateAttr(default="")

    @property
    def sha256(self) -> str:
        return self._sha256


class EntryTemplateFile(DataModel):
    template: EntryTemplate


def load_entry_template(path: Path = TEMPLATES_DIR / "entry.toml") -> EntryTemplate:
    template = load_data(path, EntryTemplateFile)[0].template
    template._sha256 = file_sha256(path)
    return template


def first_entry_messages(
    card: RoleCard, template: EntryTemplate, day_index: int = 0
) -> list[dict[str, str]]:
    day = template.days[day_index % len(template.days)]
    return [
        {"role": "system", "content": template.system.format(**card.fields())},
        {"role": "user", "content": template.first_entry.format(day=day)},
    ]
