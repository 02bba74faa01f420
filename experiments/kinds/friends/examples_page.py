"""The friends report's examples.md: the exchanges EXAMPLE_RULE picks per condition, each
letter as written to the reader, with its flags."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.friends.describe import EXAMPLE_RULE
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile


def ends_at_sentence(spec: FriendsDesignFile) -> bool:
    return spec.diarist_model is not None and spec.diarist_model.generation.end_at_sentence


def examples_page(
    store: Store, picked: Mapping[str, list[str]], letters: pd.DataFrame, ended: bool = False
) -> str:
    """`ended`: a letter the cap cut was used up to its last full sentence (end_at_sentence)."""
    cut = "used up to its last full sentence" if ended else "stored as written"
    lines = ["# Example exchanges\n", EXAMPLE_RULE + "\n"]
    for condition, pair_ids in picked.items():
        lines.append(f"## {condition}\n")
        for pair_id in pair_ids:
            rows = store.select(
                "letters", ("letter_id",), where={"pair_id": pair_id}, order_by=("position",)
            )
            lines.append(f"### {pair_id}\n")
            for (letter_id,) in rows:
                row: LetterRow = store.get(LetterRow, letter_id)
                who = "fixed letter" if row.call_key is None else f"{row.profile}"
                lines.append(
                    f"**{row.position}. {row.writer} to {row.friend}** ({who}, letter "
                    f"{row.letter_index}, `{row.letter_id}`)\n"
                )
                lines.append(md.quote(row.text))
                if row.flag == "truncated":
                    lines.append(f"_Flagged: cut at the token cap: {cut}._\n")
                elif row.flag:
                    lines.append(f"_Flagged: {row.flag}._\n")
    return "\n".join(lines)
