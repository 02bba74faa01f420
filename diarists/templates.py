"""The entry prompt template (diarists/templates/entry.toml) and building an entry's messages."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from diarylab.diarists.cards import CARD_FIELDS, RoleCard
from diarylab.foundation.datafiles import FIX_MARK, HashedDataFile, NonEmpty

TEMPLATES_DIR = Path(__file__).parent / "templates"
# The {placeholders} each text may use: str.format fills them when an entry is asked for, so an
# unknown one is refused when the template is read, not halfway through a run.
PLACEHOLDERS = {
    "system": frozenset(CARD_FIELDS),
    "first_entry": frozenset({"day"}),
    "next_entry": frozenset({"day", "reply", *CARD_FIELDS}),
}


def check_placeholders(text: str, allowed: frozenset[str]) -> str:
    """`text` if every {placeholder} in it is a plain name from `allowed` (literal braces are
    written {{ and }}); otherwise a ValueError saying which and how to fix it."""
    known = ", ".join(sorted(allowed))
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(
            f"unbalanced braces ({exc}){FIX_MARK}close every {{placeholder}}, and write a "
            "literal brace as {{ or }}"
        ) from None
    for _, name, spec, _ in parts:
        if name is None:
            continue
        if name not in allowed or "{" in (spec or ""):
            raise ValueError(
                f"unknown placeholder {{{name}}}{FIX_MARK}use only {known} (a literal brace "
                "is written {{ or }})"
            )
    return text


class EntryTemplate(HashedDataFile):
    """The `[template]` table; `sha256` is the hash of the file it was read from."""

    file_table = "template"

    id: str
    version: int
    system: str
    first_entry: str
    next_entry: str
    days: Annotated[tuple[NonEmpty, ...], Field(strict=False, min_length=1)]

    @field_validator("system", "first_entry", "next_entry")
    @classmethod
    def _known_placeholders(cls, text: str, info: ValidationInfo) -> str:
        return check_placeholders(text, PLACEHOLDERS[str(info.field_name)])


def load_entry_template(path: Path = TEMPLATES_DIR / "entry.toml") -> EntryTemplate:
    return EntryTemplate.from_file(path)


def first_entry_messages(
    card: RoleCard, template: EntryTemplate, day_index: int = 0
) -> list[dict[str, str]]:
    day = template.days[day_index % len(template.days)]
    return [
        {"role": "system", "content": template.system.format(**card.fields())},
        {"role": "user", "content": template.first_entry.format(day=day)},
    ]
