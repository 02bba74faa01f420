"""The judge-free pattern measure of the diary experiment: every entry read back through the
unsteered diarist model and projected on each scored pattern's steering direction, at the
steering layers (steering/projection.py). It is stored like a judge score — judge id
`projection`, item `pattern:<id>`, through the store's cached-call door — so every entry table
shows it beside the judges, with its own intervals.

Each entry is read after its diarist's first-entry prompt (the role card and the writing
instructions, no earlier entries or replies), for every entry alike: the conversation so far
stays out, so the value says what the text's own tokens carry.

The report's section on it (`section`) picks out the rows of the report's own steering and
agreement tables where the measure stands beside a judge (same row ids, same intervals)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from diarylab.diarists.entry_context import entry_messages
from diarylab.diarists.profiles import Profile
from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.engine.tasks import Tick
from diarylab.experiments.kinds.diary.conversations import DiaryWriter
from diarylab.experiments.kinds.diary.rows import EntryRow
from diarylab.experiments.kinds.diary.schema import PROJECTION
from diarylab.steering.apply import Steer
from diarylab.steering.projection import METHOD, project

JUDGE = PROJECTION


def pattern_steers(profiles: Mapping[str, Profile], patterns: list[str]) -> dict[str, Steer]:
    """The direction and layers each scored pattern is read at: those of the first steered
    profile of that pattern (a pattern no profile steers has no direction to read)."""
    out: dict[str, Steer] = {}
    for profile in profiles.values():
        steer = profile.steer
        if steer is not None and profile.pattern in patterns and profile.pattern not in out:
            out[profile.pattern] = steer
    return out


def project_entries(store: Store, writer: DiaryWriter, patterns: list[str], tick: Tick) -> None:
    steers = pattern_steers(writer.profiles, patterns)
    if not steers:
        return
    ids = sorted(store.ids(EntryRow))
    entries = [e for e in (store.get(EntryRow, i) for i in ids) if e is not None and e.text.strip()]
    done = store.ids(JudgmentRow)
    for pattern, steer in sorted(steers.items()):
        item = f"pattern:{pattern}"
        todo = [e for e in entries if f"{JUDGE}:{e.entry_id}:{item}" not in done]
        if todo:
            _project(store, writer, item, steer, todo, tick)


def _project(
    store: Store, writer: DiaryWriter, item: str, steer: Steer, todo: list[EntryRow], tick: Tick
) -> None:
    model = writer.model
    contexts = {
        d: entry_messages(writer.cards[d], writer.template, [], [])
        for d in sorted({e.diarist for e in todo})
    }
    identity = {
        **writer.identity(),
        "measure": JUDGE,
        "method": METHOD,
        "vector_sha256": steer.vector.content_sha256(),
        "layers": list(steer.layers),
    }

    def compute(indices: list[int]) -> list[dict[str, Any]]:
        return [
            project(
                model,
                model.chat_ids(contexts[todo[i].diarist]),
                model.encode(todo[i].text),
                steer.vector,
                steer.layers,
            ).record()
            for i in indices
        ]

    store.cached_calls(
        "projection",
        model.spec,
        identity,
        [
            {"context": contexts[e.diarist], "text": e.text, "template": writer.template.sha256}
            for e in todo
        ],
        compute,
        rows=lambda i, result, key: (_row(todo[i], item, result, key, steer),),
        batch_size=writer.local.batch_size,  # the design's [diarist_model] local settings
        done=tick,
    )


def _row(entry: EntryRow, item: str, result: Mapping[str, Any], key: str, steer: Steer) -> Any:
    return JudgmentRow(
        judgment_id=f"{JUDGE}:{entry.entry_id}:{item}",
        target_kind="entry",
        target_id=entry.entry_id,
        judge=JUDGE,
        item=item,
        value=float(result["value"]),
        coverage=1.0,
        readable=True,
        template=f"{JUDGE}@1:{steer.vector.content_sha256()[:12]}",
        call_key=key,
    )


# --------------------------------------------------------------------------- report section
def section(steering: pd.DataFrame, agreement: pd.DataFrame, judge: str = JUDGE) -> list[str]:
    """Markdown parts of the section; none when the run has no projection scores."""
    steer = steering[steering["judge"] == judge] if len(steering) else steering
    if steer.empty:
        return []
    mine = agreement[
        ((agreement["judge_a"] == judge) | (agreement["judge_b"] == judge))
        & agreement["score"].astype(str).str.startswith("pattern")
    ]
    other = mine.assign(
        judge=[
            b if a == judge else a for a, b in zip(mine["judge_a"], mine["judge_b"], strict=True)
        ]
    )
    parts = [
        "## Judge-free pattern measure\n",
        "Each entry read back through the unsteered diarist model: its mean activation over the "
        "entry's tokens at the steering layers, projected on the pattern's direction (in units of "
        "the layer's typical residual norm). It needs no judge; it says whether the text itself "
        f"carries the pattern. It appears as judge `{judge}` in every table.\n",
        md.table(
            steer,
            {"row": "row_id", "profile": "profile", "n": "n_diarists"}
            | {
                "steered − unsteered [95% CI]": lambda r: md.interval(
                    r["estimate"], r["low"], r["high"], 3
                )
            },
        ),
    ]
    if len(other):
        parts += [
            "Correlation with each judge's pattern score, over the entries both read (Pearson with "
            "a cluster-bootstrap interval over diarists):\n",
            md.table(
                other,
                {"row": "row_id", "judge": "judge", "score": "score", "n": "n"}
                | {
                    "Pearson [95% CI]": lambda r: md.interval(
                        r["pearson"], r["pearson_low"], r["pearson_high"], 2
                    )
                }
                | {"Spearman": lambda r: md.number(r["spearman"], 2)},
            ),
        ]
    else:
        parts.append("_No judge's pattern scores overlap enough entries for a correlation._\n")
    return parts
