"""The store's rows for human ratings: one per rater × item × question, written by
`diarylab rate import` in one transaction per import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class RatingRow:
    TABLE: ClassVar[str] = "ratings"
    rating_id: str  # "<sample sha256[:16]>:<rater>:<item id>:<question key>"
    sample_sha256: str  # the locked sample the answer belongs to
    rater: str
    item_id: str  # the blinded item id the rater saw
    question_key: str  # the form's key the rater answered (q01, ...)
    target_kind: str  # "entry" or "reply", as the judges' readings name it
    target_id: str  # the rated text's text_id
    item: str  # the judges' item: "coherence", "pattern:<id>", "person:risk", a rubric question
    scale: str  # "number" (0–100) or "yes_no" (1 yes, 0 no)
    value: float
    source: str  # the file it was imported from (its name)
    source_sha256: str


ROW_TYPES = (RatingRow,)
