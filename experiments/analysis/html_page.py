"""The browsable report: DIR/report/index.html beside findings.md, one file that opens from disk
(no server, no network). It holds findings.md converted to HTML (experiments/analysis/
html_markdown.py), with the plots referenced relatively, and a conversation viewer: the texts
and their scores embedded as JSON in a `<script type="application/json">` block, drawn by a small
hand-written script (report_viewer.js) that only ever sets text with textContent, so
model-written text shows as text and never runs.

Each kind says what its viewer shows (experiments/kinds/<kind>/html.py) in the records below:
groups of columns side by side (a steered conversation beside its unsteered twin and the
fixed-reply baseline; two friends' letters; one benchmark conversation's replies), steps down the
page, and the texts with every judge's reading."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from diarylab.experiments.analysis.html_markdown import to_html
from diarylab.experiments.engine.store import Store

HERE = Path(__file__).parent
PAGE = "index.html"


@dataclass(frozen=True)
class Score:
    """One judge's reading of a text: a 0–100 score, or P(yes) / P(met) for a yes/no question.
    value is None when unreadable; bound: the certified interval on a reading that stopped
    early; answer: what the judge wrote, where it wrote one (a grader's explanation); scale:
    "score" (0–100) or "probability"."""

    judge: str
    item: str
    value: float | None
    coverage: float | None
    readable: bool
    bound: tuple[float, float] | None = None
    answer: str | None = None
    scale: str = "score"


@dataclass(frozen=True)
class Text:
    """A text the viewer shows: an entry, a reply, a letter, a benchmark conversation."""

    id: str
    kind: str
    label: str
    text: str
    scores: tuple[Score, ...] = ()
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Column:
    """One conversation in a group: step ("1".."4") -> the ids of the texts at that step."""

    label: str
    steps: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Group:
    """What is compared side by side; facets are the values the filters select on (several
    where a group has several: the two writers of a letter exchange)."""

    id: str
    title: str
    facets: Mapping[str, str | tuple[str, ...]]
    columns: tuple[Column, ...]
    lead: tuple[str, ...] = ()  # texts shown above the columns (a benchmark conversation)


@dataclass(frozen=True)
class Viewer:
    """Everything the page's script draws. facets: (key, label) of each filter; step_facet:
    the filter that picks steps inside a group (the entry number) rather than groups."""

    title: str
    facets: tuple[tuple[str, str], ...]
    groups: tuple[Group, ...]
    texts: Mapping[str, Text]
    rows: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    step_facet: str | None = None
    step_label: str = "step"


def rows_from_sources(sources: pd.DataFrame) -> dict[str, dict[str, object]]:
    """sources.csv as the page's row map: row id -> its table and the store ids behind it."""
    return {
        str(r["row_id"]): {"table": str(r["table"]), "ids": str(r["ids"]).split()}
        for _, r in sources.fillna("").iterrows()
    }


def json_block(data: object) -> str:
    """JSON safe inside a script element: '<', '>' and '&' as \\u escapes, so no text (a
    model writing '</script>') can end the block early."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# Score fields the page reads as absent when missing: left out when empty, as most are.
OPTIONAL = frozenset({"answer", "bound"})


def _plain(viewer: Viewer) -> dict[str, object]:
    """The viewer as JSON-ready data (NaN, which JSON lacks, as null). Floats keep 6
    significant digits (the page shows at most 3 decimals) and empty optional score fields
    are left out: at paper size the readings were two thirds of a 6.5 MB page."""

    def clean(value: object) -> object:
        if isinstance(value, float):
            return None if value != value else float(f"{value:.6g}")
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items() if not (k in OPTIONAL and v is None)}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    data = asdict(viewer)
    data["texts"] = {k: asdict(v) for k, v in viewer.texts.items()}
    return clean(data)  # type: ignore[return-value]


def page_head(title: str, style: str) -> str:
    """The opening of a self-contained page, up to <body>: its title (escaped) and its whole
    style inline (the report page, the rating sheets)."""
    from html import escape

    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>
{style}</style>
</head>
<body>
"""


def page(findings_md: str, viewer: Viewer) -> str:
    """The whole index.html."""
    from html import escape

    script = (HERE / "report_viewer.js").read_text(encoding="utf-8")
    style = (HERE / "report_viewer.css").read_text(encoding="utf-8")
    findings = lead_with_findings(to_html(findings_md, viewer.rows.keys()))
    title = escape(viewer.title)
    return (
        page_head(viewer.title, style)
        + f"""\
<nav><strong>{title}</strong> <a href="#findings">findings</a> <a href="#viewer">texts</a></nav>
<section id="row-panel" hidden></section>
<section id="findings">
{findings}
</section>
<section id="viewer">
<h2>Texts</h2>
<form id="filters"></form>
<p id="count"></p>
<div id="groups"></div>
</section>
<script type="application/json" id="lab-data">{json_block(_plain(viewer))}</script>
<script>
{script}</script>
</body>
</html>
"""
    )


# The page opens on what was found: the preregistered verdicts, then the exploratory results,
# then the rest of findings.md (manifest, data, judge readings, calls) in its own order.
LEADING = ("Hypotheses", "Did steering work", "Primary outcome", "Leaderboard")


def lead_with_findings(findings_html: str) -> str:
    """findings.md's sections reordered for the page: the title, the verdicts, the
    exploratory results, then everything else as it was."""
    parts = findings_html.split("<h2 ")
    head, sections = parts[0], ["<h2 " + p for p in parts[1:]]

    def heading(section: str) -> str:
        return section.split(">", 1)[1].split("</h2>", 1)[0]

    def rank(section: str) -> int:
        text = heading(section)
        if text.startswith(LEADING[0]):
            return 0
        if any(text.startswith(word) for word in LEADING[1:]) or "exploratory" in text:
            return 1
        return 2

    ordered = sorted(sections, key=rank)  # stable: each group keeps findings.md's order
    return head + "".join(ordered)


def write_page(folder: Path, findings_md: str, viewer: Viewer) -> Path:
    """Write folder/index.html (folder: the report folder being made, findings.md's)."""
    path = Path(folder) / PAGE
    path.write_text(page(findings_md, viewer), encoding="utf-8")
    return path


def readings_of(
    frame: pd.DataFrame,
    target: str,
    value: str,
    item: str,
    bounds: Mapping[tuple[str, str, str], tuple[float, float]],
    scale: str = "score",
) -> dict[str, list[Score]]:
    """target id -> its Scores, from one analysis table (one row per text × judge × item).
    bounds: (judge, target id, item) -> the certified interval, where the store has one."""
    out: dict[str, list[Score]] = {}
    seen: set[tuple[str, str, str]] = set()
    columns = [frame[c] for c in (target, "judge", item, value, "coverage", "readable")]
    for tid, judge, what, v, coverage, ok in zip(*columns, strict=True):
        key = (str(judge), str(tid), str(what))
        if key in seen:
            continue  # the shared first entry is listed once per chatbot
        seen.add(key)
        readable = bool(ok)
        out.setdefault(str(tid), []).append(
            Score(
                judge=str(judge),
                item=str(what),
                value=float(v) if readable and v == v else None,
                coverage=None if coverage is None or coverage != coverage else float(coverage),
                readable=readable,
                bound=bounds.get(key),
                # The projection is in units of residual norm (about 0.1), not 0-100 points.
                scale="projection" if str(judge) == "projection" else scale,
            )
        )
    return out


def flags_by_target(flags: pd.DataFrame, targets: Sequence[str]) -> dict[str, list[str]]:
    """target id -> its flags ('truncated', 'refusal', 'unreadable: judge item'): a flag on a
    judgment (its id is 'judge:target:item') is shown on the text it judged."""
    wanted = set(targets)
    out: dict[str, list[str]] = {}
    for kind, where in zip(flags["kind"].astype(str), flags["where"].astype(str), strict=True):
        if where in wanted:
            out.setdefault(where, []).append(kind)
            continue
        parts = where.split(":", 2)  # ids hold no ':'; an item may ("pattern:social_isolation")
        if len(parts) == 3 and parts[1] in wanted:
            out.setdefault(parts[1], []).append(f"{kind}: {parts[0]} {parts[2]}")
    return out


def judgment_bounds(store: Store) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(judge, target id, item) -> the certified interval on E[n] its stored record holds
    (rubric/judging/bound.py), for the readings that have one. Read inside SQLite (the store's
    with_call_fields): a
    large run's per-node records are never parsed in Python."""
    rows = store.with_call_fields(
        "judgments",
        ("judge", "target_id", "item"),
        ["$.bound.mean[0]", "$.bound.mean[1]"],
        present="$.bound.mean",
    )
    return {(str(j), str(t), str(i)): (float(lo), float(hi)) for j, t, i, _, lo, hi in rows}
