"""The rating sheets people fill in: a self-contained HTML page per rater (no server, no
network: its data, script and style inline; answers kept in the browser and downloaded as one
file) and the same items as a CSV per rater for spreadsheet raters. Both show each rater the
items in their own shuffled order, the texts and the form's questions, and nothing else: no
profile, chatbot, diarist, judge or score."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping
from pathlib import Path

from diarylab.experiments.analysis.html_page import json_block, page_head
from diarylab.experiments.rating.contexts import ItemContext
from diarylab.experiments.rating.lock import LockedSample
from diarylab.experiments.rating.sheet_text import sheet_text
from diarylab.foundation.atomic import write_atomic

ASSETS = Path(__file__).parent
CSV_COLUMNS = (
    "sample_sha256", "rater", "position", "item_id", "kind", "question_key", "scale",
    "question", "answer", "earlier", "entry", "reply",
)  # fmt: skip


def sheet_data(sample: LockedSample, rater: str, contexts: Mapping[str, ItemContext]) -> dict:
    words = sheet_text()
    return {
        "sample_sha256": sample.sha256,
        "form_sha256": sample.form_sha256,
        "rater": rater,
        "words": {
            "entry_heading": words.entry_heading,
            "reply_heading": words.reply_heading,
            "earlier_heading": words.earlier_heading,
        },
        "questions": {
            target: [
                {"key": q.key, "scale": q.scale, "wording": q.wording}
                for q in sample.questions_for(target)
            ]
            for target in ("entry", "reply")
        },
        "items": [contexts[i].to_record() for i in sample.orders[rater]],
    }


def sheet_html(sample: LockedSample, rater: str, contexts: Mapping[str, ItemContext]) -> str:
    words = sheet_text()
    style = (ASSETS / "sheet.css").read_text(encoding="utf-8")
    script = (ASSETS / "sheet.js").read_text(encoding="utf-8")
    data = json_block(sheet_data(sample, rater, contexts))
    title = html.escape(words.title)
    return (
        page_head(words.title, style)
        + f"""\
<header><h1>{title}</h1><p id="progress"></p></header>
<section id="intro">{html.escape(words.instructions)}</section>
<nav><button id="prev">Previous</button><span id="position"></span><button id="next">Next</button>
<button id="unanswered">First unanswered</button></nav>
<main id="item"></main>
<nav><button id="download">Download my answers</button><span id="status"></span></nav>
<script type="application/json" id="sheet-data">{data}</script>
<script>
{script}</script>
</body>
</html>
"""
    )


def sheet_csv(sample: LockedSample, rater: str, contexts: Mapping[str, ItemContext]) -> str:
    """One row per item × question, in the rater's order, `answer` left blank: yes or no, or
    a whole number from 0 to 100. The texts are on each item's first row."""
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for position, item_id in enumerate(sample.orders[rater], start=1):
        context = contexts[item_id]
        for i, q in enumerate(sample.questions_for(context.target)):
            earlier = "\n\n".join(f"[{who}] {text}" for who, text in context.earlier)
            writer.writerow(
                {
                    "sample_sha256": sample.sha256,
                    "rater": rater,
                    "position": position,
                    "item_id": item_id,
                    "kind": context.target,
                    "question_key": q.key,
                    "scale": "0-100" if q.scale == "number" else "yes/no",
                    "question": q.wording,
                    "answer": "",
                    "earlier": earlier if i == 0 else "",
                    "entry": context.entry if i == 0 else "",
                    "reply": (context.reply or "") if i == 0 else "",
                }
            )
    return out.getvalue()


def write_sheets(
    folder: Path, sample: LockedSample, contexts: Mapping[str, ItemContext]
) -> list[Path]:
    """rating/sheets/<rater>.html and .csv for every rater; the same sample writes the same
    bytes, so writing them again changes nothing."""
    out = Path(folder) / "sheets"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for rater in sample.raters:
        for suffix, text in (
            (".html", sheet_html(sample, rater, contexts)),
            (".csv", sheet_csv(sample, rater, contexts)),
        ):
            path = out / f"{rater}{suffix}"
            write_atomic(path, text)
            written.append(path)
    return written
