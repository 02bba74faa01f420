"""Every command output a docs page shows is the command's output now: a block between
`<!-- output: diarylab ARGS -->` and `<!-- /output -->` holds, in a fenced block, exactly what
`diarylab ARGS` prints. `DIARYLAB_WRITE_DOCS=1` rewrites the blocks instead of comparing (after
a change that moves a figure)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from diarylab.experiments.cli import main

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- output: diarylab (.+?) -->\n(.*?)<!-- /output -->", re.S)


def blocks() -> list[tuple[Path, str]]:
    return [
        (page, match.group(1))
        for page in sorted((ROOT / "docs").glob("*.md"))
        for match in BLOCK.finditer(page.read_text(encoding="utf-8"))
    ]


def printed(args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(shlex.split(args)) == 0
    return f"```text\n{out.getvalue().rstrip()}\n```\n"


def test_the_gpu_page_shows_the_plan_and_the_serve_lines():
    shown = {args for page, args in blocks() if page.name == "gpu-study.md"}
    assert "serve-lines experiments/designs/diary-full.toml" in shown
    assert "plan experiments/designs/diary-full.toml --gpu-only" in shown


@pytest.mark.parametrize(("page", "args"), blocks(), ids=lambda x: str(getattr(x, "name", x)))
def test_a_shown_output_is_the_commands_output(page: Path, args: str, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = page.read_text(encoding="utf-8")
    head = f"<!-- output: diarylab {args} -->\n"
    shown = text.split(head, 1)[1].split("<!-- /output -->", 1)[0]
    want = printed(args)
    if os.environ.get("DIARYLAB_WRITE_DOCS"):
        page.write_text(text.replace(head + shown, head + want), encoding="utf-8")
        return
    assert shown == want, f"{page.name}: run DIARYLAB_WRITE_DOCS=1 pytest {__file__}"
