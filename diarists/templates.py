"""The entry prompt template (diarists/templates/entry.toml) and building an entry's messages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from diarists.cards import RoleCard
from foundation.datafiles import field, file_sha256, load_toml, string_list, table

TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class EntryTemplate:
    id: str
    version: int
    system: str
    first_entry: str
    next_entry: str
    days: tuple[str, ...]
    sha256: str


def load_entry_template(path: Path = TEMPLATES_DIR / "entry.toml") -> EntryTemplate:
    where = str(path)
    t = table(load_toml(path), "template", where)
    return EntryTemplate(
        id=field(t, "id", str, where),
        version=field(t, "version", int, where),
        system=field(t, "system", str, where),
        first_entry=field(t, "first_entry", str, where),
        next_entry=field(t, "next_entry", str, where),
        days=tuple(string_list(t, "days", where, min_items=1)),
        sha256=file_sha256(path),
    )


def first_entry_messages(
    card: RoleCard, template: EntryTemplate, day_index: int = 0
) -> list[dict[str, str]]:
    day = template.days[day_index % len(template.days)]
    return [
        {"role": "system", "content": template.system.format(**card.fields())},
        {"role": "user", "content": template.first_entry.format(day=day)},
    ]
