"""Patterns: a named psychological pattern with the definition a judge reads, the contrast set a
steering vector is extracted from, and held-out prompts for calibration. Data lives in
diarists/patterns/<id>.toml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foundation.datafiles import field, file_sha256, load_toml, string_list, table
from foundation.errors import LabError

PATTERNS_DIR = Path(__file__).parent / "patterns"
MIN_PROMPTS = 20  # per set: fewer makes the mean difference (and the calibration) too noisy


@dataclass(frozen=True)
class Pattern:
    id: str
    version: int
    name: str
    definition: str
    positive_system: str  # a diarist who has the pattern
    negative_system: str  # a healthy diarist, otherwise alike
    eval_system: str  # a plain diarist, for held-out calibration entries
    extraction_prompts: tuple[str, ...]
    heldout_prompts: tuple[str, ...]
    markers: tuple[str, ...]  # for the demo heuristic scorer only; not a judge
    sha256: str
    path: Path


def available_patterns(folder: Path = PATTERNS_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.toml"))


def load_pattern(id_or_path: str | Path, folder: Path = PATTERNS_DIR) -> Pattern:
    """A shipped pattern by id, or any pattern file by path."""
    path = Path(id_or_path)
    if path.suffix != ".toml":
        known = available_patterns(folder)
        if str(id_or_path) not in known:
            raise LabError(
                f"unknown pattern {str(id_or_path)!r}",
                where="pattern",
                fix=f"choose from {', '.join(known)} or give a path to a pattern .toml file",
            )
        path = folder / f"{id_or_path}.toml"
    where = str(path)
    data = load_toml(path)
    head = table(data, "pattern", where)
    contrast = table(data, "contrast", where)
    evaluation = table(data, "evaluation", where)
    prompts = table(data, "prompts", where)
    pattern_id = field(head, "id", str, f"{where} [pattern]")
    if pattern_id != path.stem:
        raise LabError(
            f"pattern id {pattern_id!r} differs from the file name",
            where=f"{where} [pattern] id",
            fix=f"rename the file to {pattern_id}.toml or set id = {path.stem!r}",
        )
    extraction = string_list(prompts, "extraction", f"{where} [prompts]", min_items=MIN_PROMPTS)
    heldout = string_list(prompts, "heldout", f"{where} [prompts]", min_items=MIN_PROMPTS)
    shared = sorted(set(extraction) & set(heldout))
    if shared:
        raise LabError(
            f"{len(shared)} prompt(s) are in both extraction and heldout, e.g. {shared[0]!r}",
            where=f"{where} [prompts]",
            fix="held-out prompts must be new to the vector: remove them from one list",
        )
    heuristic = data.get("heuristic", {})
    markers = string_list(heuristic, "markers", f"{where} [heuristic]") if heuristic else []
    positive = _text(contrast, "positive_system", f"{where} [contrast]")
    negative = _text(contrast, "negative_system", f"{where} [contrast]")
    if positive == negative:
        raise LabError(
            "positive_system and negative_system are the same text",
            where=f"{where} [contrast]",
            fix="the contrast needs a diarist with the pattern and one without",
        )
    return Pattern(
        id=pattern_id,
        version=field(head, "version", int, f"{where} [pattern]"),
        name=_text(head, "name", f"{where} [pattern]"),
        definition=_text(head, "definition", f"{where} [pattern]"),
        positive_system=positive,
        negative_system=negative,
        eval_system=_text(evaluation, "system", f"{where} [evaluation]"),
        extraction_prompts=tuple(extraction),
        heldout_prompts=tuple(heldout),
        markers=tuple(m.lower() for m in markers),
        sha256=file_sha256(path),
        path=path,
    )


def _text(data: dict[str, object], key: str, where: str) -> str:
    value = field(data, key, str, where).strip()
    if not value:
        raise LabError(f"field '{key}' is empty", where=where, fix=f"write the {key} text")
    return value
