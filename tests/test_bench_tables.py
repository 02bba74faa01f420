"""A bench's figures on a docs page are the ones it kept: every `<!-- bench:NAME -->` block of
docs/*.md equals the rendering of bench/results/NAME.json (written by the same bench run), so a
figure there is never typed by hand or left behind by a re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.tables import docs_blocks, markdown_table, read_results, render

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _blocks() -> list[tuple[str, str, str]]:
    return [
        (page.name, name, text)
        for page in sorted(DOCS.glob("*.md"))
        for name, text in docs_blocks(page.read_text(encoding="utf-8")).items()
    ]


def test_the_statistics_page_shows_the_small_samples_bench():
    assert ("statistics.md", "small_samples") in {(page, name) for page, name, _ in _blocks()}


@pytest.mark.parametrize(("page", "name", "text"), _blocks(), ids=lambda v: str(v)[:30])
def test_each_docs_block_is_its_bench_file(page, name, text):
    kept = read_results(name)
    assert kept["date"] and kept["machine"] and kept["commit"]
    assert text == render(kept), f"docs/{page}: re-run bench/{name}.py to rewrite its block"


def test_a_table_renders_every_row_and_marks_what_is_not_a_number():
    table = markdown_table([{"a": 0.12345, "b": float("nan")}, {"a": 2500.0, "b": float("inf")}])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 0.123 | — |", "| 2,500 | never |"]


def test_a_wide_table_of_few_rows_is_turned_and_keeps_every_figure():
    rows = [{"study": "diary", "cards": c, **{f"f{i}": i * c for i in range(9)}} for c in (8, 16)]
    table = markdown_table(rows).splitlines()
    assert table[0] == "| figure | cards 8 | cards 16 |"  # "study" does not tell them apart
    assert "| study | diary | diary |" in table and "| f3 | 24 | 48 |" in table
    assert len(table) == 2 + 10
    assert markdown_table([{"a": None, "b": 214.0}]).splitlines()[2] == "| — | 214 |"
