"""No measured figure is typed by hand in the docs. A measurement — a number of seconds,
minutes, hours or milliseconds, of bytes (MB, GB, GiB), of tokens or prompts per second, or a
speed-up written N× — may stand only where a program wrote it: in a bench's table (between
`<!-- bench:NAME -->` markers, which tests/test_bench_tables.py holds equal to the bench's kept
file) or in a command's output (`<!-- output: ... -->`, held by tests/test_docs_outputs.py).
Settings and defaults are written as code (`timeout_s = 30`), which is left alone, and so are
code blocks; the pages generated from the schemas (designs.md, results-columns.md) are the
code's own words. Percentages are left out: in the docs they are levels and powers a design
sets (95 %, 80 %) and the bands the tests hold coverage to, which the tests check themselves;
the coverage the small-samples bench measured is its table. What the benches printed before
they kept their results is in bench/NOTEBOOK.md, outside the docs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = {"designs.md", "results-columns.md"}
UNIT = r"(?:ms|s|min|minutes?|seconds?|hours?|h|tok/s|tokens/s|prompts/s|GB|GiB|MB|MiB)"
MEASURED = re.compile(
    rf"(?<![\w.])\d+(?:[.,]\d+)*\s?{UNIT}(?![\w/])"  # 4.2 s, 11 min, 3.4 GB, 600 tok/s
    r"|(?<![\w.])\d+(?:\.\d+)?×(?!\s*\d)"  # 12.9× (not 9 × 32, a product)
)


def typed_figures(text: str) -> list[str]:
    """The measured figures a page states outside what programs wrote and outside code."""
    prose = re.sub(r"<!-- bench:([a-z_]+) -->.*?<!-- /bench:\1 -->", "", text, flags=re.S)
    prose = re.sub(r"<!-- output: [^>]*-->\s*```.*?```", "", prose, flags=re.S)
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    prose = re.sub(r"`[^`]*`", "", prose)
    return [m.group().replace("\n", " ") for m in MEASURED.finditer(prose)]


def test_no_measured_figure_is_typed_in_the_docs():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    typed = {
        page.name: found
        for page in pages
        if page.name not in GENERATED and (found := typed_figures(page.read_text(encoding="utf-8")))
    }
    assert typed == {}, "measured figures typed by hand; show a bench's table instead"


def test_the_check_sees_a_typed_figure_and_passes_what_programs_wrote():
    page = (
        "The demo took 11 min 56 s, bounded reads ran 12.9× the top-20 read and the store held "
        "3.4 GB.\n\n<!-- bench:diary -->\n| wall s |\n|---|\n| 716 s |\n<!-- /bench:diary -->\n\n"
        "<!-- output: diarylab plan X -->\n```\n0.34 GPU-hours, 4.2 s\n```\n\n"
        "```sh\nsleep 5 s\n```\nSet `timeout_s = 30 s`; 9 × 32 = 288 pairs.\n"
    )
    assert typed_figures(page) == ["11 min", "56 s", "12.9×", "3.4 GB"]
