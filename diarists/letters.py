"""Letters between two friends: the letter template (diarists/templates/letter.toml), the fixed
content-free letter of the control (diarists/templates/fixed_letter.toml) and what a writer sees
when they write their k-th letter.

A writer's own earlier letters are their assistant turns; each of the friend's letters reaches
them inside the next user turn, as the diary loop does with a chatbot's replies. Letters
alternate, so between two of the writer's letters there is exactly one of the friend's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationInfo, field_validator

from diarylab.diarists.cards import CARD_FIELDS, RoleCard
from diarylab.diarists.templates import TEMPLATES_DIR, check_placeholders
from diarylab.foundation.datafiles import HashedDataFile, NonEmpty

LETTER_FILE = TEMPLATES_DIR / "letter.toml"
FIXED_LETTER_FILE = TEMPLATES_DIR / "fixed_letter.toml"
FRIEND_FIELDS = ("friend_name", "friend_first_name", "friend_home", "friend_work")
_CARD = frozenset({*CARD_FIELDS, *FRIEND_FIELDS})
PLACEHOLDERS = {
    "system": _CARD,
    "first_letter": _CARD,
    "reply_first": _CARD | {"letter"},
    "next_letter": _CARD | {"letter"},
}


class LetterTemplate(HashedDataFile):
    """The `[template]` table; `sha256` is the hash of the file it was read from."""

    file_table = "template"

    id: str
    version: int
    system: str
    first_letter: str
    reply_first: str
    next_letter: str

    @field_validator("system", "first_letter", "reply_first", "next_letter")
    @classmethod
    def _known_placeholders(cls, text: str, info: ValidationInfo) -> str:
        return check_placeholders(text, PLACEHOLDERS[str(info.field_name)])


class FixedLetter(HashedDataFile):
    """The `[letter]` table: the fixed friend's content-free letter."""

    file_table = "letter"

    id: str
    version: int
    text: NonEmpty


def load_letter_template(path: Path = LETTER_FILE) -> LetterTemplate:
    return LetterTemplate.from_file(path)


def load_fixed_letter(path: Path = FIXED_LETTER_FILE) -> FixedLetter:
    return FixedLetter.from_file(path)


def friend_fields(friend: RoleCard) -> dict[str, str]:
    return {
        "friend_name": friend.name,
        "friend_first_name": friend.name.split()[0],
        "friend_home": friend.home,
        "friend_work": friend.work,
    }


def letter_messages(
    writer: RoleCard,
    friend: RoleCard,
    template: LetterTemplate,
    own: Sequence[str],
    received: Sequence[str],
    *,
    writes_first: bool,
) -> list[dict[str, str]]:
    """Messages for the writer's next letter, given their own letters so far and the friend's
    letters received so far (in order). Letters alternate: a writer who opened the exchange has
    received as many letters as they wrote; one who answers has received one more."""
    expected = len(own) + (0 if writes_first else 1)
    if len(received) != expected:
        raise ValueError(
            f"letters alternate: after {len(own)} own letter(s) a writer who "
            f"{'opened' if writes_first else 'answered'} has {expected} of the friend's, "
            f"not {len(received)}"
        )
    values = {**writer.fields(), **friend_fields(friend)}
    messages = [{"role": "system", "content": template.system.format(**values)}]
    incoming = list(received)
    if writes_first:
        messages.append({"role": "user", "content": template.first_letter.format(**values)})
    else:
        first = incoming.pop(0).strip()
        messages.append(
            {"role": "user", "content": template.reply_first.format(letter=first, **values)}
        )
    for mine, theirs in zip(own, incoming, strict=True):
        messages.append({"role": "assistant", "content": mine})
        messages.append(
            {
                "role": "user",
                "content": template.next_letter.format(letter=theirs.strip(), **values),
            }
        )
    return messages
