"""Role cards: the fictional people who keep diaries. Data lives in diarists/cards/*.toml, one
`[card]` table per file, read through the RoleCard schema."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from diarylab.foundation.datafiles import HashedDataFile, NonEmpty
from diarylab.foundation.errors import LabError

CARDS_DIR = Path(__file__).parent / "cards"  # the shipped cards
# A folder of role cards read in place of the shipped ones (a cast of one's own, or the extra
# cards a paper-size rehearsal makes: bench/rehearsal.py). A run copies every card it reads
# into its folder's inputs/ and records its hash, so a resume with other cards is refused.
CARDS_ENV = "DIARYLAB_CARDS_DIR"
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


def cards_dir() -> Path:
    """Where role cards are read from: $DIARYLAB_CARDS_DIR when set, else the shipped cards."""
    chosen = os.environ.get(CARDS_ENV)
    return Path(chosen) if chosen else CARDS_DIR


def available_cards(folder: Path | None = None) -> list[str]:
    return sorted(p.stem for p in (folder or cards_dir()).glob("*.toml"))


def load_cards(ids: list[str] | str = "all", folder: Path | None = None) -> list[RoleCard]:
    folder = folder or cards_dir()
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
