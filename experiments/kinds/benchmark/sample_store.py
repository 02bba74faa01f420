"""The sampled conversations kept in the run's store, and the check that a resumed run samples
the same file. A run folder records its benchmark file by name and sha256 and the sample by its
ids (manifest.json), never copies the file: the data may not be redistributable. What the run
read from it is stored (the chatbots' requests hold the conversations already; this table holds
them with their criteria), so a report of a moved folder reads the store, and a reader with their
own copy of the file regenerates the same sample from the hash, seed and ids."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.data import Benchmark, Conversation, Criterion
from diarylab.experiments.kinds.benchmark.rows import BenchConversationRow
from diarylab.experiments.kinds.benchmark.sample import Sample
from diarylab.foundation.errors import LabError


def _record(c: Conversation) -> str:
    return json.dumps(
        {
            "messages": [list(m) for m in c.messages],
            "criteria": [
                {"id": k.id, "text": k.text, "points": k.points, "axis": k.axis, "tags": k.tags}
                for k in c.criteria
            ],
            "stratum": c.stratum,
            "language": c.language,
            "tags": list(c.tags),
        },
        sort_keys=True,
    )


def _conversation(ident: str, record: str) -> Conversation:
    d: dict[str, Any] = json.loads(record)
    criteria = tuple(
        Criterion(k["id"], k["text"], float(k["points"]), k["axis"], tuple(k["tags"]))
        for k in d["criteria"]
    )
    messages = tuple((str(r), str(t)) for r, t in d["messages"])
    return Conversation(ident, messages, criteria, d["stratum"], d["language"], tuple(d["tags"]))


def keep_sample(store: Store, conversations: Sequence[Conversation]) -> None:
    """Store the sampled conversations (idempotent: a resume finds them stored)."""
    store.put_rows(*(BenchConversationRow(c.id, _record(c)) for c in conversations))


def stored_sample(store: Store, ids: Sequence[str]) -> list[Conversation] | None:
    """The sample's conversations in the manifest's order, or None when the store lacks any
    of them (a folder made before they were stored reads its data file instead)."""
    if "bench_conversations" not in store.tables():
        return None
    found = dict(store.select("bench_conversations", ("conversation_id", "record")))
    if not ids or any(i not in found for i in ids):
        return None
    return [_conversation(i, found[i]) for i in ids]


def check_same_data(
    folder: Path, recorded: dict[str, Any], bench: Benchmark, sample: Sample
) -> None:
    """A resume samples the file the run began with: same sha256, so the same ids."""
    first = (recorded.get("sample") or {}).get("data_sha256")
    name = recorded.get("file") or Path(str(recorded.get("path", "the data file"))).name
    if first and first != bench.sha256:
        raise LabError(
            f"this benchmark file is not the one the run sampled (its sha256 {bench.sha256[:12]}…,"
            f" the run's {first[:12]}…)",
            where=f"{bench.path.name} (benchmark.data of the design; run folder {folder.name})",
            fix=f"point benchmark.data at your copy of {name} with sha256 {first} (the design "
            "file's folder is where a relative path starts), or run into a new folder (--out)",
        )
    ids = (recorded.get("sample") or {}).get("ids")
    if first and ids is not None and list(ids) != list(sample.ids):
        raise LabError(
            "the same file gives another sample than the run's (the sampling rule changed?)",
            where=f"{folder.name}/manifest.json benchmark.sample.ids",
            fix="resume with the lab version that made the folder (manifest.json's git_commit)",
        )
