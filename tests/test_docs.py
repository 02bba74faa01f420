"""docs/ as the front door: the site builds with strict checking, the design reference is the
schemas (generated, so it cannot drift) and names every field with a description, and every
link in the README and the pages points at a file that exists."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diarylab.experiments.designs.reference import fields, reference_markdown
from diarylab.experiments.kinds import get_kind, kind_names

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#]+)(#[^)]*)?\)")


def test_the_design_reference_is_generated_from_the_schemas():
    assert (DOCS / "designs.md").read_text(encoding="utf-8") == reference_markdown()


@pytest.mark.parametrize("kind", kind_names())
def test_every_design_field_has_a_description(kind):
    schema = get_kind(kind, where="test").schema
    bare = [path for path, _, _, description in fields(schema) if not description.strip()]
    assert bare == [], f"give these fields a description: {bare}"


def test_a_field_without_a_description_is_caught():
    from pydantic import BaseModel, Field

    class Toy(BaseModel):
        said: int = Field(1, description="has one")
        silent: int = 2

    assert [p for p, _, _, d in fields(Toy) if not d] == ["silent"]


def test_every_link_points_at_a_file_that_exists():
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target, _ in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert broken == []


def test_the_site_builds_with_strict_checking(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is a dev dependency (pyproject.toml): make test installs it"
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    site = tmp_path / "site"
    assert (site / "designs.html").is_file() and (site / "gpu-study.html").is_file()
    # opened from disk, every page link names a file (a link to a folder shows its listing)
    for page in (site / f"{md.stem}.html" for md in DOCS.glob("*.md")):
        for href in re.findall(r'href="([^"#:]+)"', page.read_text(encoding="utf-8")):
            target = (page.parent / href).resolve()
            assert not href.endswith("/") and target.exists(), (page.name, href)


RUNNABLE = (
    "design check", "design expand", "design schema", "plan", "status", "export", "report", "rate",
    "serve-lines",
)  # fmt: skip


def doc_commands() -> list[str]:
    """Every `diarylab ...` command line the pages and the README show (comments, optional
    [...] parts and shell redirections dropped)."""
    found = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for line in page.read_text(encoding="utf-8").splitlines():
            line = line.strip().removeprefix("$ ")
            if not line.startswith("diarylab ") or line.endswith("\\"):
                continue
            line = line.split(" #", 1)[0].split(" > ", 1)[0]
            line = re.sub(r"\s*\[[^\]]*\]", "", line).strip()
            if line not in found:
                found.append(line)
    return found


def test_the_commands_the_docs_show_run_where_this_machine_allows(tmp_path, capsys):
    """Those that need no model, server or key: on the shipped designs, and on a copy of the
    shipped example where a page says DIR."""
    from diarylab.experiments.cli import main

    example = tmp_path / "example"
    shutil.copytree(ROOT / "results" / "example", example)
    ran = []
    for line in doc_commands():
        words = line.split()[1:]
        verb = " ".join(words[:2]) if words[0] == "design" else words[0]
        if verb not in RUNNABLE:
            continue
        words = [str(example) if w == "DIR" else w for w in words]
        if any(w.isupper() for w in words):
            continue  # another placeholder (DESIGN, N, F): the page shows a form, not a command
        if "--measure" in words or any(w.startswith("results/diary-full") for w in words):
            continue  # needs the study's servers, or a run folder of the GPU study
        if verb == "design check":
            words.append("--offline")
        if verb == "export":
            words += ["--to", str(tmp_path / "export")]
        words = [str(ROOT / w) if w.startswith("experiments/designs/") else w for w in words]
        assert main(words) == 0, (line, capsys.readouterr().err)
        ran.append(verb)
    assert set(ran) == set(RUNNABLE), f"the docs no longer show: {set(RUNNABLE) - set(ran)}"


def test_the_shipped_thinking_chatbot_and_its_serve_line_agree():
    """diary-full.toml's served Qwen3 chatbot says what to do with its thinking, and the GPU
    page serves it with the reasoning parser and says what the setting does."""
    from diarylab.chatbots.specs import ServedChatbotSpec
    from diarylab.experiments.designs.opening import load_design

    design = load_design(ROOT / "experiments" / "designs" / "diary-full.toml")
    [qwen] = [
        b for b in design.spec.chatbots if isinstance(b, ServedChatbotSpec) and "Qwen3" in b.model
    ]
    assert qwen.thinking == "off"
    page = (DOCS / "gpu-study.md").read_text(encoding="utf-8")
    port = qwen.endpoint.urls[0].split(":")[-1].split("/")[0]
    serve = page[page.index("serve Qwen/Qwen3-32B") :].split("```")[0]
    assert f"--port {port}" in serve and "--reasoning-parser qwen3" in serve
    assert f'`thinking = "{qwen.thinking}"`' in page


def test_the_gpu_study_steps_run_in_the_order_a_study_needs():
    """The checklist's commands, in the order the shipped study is done: plan the machines,
    install, download and serve, keys, check, measure, pilot, run, status, report."""
    page = (DOCS / "gpu-study.md").read_text(encoding="utf-8")
    full = "experiments/designs/diary-full.toml"
    steps = [
        f"diarylab plan {full} --gpu-only",
        "make setup && ./scripts/setup-vllm.sh",
        f"diarylab serve-lines {full}",
        "export OPENAI_API_KEY",
        f"diarylab design check {full}",
        f"diarylab plan {full} --measure",
        f"diarylab pilot {full}",
        f"diarylab run {full}",
        "diarylab status results/diary-full",
        "diarylab report results/diary-full",
        "diarylab export results/diary-full",
    ]
    at = [page.find(f"\n{step}") for step in steps]
    assert all(i >= 0 for i in at), [s for s, i in zip(steps, at, strict=True) if i < 0]
    assert at == sorted(at)


PARAGRAPH_LINES = 12


def _paragraphs(text: str) -> list[list[str]]:
    """A page's paragraphs of prose: a list item starts its own; code blocks, tables, headings
    and the blocks benches and commands write are not prose."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!-- (bench|output):.*?<!-- /(bench:[a-z_]+|output) -->", "", text, flags=re.S)
    out: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        item = re.match(r"^([-*]|\d+\.)\s", s) is not None
        if not s or item or s.startswith(("#", "|", "<!--")):
            if current:
                out.append(current)
            current = [line] if item else []
            continue
        current.append(line)
    if current:
        out.append(current)
    return out


def test_no_docs_paragraph_runs_past_the_limit():
    """Docs are guides: a paragraph of more than 12 lines is a wall a reader skips."""
    long = [
        f"{page.relative_to(ROOT)}: {len(p)} lines from {p[0].strip()[:50]!r}"
        for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
        for p in _paragraphs(page.read_text(encoding="utf-8"))
        if len(p) > PARAGRAPH_LINES
    ]
    assert long == []


def test_the_paragraph_check_sees_a_long_one():
    prose = "\n".join(["word"] * 13)
    assert [len(p) for p in _paragraphs(f"{prose}\n\n- a\n- b\n```\n{prose}\n```\n")] == [13, 1, 1]


def test_the_api_reference_is_generated_from_the_roots_docstrings():
    import subprocess
    import sys

    written = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "api-reference.py"), "--print"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert (DOCS / "api.md").read_text(encoding="utf-8") == written
    assert "(no docstring)" not in written
