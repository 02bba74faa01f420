"""One writer per run folder: an OS-level lock (flock) on RUN_FOLDER/.lock, held for the whole
run. The kernel releases it when the process dies, so a lock file left by a killed run is
recognised as stale by simply being lockable again; the file says who held it last."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from diarylab.foundation.atomic import read_kept_json
from diarylab.foundation.errors import LabError

LOCK_NAME = ".lock"


def _holder(path: Path) -> dict[str, Any]:
    return read_kept_json(path) or {}


def refuse_if_held(folder: Path) -> None:
    """Raise the in-use error when another process holds the folder's lock (creates nothing)."""
    path = folder / LOCK_NAME
    if not path.is_file():
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _in_use(folder, _holder(path)) from None
    finally:
        os.close(fd)


def is_held(folder: Path) -> bool:
    """Whether a run holds the folder's lock now (a run in progress)."""
    try:
        refuse_if_held(folder)
    except LabError:
        return True
    return False


def _in_use(folder: Path, who: dict[str, Any]) -> LabError:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(who.get("since", 0)))
    return LabError(
        f"another run is writing to this folder (pid {who.get('pid', '?')} on "
        f"{who.get('host', '?')}, since {since})",
        where=str(folder),
        fix="wait for it to finish, or stop it; a killed run's lock is released by itself",
    )


@contextmanager
def run_lock(folder: Path) -> Iterator[dict[str, Any]]:
    """Hold the folder's lock; yields what the previous holder wrote (empty if none), so the
    caller can say that a killed run is being resumed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _in_use(folder, _holder(path)) from None
        previous = _holder(path)
        mine = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(mine).encode(), 0)
        yield previous
    finally:
        os.close(fd)  # closing releases the flock
