"""Role cards: the fictional people who keep diaries. Data lives in diarists/cards/*.toml, one
`[card]` table per file, read through the RoleCard schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from diarylab.foundation.datafiles import HashedDataFile, NonEmpty
from diarylab.foundation.errors import LabError

CARDS_DIR = Path(__file__).parent / "cards"
# The names a prompt template can use for a card's values (RoleCard.fields() gives each).
CARD_FIELDS = (
    "name",
    "age",
    "pronouns",
    "home",
    "work",
    "situation",
    "people",
    "cares_about",
    "voice",
)


class RoleCard(HashedDataFile):
    """One `[card]` table; `sha256` is the hash of the file it was read from."""

    file_table = "card"

    id: str
    version: int
    name: str
    age: int
    pronouns: str
    home: str
    work: str
    situation: str
    people: Annotated[tuple[NonEmpty, ...], Field(strict=False, min_length=1)]
    cares_about: str
    voice: str

    @field_validator("id")
    @classmethod
    def _id_is_the_file_name(cls, value: str, info: ValidationInfo) -> str:
        return same_as_file_name("card", value, info)

    def fields(self) -> dict[str, str]:
        """Values a prompt template can name (one for each of CARD_FIELDS)."""
        return {
            "name": self.name,
            "age": str(self.age),
            "pronouns": self.pronouns,
            "home": self.home,
            "work": self.work,
            "situation": self.situation.strip(),
            "people": "\n".join(f"- {p}" for p in self.people),
            "cares_about": self.cares_about,
            "voice": self.voice.strip(),
        }


def same_as_file_name(kind: str, value: str, info: ValidationInfo) -> str:
    """A data file's id must be its file name (without .toml), when read from a file."""
    path = (info.context or {}).get("path")
    if path is not None and value != Path(path).stem:
        stem = Path(path).stem
        raise ValueError(
            f"{kind} id {value!r} differs from the file name — fix: rename the file to "
            f"{value}.toml or set id = {stem!r}"
        )
    return value


def load_card(path: Path) -> RoleCard:
    return RoleCard.from_file(path, context={"path": path})


def available_cards(folder: Path = CARDS_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.toml"))


def load_cards(ids: list[str] | str = "all", folder: Path = CARDS_DIR) -> list[RoleCard]:
    known = available_cards(folder)
    wanted = known if ids == "all" else list(ids)
    unknown = [i for i in wanted if i not in known]
    if unknown:
        raise LabError(
            f"unknown diarist(s) {', '.join(map(repr, unknown))}",
            where="diarists",
            fix=f"choose from {', '.join(known)}",
        )
    return [load_card(folder / f"{i}.toml") for i in wanted]
