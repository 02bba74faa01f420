"""Designs: the preregistration file that fixes everything a run does.

A design is read once, validated completely (every mistake is one LabError naming the file, the
field and the fix) and frozen. Its sha256 is the hash of the file's bytes, written into every
record of a run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.analysis.hypotheses import Hypothesis, parse_hypotheses
from foundation.datafiles import field, file_sha256, load_toml, string_list, table
from foundation.errors import LabError

KINDS = ("diary",)
CHATBOT_KINDS = ("fixed", "local", "litellm")
JUDGE_KINDS = ("local", "litellm", "openai-compatible")
ENTRY_SCORES = ("pattern", "coherence", "realism")


@dataclass(frozen=True)
class ModelSettings:
    model: str
    max_new_tokens: int
    temperature: float
    top_p: float
    dtype: str | None
    batch_size: int


@dataclass(frozen=True)
class ChatbotSpec:
    id: str
    kind: str
    model: str | None = None
    text: str | None = None
    system: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_new_tokens: int = 300
    temperature: float = 0.7
    top_p: float = 1.0
    concurrency: int = 4
    timeout_s: float = 120.0
    max_retries: int = 4


@dataclass(frozen=True)
class JudgeSpec:
    id: str
    kind: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    tokenizer: str | None = None  # the judge's tokenizer, so a vLLM server can be read exactly
    concurrency: int = 4

    @property
    def spec(self) -> str:
        """The judge name rubric.judges.make_judge understands."""
        return self.model if self.kind == "local" else f"litellm:{self.model}"


@dataclass(frozen=True)
class Design:
    path: Path
    sha256: str
    raw: dict[str, Any]
    name: str
    kind: str
    seed: int
    entries: int
    coverage_floor: float
    diarist_model: ModelSettings
    diarists: tuple[str, ...]
    profiles: tuple[str, ...]  # "unsteered" or profile file paths, resolved against the design
    chatbots: tuple[ChatbotSpec, ...]
    judges: tuple[JudgeSpec, ...]
    entry_scores: tuple[str, ...]
    score_patterns: tuple[str, ...]  # which patterns every entry gets a pattern score for
    resamples: int
    baseline_chatbot: str
    hypotheses: tuple[Hypothesis, ...]

    def chatbot(self, chatbot_id: str) -> ChatbotSpec:
        return next(c for c in self.chatbots if c.id == chatbot_id)


def load_design(path: Path | str) -> Design:
    path = Path(path)
    raw = load_toml(path)
    where = str(path)
    head = table(raw, "design", f"{where} [design]")
    kind = field(head, "kind", str, f"{where} [design]", "diary")
    if kind not in KINDS:
        raise LabError(
            f"unknown kind {kind!r}",
            where=f"{where} [design].kind",
            fix=f"use one of {', '.join(KINDS)} (other kinds come with their experiments)",
        )
    entries = field(head, "entries", int, f"{where} [design]")
    if entries < 1:
        raise LabError(
            f"entries must be a positive integer, got {entries}",
            where=f"{where} [design].entries",
            fix="set entries = 4",
        )
    floor = field(head, "coverage_floor", float, f"{where} [design]", 0.5)
    if not 0 <= floor <= 1:
        raise LabError("coverage_floor must be in [0, 1]", where=f"{where} [design].coverage_floor")
    cast = table(raw, "cast", f"{where} [cast]")
    chatbots = _chatbots(raw, where)
    judges = _judges(raw, where)
    analysis = raw.get("analysis", {})
    baseline = field(analysis, "baseline_chatbot", str, f"{where} [analysis]", "thanks")
    design = Design(
        path=path,
        sha256=file_sha256(path),
        raw=raw,
        name=_slug(field(head, "name", str, f"{where} [design]"), f"{where} [design].name"),
        kind=kind,
        seed=field(head, "seed", int, f"{where} [design]"),
        entries=entries,
        coverage_floor=floor,
        diarist_model=_model_settings(
            table(raw, "diarist_model", where), f"{where} [diarist_model]"
        ),
        diarists=_diarists(cast, f"{where} [cast]"),
        profiles=tuple(string_list(cast, "profiles", f"{where} [cast]", min_items=1)),
        chatbots=chatbots,
        judges=judges,
        entry_scores=_entry_scores(raw.get("scores", {}), f"{where} [scores]"),
        score_patterns=_score_patterns(raw.get("scores", {}), f"{where} [scores]"),
        resamples=field(analysis, "resamples", int, f"{where} [analysis]", 2000),
        baseline_chatbot=baseline,
        hypotheses=_hypotheses(raw, where, {j.id for j in judges}),
    )
    if baseline not in {c.id for c in chatbots}:
        raise LabError(
            f"baseline chatbot {baseline!r} is not among the chatbots",
            where=f"{where} [analysis].baseline_chatbot",
            fix="add a fixed-reply chatbot with that id or name an existing one",
        )
    return design


def _slug(value: str, where: str) -> str:
    if not value or not all(ch.isalnum() or ch in "-_." for ch in value):
        raise LabError(f"{value!r} may only hold letters, digits, '-', '_' and '.'", where=where)
    return value


def _model_settings(data: dict[str, Any], where: str) -> ModelSettings:
    extra = set(data) - set(ModelSettings.__dataclass_fields__)
    if extra:
        raise LabError(
            f"unknown field(s) {', '.join(sorted(extra))}",
            where=where,
            fix=f"use only {', '.join(ModelSettings.__dataclass_fields__)}",
        )
    return ModelSettings(
        model=field(data, "model", str, where),
        max_new_tokens=field(data, "max_new_tokens", int, where, 300),
        temperature=field(data, "temperature", float, where, 0.9),
        top_p=field(data, "top_p", float, where, 1.0),
        dtype=field(data, "dtype", str, where, None),
        batch_size=field(data, "batch_size", int, where, 8),
    )


def _choose(
    data: dict[str, Any], key: str, known: list[str], noun: str, where: str, default: Any = None
) -> tuple[str, ...]:
    """A list of known ids, or "all" for every known one; unknown or repeated ids refused."""
    value = data.get(key, default)
    if value == "all":
        return tuple(known)
    ids = string_list({key: value} if value is not None else {}, key, where, min_items=1)
    for i in ids:
        if i not in known:
            raise LabError(
                f"unknown {noun} {i!r}",
                where=f"{where}.{key}",
                fix=f'choose from {", ".join(known)} or write "all"',
            )
    if len(set(ids)) != len(ids):
        raise LabError(f"a {noun} is listed twice", where=f"{where}.{key}")
    return tuple(ids)


def _diarists(cast: dict[str, Any], where: str) -> tuple[str, ...]:
    from diarists.cards import available_cards

    return _choose(cast, "diarists", available_cards(), "diarist", where)


def _unique_ids(items: list[dict[str, Any]], where: str) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        ident = field(item, "id", str, f"{where}[{i}]")
        _slug(ident, f"{where}[{i}].id")
        if ident in seen:
            raise LabError(f"id {ident!r} is used twice", where=where, fix="give each a unique id")
        seen.add(ident)


_TYPES = {"str": str, "int": int, "float": float}


def _specs(
    raw: dict[str, Any], name: str, kinds: tuple[str, ...], cls: type[Any], where: str
) -> list[tuple[dict[str, Any], str]]:
    """The [[name]] tables, each checked: unique id, known kind, no unknown field, every field
    of the type its spec declares. Returns (typed values, where) pairs."""
    items = raw.get(name)
    if not isinstance(items, list) or not items:
        raise LabError(f"no [[{name}]]", where=where, fix=f"add at least one [[{name}]] table")
    _unique_ids(items, f"{where} [[{name}]]")
    out = []
    for i, item in enumerate(items):
        w = f"{where} [[{name}]][{i}] ({item['id']})"
        kind = field(item, "kind", str, w)
        if kind not in kinds:
            raise LabError(
                f"unknown {name[:-1]} kind {kind!r}",
                where=f"{w}.kind",
                fix=f"use one of {', '.join(kinds)}",
            )
        extra = set(item) - set(cls.__dataclass_fields__)
        if extra:
            raise LabError(
                f"unknown field(s) {', '.join(sorted(extra))}",
                where=w,
                fix=f"use only {', '.join(cls.__dataclass_fields__)}",
            )
        values: dict[str, Any] = {}
        for key, spec in cls.__dataclass_fields__.items():
            if key in item:
                kind_name = str(spec.type).split(" | ")[0]
                values[key] = field(item, key, _TYPES[kind_name], w)
        for key in ("max_new_tokens", "concurrency"):
            if key in values and values[key] < 1:
                raise LabError(f"{key} must be ≥ 1", where=f"{w}.{key}")
        out.append((values, w))
    return out


def _chatbots(raw: dict[str, Any], where: str) -> tuple[ChatbotSpec, ...]:
    out = []
    for values, w in _specs(raw, "chatbots", CHATBOT_KINDS, ChatbotSpec, where):
        if values["kind"] == "fixed":
            values.setdefault("text", "Thank you for sharing.")
        else:
            field(values, "model", str, w)
        out.append(ChatbotSpec(**values))
    return tuple(out)


def _judges(raw: dict[str, Any], where: str) -> tuple[JudgeSpec, ...]:
    out = []
    for values, w in _specs(raw, "judges", JUDGE_KINDS, JudgeSpec, where):
        field(values, "model", str, w)
        if values["kind"] == "openai-compatible":
            field(values, "base_url", str, w)
        out.append(JudgeSpec(**values))
    return tuple(out)


def _entry_scores(scores: dict[str, Any], where: str) -> tuple[str, ...]:
    if not scores:
        return ENTRY_SCORES
    names = string_list(scores, "entry", where, min_items=1)
    for n in names:
        if n not in ENTRY_SCORES:
            raise LabError(
                f"unknown entry score {n!r}",
                where=f"{where}.entry",
                fix=f"choose from {', '.join(ENTRY_SCORES)}",
            )
    return tuple(names)


def _score_patterns(scores: dict[str, Any], where: str) -> tuple[str, ...]:
    from diarists.patterns import available_patterns

    return _choose(scores, "patterns", available_patterns(), "pattern", where, default="all")


def _hypotheses(raw: dict[str, Any], where: str, judge_ids: set[str]) -> tuple[Hypothesis, ...]:
    """Parsed at load, so an unsupported contrast is refused before any data exist."""
    hypotheses = parse_hypotheses(raw, where)
    for i, h in enumerate(hypotheses):
        for j in h.judges:
            if j not in judge_ids:
                raise LabError(
                    f"unknown judge {j!r}",
                    where=f"{where} [[hypotheses]] #{i + 1}.judges",
                    fix=f"name one of {', '.join(sorted(judge_ids))}",
                )
    return hypotheses
