"""The manifest as a report shows it: one readable row per part of the run (the design, the
diarist model, each chatbot, judge, profile and data file, the benchmark and its grader), the
package versions on one line. Full hashes and settings stay in manifest.json, which the section
links to; here a hash is its first 8 hex digits.

A published folder must not name the machine it ran on: every path a manifest holds is shown
relative to the run folder when it lies inside it, else by its file name only (the hashes, not
the paths, say which file it was)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pandas as pd

from diarylab.experiments.analysis import markdown as md

COLUMNS = ("part", "value")
_HASH = re.compile(r"\b[0-9a-f]{64}\b")
NONE = "—"


def short(sha: Any) -> str:
    return f"{str(sha)[:8]}…" if sha else NONE


def is_absolute(text: str) -> bool:
    return PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute()


def shown_path(text: str, folder: Path | None) -> str:
    """A path as a published report may name it: relative inside the run folder, else its
    name (a path on the machine that ran, or on the reader's, says nothing to anyone else)."""
    if not is_absolute(text):
        return text
    if folder is not None:
        try:
            return Path(text).resolve().relative_to(Path(folder).resolve()).as_posix()
        except ValueError:
            pass
    name = PureWindowsPath(text).name if "\\" in text else PurePosixPath(text).name
    return f"{name} (outside the run folder)"


def scrubbed(value: Any, folder: Path | None) -> Any:
    """`value` with every absolute path shown as shown_path shows it and hashes shortened."""
    if isinstance(value, str):
        return _HASH.sub(lambda m: short(m.group(0)), shown_path(value, folder))
    if isinstance(value, Mapping):
        return {str(k): scrubbed(v, folder) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(v, folder) for v in value]
    return value


def compact(value: Any, folder: Path | None) -> str:
    """Any other manifest value on one line: `key value, …` with paths and hashes scrubbed."""
    value = scrubbed(value, folder)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {compact(v, folder)}" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return NONE if value is None else str(value)


def model_line(info: Mapping[str, Any], folder: Path | None) -> str:
    """'smollm2 (float32, 30 layers, revision —, tokenizer sha256 450fd25d…)'."""
    spec = shown_path(str(info.get("spec", "?")), folder)
    return (
        f"{spec} ({info.get('dtype', '?')}, {info.get('num_layers', '?')} layers, revision "
        f"{info.get('revision') or NONE}, tokenizer sha256 {short(info.get('tokenizer_sha256'))})"
    )


def _design(m: Mapping[str, Any], folder: Path | None) -> list[tuple[str, str]]:
    d = m.get("design") or {}
    origin = d.get("origin") or (Path(str(d["file"])).name if d.get("file") else None)
    came = f", from `{origin}`" if origin and origin != "design.toml" else ""
    return [
        (
            "design",
            f"{d.get('name', '?')} ({d.get('kind', '?')}, version {d.get('version') or NONE}, "
            f"sha256 {short(d.get('sha256'))}): the locked copy `design.toml`{came}",
        )
    ]


def _diarist(m: Mapping[str, Any], folder: Path | None) -> list[tuple[str, str]]:
    rows = []
    if m.get("diarist_model"):
        rows.append(("diarist model", model_line(m["diarist_model"], folder)))
    settings = m.get("diarist_settings") or {}
    if settings:
        gen = compact(settings.get("generation") or {}, folder)
        rows.append(("diarist generation", f"engine {settings.get('engine', '?')}; {gen}"))
    return rows


def _chatbot(identity: Mapping[str, Any], folder: Path | None) -> str:
    kind = identity.get("kind", "?")
    if kind == "fixed":
        return f'fixed reply "{identity.get("text", "")}"'
    if "num_layers" in identity:
        return f"{kind}: {model_line(identity, folder)}"
    rest = {k: v for k, v in identity.items() if k != "kind"}
    return f"{kind}: {compact(rest, folder)}"


def _judge(table: Mapping[str, Any], folder: Path | None) -> str:
    rest = {k: v for k, v in table.items() if k not in ("id", "kind", "model", "local")}
    model = shown_path(str(table.get("model", "?")), folder)
    return f"{table.get('kind', '?')}: {model}" + (f"; {compact(rest, folder)}" if rest else "")


def _profile(entry: Mapping[str, Any] | None, folder: Path | None) -> str:
    if not entry:
        return "unsteered"
    s = entry.get("steer") or {}
    chosen = (entry.get("calibration") or {}).get("chosen_by")
    return (
        f"{s.get('pattern', '?')}: layers {s.get('layers')}, strength {s.get('strength')} "
        f"({s.get('scale', '?')}), positions {s.get('positions', '?')}, vector sha256 "
        f"{short(s.get('vector_sha256'))}; file {shown_path(str(entry.get('file')), folder)}"
        + (f"; {chosen}" if chosen else "")
    )


def _benchmark(b: Mapping[str, Any], folder: Path | None) -> str:
    sample = b.get("sample") or {}
    name = b.get("file") or (Path(str(b["path"])).name if b.get("path") else "?")
    return (
        f"{b.get('format', '?')} file `{name}` (sha256 {short(sample.get('data_sha256'))}), "
        f"{sample.get('size', '?')} conversations sampled with seed {sample.get('seed', '?')} "
        f"(their ids in manifest.json), scoring {b.get('convention', '?')}"
    )


def _grader(g: Mapping[str, Any], folder: Path | None) -> str:
    who = "user-supplied" if g.get("user_supplied") else "the lab's"
    return (
        f"{g.get('id', '?')} version {g.get('version', '?')} ({who}, sha256 "
        f"{short(g.get('sha256'))}), generation {compact(g.get('generation') or {}, folder)}"
    )


_EACH: dict[str, tuple[str, Callable[[Any, Path | None], str]]] = {
    "chatbots": ("chatbot", _chatbot),
    "judges": ("judge", _judge),
    "profiles": ("profile", _profile),
    "served_judges": ("served judge", compact),
}
_ONE: dict[str, tuple[str, Callable[[Any, Path | None], str]]] = {
    "benchmark": ("benchmark", _benchmark),
    "grader_template": ("grader template", _grader),
}
# Shown elsewhere in the rows (or, like kind, already in the design's row).
_DONE = {"design", "diarist_model", "diarist_settings", "kind", "packages", "python"}
_DONE |= {"platform", "git_commit", "data_files"}


def manifest_table(manifest: Mapping[str, Any], folder: Path | None) -> pd.DataFrame:
    """One row per part of the run, in reading order (see the module docstring)."""
    rows = [*_design(manifest, folder), *_diarist(manifest, folder)]
    for key, (label, show) in _EACH.items():
        for ident, value in sorted((manifest.get(key) or {}).items()):
            rows.append((f"{label} {ident}", show(value, folder)))
    for key, (label, show) in _ONE.items():
        if manifest.get(key):
            rows.append((label, show(manifest[key], folder)))
    for name, sha in sorted((manifest.get("data_files") or {}).items()):
        rows.append((f"data file {name}", f"sha256 {short(sha)}"))
    for key, value in sorted(manifest.items()):
        if key not in _DONE and key not in _EACH and key not in _ONE:
            rows.append((key, compact(value, folder)))
    rows.append(("git commit", str(manifest.get("git_commit") or NONE)[:12]))
    rows.append(("python", f"{manifest.get('python', '?')} on {manifest.get('platform', '?')}"))
    packages = manifest.get("packages") or {}
    rows.append(
        ("packages", ", ".join(f"{k} {v or 'not installed'}" for k, v in sorted(packages.items())))
    )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def section(
    manifest: Mapping[str, Any], folder: Path | None, link: str = "../manifest.json"
) -> str:
    """The report's "## Manifest" section (Markdown)."""
    if not manifest:
        return "## Manifest\n\n_empty manifest_\n"
    frame = manifest_table(manifest, folder)
    return (
        "## Manifest\n\n"
        f"What this run was made with; full hashes and every setting are in "
        f"[manifest.json]({link}).\n\n" + md.table(frame, {"part": "part", "value": "value"})
    )
