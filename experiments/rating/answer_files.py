"""The three kinds of answer file a rating comes back in, read into one shape (Answer): the
rating page's download (JSON), a filled CSV sheet, and Label Studio's JSON export. Each file is
checked to belong to the locked sample here; what its answers say is checked in imports.py."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.experiments.rating import label_studio
from diarylab.experiments.rating.lock import LockedSample
from diarylab.foundation.errors import LabError

PAGE_FORMAT = "diarylab-ratings/1"


@dataclass(frozen=True)
class Answer:
    source: Path
    rater: str
    item_id: str
    key: str  # the question's key (q01, ...)
    raw: Any


def _wrong_sample(path: Path, found: Any, sample: LockedSample) -> LabError:
    return LabError(
        f"the file was made for another sample (sample_sha256 {str(found)[:16]}…, this run's "
        f"locked sample is {sample.sha256[:16]}…)",
        where=str(path),
        fix="import the answers to this run's sheets (rating/sheets/, rating/label-studio/)",
    )


def _page_answers(path: Path, record: dict[str, Any], sample: LockedSample) -> list[Answer]:
    if record.get("sample_sha256") != sample.sha256:
        raise _wrong_sample(path, record.get("sample_sha256"), sample)
    rater, given = record.get("rater"), record.get("answers")
    if not isinstance(rater, str) or not isinstance(given, dict):
        raise LabError(
            "the file has no `rater` or no `answers`",
            where=str(path),
            fix="import the file the rating page downloads, unedited",
        )
    return [
        Answer(path, rater, str(item), str(key), value)
        for item, keyed in given.items()
        for key, value in (keyed.items() if isinstance(keyed, dict) else [("?", keyed)])
    ]


def _export_answers(path: Path, tasks: list[Any], sample: LockedSample) -> list[Answer]:
    out = []
    for task in tasks:
        data = task["data"]
        if data.get("sample_sha256") != sample.sha256:
            raise _wrong_sample(path, data.get("sample_sha256"), sample)
        for annotation in task["annotations"]:
            if annotation.get("was_cancelled"):
                continue  # a skipped task in Label Studio: no answer given
            rater = label_studio.annotator(annotation)
            for result in annotation.get("result") or []:
                out.append(
                    Answer(
                        path,
                        rater,
                        str(data.get("item_id")),
                        str(result.get("from_name")),
                        label_studio.result_value(result),
                    )
                )
    return out


def _csv_answers(path: Path, sample: LockedSample) -> list[Answer]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    need = {"sample_sha256", "rater", "item_id", "question_key", "answer"}
    if not rows or not need <= set(rows[0]):
        raise LabError(
            f"the CSV lacks the columns {', '.join(sorted(need))}",
            where=str(path),
            fix="fill in the `answer` column of the sheet rate sample wrote; keep its columns",
        )
    for row in rows:
        if row["sample_sha256"] != sample.sha256:
            raise _wrong_sample(path, row["sample_sha256"], sample)
    return [Answer(path, r["rater"], r["item_id"], r["question_key"], r["answer"]) for r in rows]


def read_answers(path: Path, sample: LockedSample) -> list[Answer]:
    """The answers in one file, in whichever of the three formats it is."""
    if not path.is_file():
        raise LabError("no such file", where=str(path), fix="check the path")
    if path.suffix.lower() == ".csv":
        return _csv_answers(path, sample)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabError(
            f"the file is neither a CSV sheet nor JSON ({exc})",
            where=str(path),
            fix="import a rating page's download, a filled CSV sheet or a Label Studio JSON export",
        ) from None
    if isinstance(record, dict) and record.get("format") == PAGE_FORMAT:
        return _page_answers(path, record, sample)
    if label_studio.is_export(record):
        return _export_answers(path, record, sample)
    raise LabError(
        "the JSON is neither a rating page's download nor a Label Studio export",
        where=str(path),
        fix="import a rating page's download or a Label Studio JSON export (JSON format)",
    )
