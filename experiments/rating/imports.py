"""Raters' answers checked and made into store rows (answer_files.py reads the files: the
rating page's download, the CSV sheet, Label Studio's export). Every file is checked against
the locked sample before anything is stored — the sample it was made for, its items, its
questions, each value's range, each rater answering each item once — and every problem is told
(file and item named), so a failed import stores nothing; a good one stores every answer in one
transaction. A sheet finished in part imports what it holds, and the import says what is still
unanswered (the rest is imported later: an answer once stored is kept)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from diarylab.experiments.rating.answer_files import Answer, read_answers
from diarylab.experiments.rating.form import RatingQuestion
from diarylab.experiments.rating.lock import LockedSample
from diarylab.experiments.rating.rows import RatingRow
from diarylab.foundation.errors import Collector, LabError

_YES_NO = {"yes": 1.0, "no": 0.0, "y": 1.0, "n": 0.0, "1": 1.0, "0": 0.0}
_MAX_SAID = 5  # problems named one by one per file; the rest are counted


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
) -> tuple[list[RatingRow], list[str]]:
    """The rows the files hold and what their raters left unanswered, or one LabError naming
    every problem (file and item). `stored`:
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
    problems.raise_any()
    return rows, unanswered(rows, sample, stored, files_of)


def unanswered(
    rows: Sequence[RatingRow],
    sample: LockedSample,
    stored: dict[tuple[str, str, str], tuple[float, str]],
    files_of: dict[str, set[str]],
) -> list[str]:
    """What each rater of the import has not answered yet, in this import's files (Label
    Studio exports entries and replies as two projects) or already stored: one line per rater,
    items named."""
    have = {(r.rater, r.item_id, r.question_key) for r in rows} | set(stored)
    out = []
    for rater in sorted(files_of):
        items = [
            it.item_id
            for it in sample.items
            if any(
                (rater, it.item_id, q.key) not in have for q in sample.questions_for(it.target_kind)
            )
        ]
        if items:
            shown = ", ".join(items[:_MAX_SAID]) + (f" and {len(items) - _MAX_SAID} more"
                                                    if len(items) > _MAX_SAID else "")  # fmt: skip
            out.append(
                f"rater {rater} ({', '.join(sorted(files_of[rater]))}) left {len(items)} of "
                f"{len(sample.items)} items unanswered in part or whole: {shown}"
            )
    return out
