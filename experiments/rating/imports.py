"""Reading raters' answers back: the rating page's download (JSON), the CSV sheet, and Label
Studio's JSON export. Every file is checked against the locked sample before anything is
stored — the sample it was made for, its items, its questions, each value's range, each
rater answering each item once and every item of the sample — and every problem is told
(file and item named), so a failed import stores nothing; a good one stores every answer in
one transaction."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.experiments.rating import label_studio
from diarylab.experiments.rating.form import RatingQuestion
from diarylab.experiments.rating.lock import LockedSample
from diarylab.experiments.rating.rows import RatingRow
from diarylab.foundation.errors import Collector, LabError

PAGE_FORMAT = "diarylab-ratings/1"
_YES_NO = {"yes": 1.0, "no": 0.0, "y": 1.0, "n": 0.0, "1": 1.0, "0": 0.0}
_MAX_SAID = 5  # problems named one by one per file; the rest are counted


@dataclass(frozen=True)
class Answer:
    source: Path
    rater: str
    item_id: str
    key: str  # the question's key (q01, ...)
    raw: Any


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def _value(answer: Answer, question: RatingQuestion) -> float:
    raw = answer.raw
    where = f"{answer.source}: item {answer.item_id} {answer.key}"
    if question.scale == "yes_no":
        word = str(raw).strip().lower()
        if word not in _YES_NO:
            raise LabError(f"answer {raw!r} is not yes or no", where=where, fix="answer yes or no")
        return _YES_NO[word]
    try:
        number = float(str(raw).strip())
    except ValueError:
        number = float("nan")
    if not (0.0 <= number <= 100.0) or number != int(number):
        raise LabError(
            f"answer {raw!r} is not a whole number from 0 to 100",
            where=where,
            fix="give a whole number from 0 to 100, e.g. 40",
        )
    return number


def _check_file(answers: Sequence[Answer], sample: LockedSample, problems: Collector) -> None:
    """Items and questions exist, values are in range, nothing is left blank and no answer is
    given twice. Whether every item was rated is checked over the whole import."""
    items = {it.item_id: it for it in sample.items}
    said = 0

    def tell(error: LabError) -> None:
        nonlocal said
        said += 1
        if said <= _MAX_SAID:
            problems.add(error)

    seen: set[tuple[str, str, str]] = set()
    for a in answers:
        where = f"{a.source}: item {a.item_id}"
        item = items.get(a.item_id)
        if item is None:
            tell(
                LabError(
                    "no such item in the locked sample",
                    where=where,
                    fix="import the sheets drawn for this run",
                )
            )
            continue
        keys = {q.key: q for q in sample.questions_for(item.target_kind)}
        if a.key not in keys:
            tell(
                LabError(
                    f"no question {a.key!r} for a {item.target_kind}",
                    where=where,
                    fix="keep the sheet's question keys",
                )
            )
            continue
        if (a.rater, a.item_id, a.key) in seen:
            tell(
                LabError(
                    f"rater {a.rater} answers {a.key} twice",
                    where=where,
                    fix="keep one answer per question",
                )
            )
            continue
        seen.add((a.rater, a.item_id, a.key))
        if a.raw is None or (isinstance(a.raw, str) and not a.raw.strip()):
            continue  # left blank: told below
        try:
            _value(a, keys[a.key])
        except LabError as exc:
            tell(exc)
    blank = [a for a in answers if a.raw is None or str(a.raw).strip() == ""]
    for a in blank:
        tell(
            LabError(
                f"rater {a.rater} left {a.key} blank",
                where=f"{a.source}: item {a.item_id}",
                fix="answer every question and import the file again",
            )
        )
    if said > _MAX_SAID:
        problems.add(
            LabError(f"and {said - _MAX_SAID} more problems", where=str(answers[0].source))
        )


def rating_rows(
    files: Iterable[Path],
    sample: LockedSample,
    stored: dict[tuple[str, str, str], tuple[float, str]],
) -> list[RatingRow]:
    """The rows the files hold, or one LabError naming every problem (file and item). `stored`:
    (rater, item, key) -> (value, source sha256) already in the store — the same answer again
    (the same file, or the sheet downloaded again) is a no-op, a different one is refused."""
    problems = Collector()
    rows: list[RatingRow] = []
    taken: dict[tuple[str, str, str], Path] = {}
    files_of: dict[str, set[str]] = {}  # rater -> the files of this import that hold answers
    for path in files:
        path = Path(path)
        with problems.check():
            answers = read_answers(path, sample)
            if not answers:
                raise LabError(
                    "the file holds no answers", where=str(path), fix="import a filled sheet"
                )
            before = len(problems.errors)
            _check_file(answers, sample, problems)
            if len(problems.errors) > before:
                continue
            sha = _file_sha(path)
            for a in answers:
                key = (a.rater, a.item_id, a.key)
                if key in taken:
                    raise LabError(
                        f"rater {a.rater} answers {a.key} in this file and in {taken[key].name}",
                        where=f"{path}: item {a.item_id}",
                        fix="import one file per rater",
                    )
                taken[key] = path
                files_of.setdefault(a.rater, set()).add(str(path))
                item = sample.item(a.item_id)
                question = next(q for q in sample.form if q.key == a.key)
                value = _value(a, question)
                if key in stored and stored[key][0] != value:
                    raise LabError(
                        f"rater {a.rater} already has a different answer to {a.key} in the store",
                        where=f"{path}: item {a.item_id}",
                        fix="an answer once imported is kept; rate under another rater name",
                    )
                rows.append(
                    RatingRow(
                        rating_id=f"{sample.sha256[:16]}:{a.rater}:{a.item_id}:{a.key}",
                        sample_sha256=sample.sha256,
                        rater=a.rater,
                        item_id=a.item_id,
                        question_key=a.key,
                        target_kind=item.target_kind,
                        target_id=item.target_id,
                        item=question.item,
                        scale=question.scale,
                        value=value,
                        source=path.name,
                        source_sha256=sha,
                    )
                )
    if not problems.errors:
        with problems.check():
            _check_complete(rows, sample, stored, files_of)
    problems.raise_any()
    return rows


def _check_complete(
    rows: Sequence[RatingRow],
    sample: LockedSample,
    stored: dict[tuple[str, str, str], tuple[float, str]],
    files_of: dict[str, set[str]],
) -> None:
    """Every rater of the import has answered every question of every item, in this import's
    files (Label Studio exports entries and replies as two projects) or already stored."""
    have = {(r.rater, r.item_id, r.question_key) for r in rows} | set(stored)
    problems = Collector()
    for rater in sorted(files_of):
        for it in sample.items:
            missing = [
                q.key
                for q in sample.questions_for(it.target_kind)
                if (rater, it.item_id, q.key) not in have
            ]
            if missing:
                problems.add(
                    LabError(
                        f"rater {rater} left {', '.join(missing)} unanswered",
                        where=f"{', '.join(sorted(files_of[rater]))}: item {it.item_id}",
                        fix="finish the sheet (every item, every question) and import it "
                        "again, with every file of that rater",
                    )
                )
                if len(problems.errors) >= _MAX_SAID:
                    problems.raise_any()
    problems.raise_any()
