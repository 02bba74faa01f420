"""The sample for Label Studio, the open-source annotation tool: one labeling config and one
tasks file per kind of item (entries, replies: their questions differ), written from the
locked sample, and the reader of Label Studio's JSON export (a list of tasks, each with its
annotations; a result names its question by `from_name` and holds `choices` or `number`).
The export's shape follows label-studio 1.23's label_studio/data_export/serializers.py: an
annotation's `completed_by` is the user's id (AnnotationSerializer's PrimaryKeyRelatedField),
or the user expanded to id and e-mail (as in its tests' previous_export.json). The round trip
runs against a real server in tests/experiments/rating/test_rating_label_studio.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from diarylab.experiments.rating.contexts import ItemContext
from diarylab.experiments.rating.lock import LockedSample
from diarylab.experiments.rating.sheet_text import sheet_text
from diarylab.foundation.atomic import write_atomic

KINDS = {"entry": "entries", "reply": "replies"}


def label_config(sample: LockedSample, target: str) -> str:
    """The labeling config of one kind of item: its texts, then each question (a yes/no as a
    single choice, a 0–100 score as a number), every one required."""
    words = sheet_text()
    lines = ["<View>"]
    if target == "reply":
        lines += [
            f"  <Header value={quoteattr(words.earlier_heading)}/>",
            '  <Text name="earlier" value="$earlier"/>',
        ]
    lines += [
        f"  <Header value={quoteattr(words.entry_heading)}/>",
        '  <Text name="entry" value="$entry"/>',
    ]
    if target == "reply":
        lines += [
            f"  <Header value={quoteattr(words.reply_heading)}/>",
            '  <Text name="reply" value="$reply"/>',
        ]
    to_name = "reply" if target == "reply" else "entry"
    for q in sample.questions_for(target):
        lines.append(f'  <Header value={quoteattr(q.wording)} size="6"/>')
        if q.scale == "yes_no":
            lines += [
                f'  <Choices name="{q.key}" toName="{to_name}" choice="single" required="true">',
                '    <Choice value="yes"/>',
                '    <Choice value="no"/>',
                "  </Choices>",
            ]
        else:
            lines.append(
                f'  <Number name="{q.key}" toName="{to_name}" min="0" max="100" required="true"/>'
            )
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def label_tasks(
    sample: LockedSample, target: str, contexts: Mapping[str, ItemContext]
) -> list[dict[str, Any]]:
    """Label Studio tasks for one kind of item, in the first rater's shuffled order."""
    first = sample.raters[0]
    tasks = []
    for item_id in sample.orders[first]:
        context = contexts[item_id]
        if context.target != target:
            continue
        earlier = "\n\n".join(f"[{who}] {text}" for who, text in context.earlier)
        data = {"item_id": item_id, "sample_sha256": sample.sha256, "entry": context.entry}
        if target == "reply":
            data |= {"reply": context.reply or "", "earlier": earlier or "(none)"}
        tasks.append({"data": data})
    return tasks


def write_label_studio(
    folder: Path, sample: LockedSample, contexts: Mapping[str, ItemContext]
) -> list[Path]:
    """label-studio/<entries|replies>.xml (the project's labeling config) and .json (its tasks
    to import), for each kind the sample holds."""
    out = Path(folder) / "label-studio"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for target, name in KINDS.items():
        if not sample.questions_for(target):
            continue
        tasks = label_tasks(sample, target, contexts)
        if not tasks:
            continue
        write_atomic(out / f"{name}.xml", label_config(sample, target))
        write_atomic(out / f"{name}.json", json.dumps(tasks, indent=1, ensure_ascii=False) + "\n")
        written += [out / f"{name}.xml", out / f"{name}.json"]
    return written


def is_export(record: Any) -> bool:
    """A Label Studio JSON export: a list of tasks with `data` and `annotations`."""
    return isinstance(record, list) and all(
        isinstance(t, dict) and "data" in t and "annotations" in t for t in record
    )


def annotator(annotation: Mapping[str, Any]) -> str:
    """The rater an annotation is from: Label Studio's user, by e-mail where the export
    expands the user, else by user id ("ls-1")."""
    who = annotation.get("completed_by")
    if isinstance(who, Mapping):
        who = who.get("email") or who.get("id")
    return f"ls-{who}"


def result_value(result: Mapping[str, Any]) -> Any:
    """A result's answer: the chosen word of a single choice, or the number."""
    value = result.get("value") or {}
    if "choices" in value:
        chosen = value["choices"]
        return chosen[0] if isinstance(chosen, list) and len(chosen) == 1 else chosen
    return value.get("number")
