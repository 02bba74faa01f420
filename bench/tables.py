"""A bench's last results, kept as a file in the repository and shown in the docs.

A bench calls `keep_results` with its tables (lists of rows): they are written to
bench/results/NAME.json with the date, the machine and the commit they were measured at. Then
`write_docs_block` renders them as Markdown tables into a docs page, between the markers
`<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, so a figure on the page is always one a
bench printed. tests/test_bench_tables.py holds every such block equal to its file."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOCS = ROOT / "docs"


def _commit() -> str:
    def git(*args: str) -> str:
        found = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    # What a bench writes (its results, the docs) does not make the code it measured dirty.
    changed = git("status", "--porcelain", "-uno", "--", ".", ":!docs", ":!bench/results")
    return commit + (" (with uncommitted changes)" if changed else "")


def _machine() -> str:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores, {model or platform.processor() or platform.machine()}"


def keep_results(
    name: str,
    settings: dict[str, Any],
    tables: dict[str, list[dict[str, Any]]],
    measured: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write bench/results/NAME.json: the tables with when, where and at which commit.
    `measured` (date, machine, commit) names another run than this one: a bench's own output
    file from a machine this one cannot reach (a GPU), read back into its tables."""
    kept = {
        "bench": f"bench/{name}.py",
        "date": dt.date.today().isoformat(),
        "machine": _machine(),
        "commit": _commit(),
        **(measured or {}),
        "settings": settings,
        "tables": tables,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(
        json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return kept


def read_results(name: str) -> dict[str, Any]:
    """A bench's kept results."""
    loaded: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "never"
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"  # a median of whole counts
        if 0 < abs(value) < 0.001:
            return f"{value:.1e}"  # a gap of 1.5e-5 is not 0.000
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# A table this wide with this few rows reads better turned: one row per figure.
TURN_COLUMNS, TURN_ROWS = 9, 4


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """Rows (dicts with the same keys) as a Markdown table; a wide one of a few rows turned,
    its first column's values heading the columns and each other column a row."""
    if not rows:
        return ""
    keys = list(rows[0])
    if len(keys) > TURN_COLUMNS and len(rows) <= TURN_ROWS:
        # the first column that tells the rows apart heads the turned table's columns
        head = next(k for k in keys if len({_cell(r.get(k)) for r in rows}) == len(rows))
        rows = [
            {"figure": key, **{f"{head} {_cell(row[head])}": row.get(key) for row in rows}}
            for key in keys
            if key != head
        ]
        keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(row.get(k)) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


def render(kept: dict[str, Any]) -> str:
    """The docs block of a bench's kept results: one table each, under its name, then where
    and when they were measured."""
    parts = []
    for table, rows in kept["tables"].items():
        parts.append(f"**{table.replace('_', ' ')}**\n\n{markdown_table(rows)}\n")
    settings = ", ".join(f"{k} {v}" for k, v in kept["settings"].items())
    parts.append(
        f"Written by `{kept['bench']}` ({settings}) on {kept['date']}, {kept['machine']}, "
        f"commit {kept['commit']}.\n"
    )
    return "\n".join(parts)


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def docs_blocks(text: str) -> dict[str, str]:
    """Every bench block a page holds: name -> the text between its markers."""
    found = {}
    for match in re.finditer(r"<!-- bench:([a-z_]+) -->\n(.*?)<!-- /bench:\1 -->", text, re.S):
        found[match.group(1)] = match.group(2)
    return found


def write_docs_block(page: str, name: str, kept: dict[str, Any]) -> None:
    """Replace the block NAME of docs/PAGE with the rendering of `kept`."""
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    start, end = _markers(name)
    if start not in text or end not in text:
        raise SystemExit(f"{path}: no {start} ... {end} block to write into")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{render(kept)}{end}{tail}", encoding="utf-8")
