"""Writing a file so that a reader never sees half of it: the engine's run folders, the
inputs they lock and a pilot's results all go through here; and reading back a small JSON
record the lab keeps for itself (a progress record, a lock's holder, a vocabulary's facts)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write to a temporary sibling and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.replace(tmp, path)


def read_kept_json(path: Path) -> dict[str, Any] | None:
    """A JSON object the lab kept in `path`; None where there is none to read: no file, an
    empty or unreadable one, or one that holds something else. What the lab keeps this way can
    always be made again, so a bad file is passed over rather than an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
