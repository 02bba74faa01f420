"""What the diarist model sees when it writes entry k.

The diarist's own earlier entries are its assistant turns; each chatbot reply reaches it inside
the next user turn ("you showed it to a chatbot, and it answered: ..."), so the whole
conversation is in view and the model stays the writer rather than becoming the assistant."""

from __future__ import annotations

from collections.abc import Sequence

from diarylab.diarists.cards import RoleCard
from diarylab.diarists.templates import EntryTemplate


def entry_messages(
    card: RoleCard,
    template: EntryTemplate,
    earlier_entries: Sequence[str],
    replies: Sequence[str],
    *,
    first_day: int = 0,
) -> list[dict[str, str]]:
    """Messages for the next entry, given the entries so far and the replies to each of them."""
    if len(replies) != len(earlier_entries):
        raise ValueError("every earlier entry needs its reply before the next entry is written")
    fields = card.fields()
    day = template.days
    messages = [
        {"role": "system", "content": template.system.format(**fields)},
        {"role": "user", "content": template.first_entry.format(day=day[first_day % len(day)])},
    ]
    for k, (entry, reply) in enumerate(zip(earlier_entries, replies, strict=True), start=1):
        messages.append({"role": "assistant", "content": entry})
        messages.append(
            {
                "role": "user",
                "content": template.next_entry.format(
                    day=day[(first_day + k) % len(day)], reply=reply.strip(), **fields
                ),
            }
        )
    return messages


def chatbot_view(entries: Sequence[str], replies: Sequence[str]) -> list[dict[str, str]]:
    """What a chatbot sees: the entries as user turns, its replies as assistant turns, ending
    with the latest entry."""
    if len(entries) != len(replies) + 1:
        raise ValueError("the chatbot answers the latest entry: one more entry than replies")
    messages: list[dict[str, str]] = []
    for k, entry in enumerate(entries):
        messages.append({"role": "user", "content": entry})
        if k < len(replies):
            messages.append({"role": "assistant", "content": replies[k]})
    return messages
