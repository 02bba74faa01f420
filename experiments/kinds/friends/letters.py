"""The friends kind's conversation phase: the letter exchange. Position by position, every
pair's next letter is written in one batch (steered and unsteered writers together, each
steered writer with their own profile's steering); the fixed-letter friend's letters are data
and call no model. Every model call goes through the store's cached-call door, so a killed run
resumes where it stopped: letters already stored are read, not written again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from diarylab.diarists.letters import FixedLetter, LetterTemplate, letter_messages
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Tick
from diarylab.experiments.engine.writes import SteeredWrite, Writer, write_cached
from diarylab.experiments.kinds.friends.contrast import FIXED
from diarylab.experiments.kinds.friends.pairs import Pair, Seat, letter_seed, other
from diarylab.experiments.kinds.friends.rows import LetterRow

# The friends' writer: the diarist model with the letter template. The fixed friend's letter
# is not the writer's: it is data that calls no model, passed beside the writer.
LetterWriter = Writer[LetterTemplate]


def exchange_so_far(store: Store, pair: Pair, upto: int) -> list[LetterRow]:
    """The pair's first `upto` letters in writing order, from the store."""
    rows = []
    for seat, k in pair.order()[:upto]:
        row = store.get(LetterRow, pair.letter_id(seat, k))
        assert row is not None, f"letter {pair.letter_id(seat, k)} missing"
        rows.append(row)
    return rows


def messages_for(
    writer: LetterWriter, pair: Pair, seat: Seat, earlier: Sequence[LetterRow]
) -> list[dict[str, str]]:
    """What the writer in `seat` sees for their next letter, given the exchange so far."""
    own = [r.text for r in earlier if r.seat == seat]
    received = [r.text for r in earlier if r.seat != seat]
    return letter_messages(
        writer.cards[pair.card(seat)],
        writer.cards[pair.card(other(seat))],
        writer.template,
        own,
        received,
        writes_first=pair.first == seat,
    )


def write_position(
    store: Store,
    writer: LetterWriter,
    fixed_letter: FixedLetter,
    pairs: Sequence[Pair],
    position: int,
    seed: int,
    tick: Tick,
) -> None:
    fixed: list[LetterRow] = []
    jobs: list[tuple[Pair, Seat, int, list[dict[str, str]], int]] = []
    for pair in pairs:
        seat, k = pair.order()[position - 1]
        letter_id = pair.letter_id(seat, k)
        if store.has(LetterRow, letter_id):
            store.kept += 1
            tick(1)
            continue
        if pair.profile(seat) == FIXED:
            fixed.append(row_for(pair, seat, k, position, writer, fixed_letter.text, {}, None))
            continue
        earlier = exchange_so_far(store, pair, position - 1)
        messages = messages_for(writer, pair, seat, earlier)
        jobs.append((pair, seat, k, messages, letter_seed(seed, letter_id)))
    if fixed:
        store.put_rows(*fixed)
        tick(len(fixed))
    if not jobs:
        return
    write_cached(
        store,
        writer,
        [SteeredWrite(m, s, pair.profile(seat)) for pair, seat, _, m, s in jobs],
        lambda i, result, key: (
            row_for(jobs[i][0], jobs[i][1], jobs[i][2], position, writer, None, result, key),
        ),
        done=tick,
    )


def row_for(
    pair: Pair,
    seat: Seat,
    k: int,
    position: int,
    writer: LetterWriter,
    fixed_text: str | None,
    result: Mapping[str, Any],
    key: str | None,
) -> LetterRow:
    profile = pair.profile(seat)
    cut = not result.get("stopped_at_eos", True)
    text = (
        fixed_text
        if fixed_text is not None
        else writer.generation.ended(str(result["text"]).strip(), cut)
    )
    flag = None
    if not text:
        flag = "empty"
    elif fixed_text is None and cut:
        flag = "truncated"
    return LetterRow(
        letter_id=pair.letter_id(seat, k),
        pair_id=pair.id,
        condition=pair.condition,
        seat=seat,
        writer=pair.card(seat),
        friend=pair.card(other(seat)),
        profile=profile,
        pattern=None if profile == FIXED else writer.profiles[profile].pattern,
        friend_profile=pair.profile(other(seat)),
        letter_index=k,
        position=position,
        text=text,
        new_tokens=result.get("new_tokens"),
        flag=flag,
        call_key=key,
    )


def run_letters(
    store: Store,
    writer: LetterWriter,
    fixed_letter: FixedLetter,
    pairs: Sequence[Pair],
    seed: int,
    tick: Tick,
) -> None:
    positions = max((2 * p.letters for p in pairs), default=0)
    for position in range(1, positions + 1):
        write_position(store, writer, fixed_letter, pairs, position, seed, tick)
