"""Role cards: the fictional people who keep diaries. Data lives in diarists/cards/*.toml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foundation.datafiles import field, file_sha256, load_toml, string_list, table
from foundation.errors import LabError

CARDS_DIR = Path(__file__).parent / "cards"


@dataclass(frozen=True)
class RoleCard:
    id: str
    version: int
    name: str
    age: int
    pronouns: str
    home: str
    work: str
    situation: str
    people: tuple[str, ...]
    cares_about: str
    voice: str
    sha256: str

    def fields(self) -> dict[str, str]:
        """Values a prompt template can name."""
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


def load_card(path: Path) -> RoleCard:
    where = str(path)
    card = table(load_toml(path), "card", where)
    text = {
        k: field(card, k, str, where)
        for k in ("id", "name", "pronouns", "home", "work", "situation", "cares_about", "voice")
    }
    if text["id"] != path.stem:
        raise LabError(
            f"card id {text['id']!r} differs from the file name",
            where=where,
            fix=f"rename the file to {text['id']}.toml or set id = {path.stem!r}",
        )
    return RoleCard(
        version=field(card, "version", int, where),
        age=field(card, "age", int, where),
        people=tuple(string_list(card, "people", where, min_items=1)),
        sha256=file_sha256(path),
        **text,
    )


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
