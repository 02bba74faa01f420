"""How long a letter's prompt is, for the plan's token counts: the writer's card and the
friend's, the letters written so far and the friend's letters received (every letter at the
writer's max_new_tokens, instruction text at CHARS_PER_TOKEN: an estimate that bounds what a
run sends)."""

from __future__ import annotations

from diarylab.diarists.cards import load_cards
from diarylab.diarists.letters import friend_fields, load_letter_template
from diarylab.experiments.engine.workload import conversation_tokens, text_tokens
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile


def letter_prompt(spec: FriendsDesignFile) -> tuple[float, float]:
    """The mean and the longest prompt of a model-written letter over both seats: the seat
    that opens has received as many letters as it wrote, the one that answers one more."""
    template = load_letter_template()
    cards = load_cards(spec.pairs.card_ids)
    system = sum(
        text_tokens(template.system.format(**c.fields(), **friend_fields(c))) for c in cards
    )
    system /= max(len(cards), 1)
    letter = float(spec.writer.generation.max_new_tokens)
    sizes = []
    for j in range(1, spec.design.entries + 1):
        for opens in (True, False):
            first = text_tokens(template.first_letter if opens else template.reply_first)
            first += 0.0 if opens else letter
            turns = [first] + [letter, text_tokens(template.next_letter) + letter] * (j - 1)
            sizes.append(conversation_tokens(turns, system))
    return sum(sizes) / len(sizes), max(sizes)
