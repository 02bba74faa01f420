"""What the bad-input corpus (tests/bad_inputs/test_*.py) is built from, and its rule:
every user mistake is ONE line on stderr (`diarylab: error: <file> <field>: <what> — fix:
<how>`), exit status 2, no traceback, and nothing written.

Every CLI case runs in-process through `experiments.cli.main` and asserts: exit code 2; stderr
is exactly one line starting "diarylab: error:", with " — fix: " and no "Traceback"; it names
the file (or the option) and, where there is one, the field, plus a fragment of what is wrong;
and a recursive listing (names, sizes, mtimes) of the folders involved is unchanged — for `run`,
the --out folder does not exist afterwards.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from diarylab.experiments.cli import main
from diarylab.testing.lab_fixtures import design_text

ROOT = Path(__file__).resolve().parents[1]
PATTERN_FILE = ROOT / "diarists" / "patterns" / "social_isolation.toml"
ENTRY_TEMPLATE = ROOT / "diarists" / "templates" / "entry.toml"
SERVED_CHATBOT = """
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "api"
kind = "litellm"
model = "openai/some-model"
endpoint = { ENDPOINT }
"""
INLINE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2 }
RULE
"""
HYPOTHESIS = """
[[hypotheses]]
id = "HID"
says = "a preregistered prediction"
contrast = CONTRAST
direction = "greater"
judges = JUDGES
"""


# ----------------------------------------------------------------------------- the lab
@dataclass
class Lab:
    """What a case is built from: a per-test folder, the tiny model, a checked profile file and
    its vector (shared by the module, copied before a case edits them) and a finished run."""

    tmp: Path
    model: Path
    shared: Path
    profile: Path
    request: pytest.FixtureRequest

    def design(self, text: str | bytes, name: str = "design.toml") -> Path:
        path = self.tmp / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def text(self, *, profile: bool = True, **kwargs: Any) -> str:
        return design_text(self.model, self.profile if profile else None, **kwargs)

    def own_profile(self) -> Path:
        """A private copy of the profile and its vector, free to edit."""
        folder = self.tmp / "own"
        shutil.copytree(self.shared / "vectors", folder / "vectors")
        shutil.copytree(self.shared / "profiles", folder / "profiles")
        return folder / "profiles" / self.profile.name

    def own_run(self) -> Path:
        target = self.tmp / "run"
        shutil.copytree(self.request.getfixturevalue("finished"), target)
        for extra in ("store.sqlite-wal", "store.sqlite-shm"):
            (target / extra).unlink(missing_ok=True)
        return target


def snapshot(*roots: Path) -> dict[str, tuple[bool, int, int]]:
    """Every file and folder under `roots`, with size and modification time."""
    out = {}
    for root in roots:
        if not root.exists():
            continue
        for path in [root, *sorted(root.rglob("*"))]:
            st = path.lstat()
            out[str(path)] = (path.is_dir(), st.st_size, st.st_mtime_ns)
    return out


def one_clear_error(argv: list[str], capsys, names: list[str], watch: list[Path]) -> str:
    """Run the command in-process and check the lab's rule; returns the message."""
    capsys.readouterr()
    before = snapshot(*watch)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit without returning
        code = exc.code if isinstance(exc.code, int) else 1
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err, err
    assert err.endswith("\n") and len(err.splitlines()) == 1, f"not one line: {err!r}"
    assert err.startswith("diarylab: error: "), err
    assert " — fix: " in err, f"no fix given: {err!r}"
    for name in names:
        assert name in err, f"{name!r} not named in {err!r}"
    assert snapshot(*watch) == before, f"{argv} wrote something"
    return err


def sub(text: str, old: str, new: str, count: int = 1) -> str:
    """Replace `old` (which must be there, so a case cannot silently turn valid)."""
    assert old in text, old
    return text.replace(old, new, count)


def without_table(text: str, name: str) -> str:
    """The text with the [name] table (up to the next table) removed."""
    out, n = re.subn(rf"^\[{name}\]\n(?:(?!\[).*\n)*", "", text, flags=re.M)
    assert n == 1, name
    return out


def inline(lab: Lab, rule: str, *, listed: bool = True) -> str:
    text = lab.text(profile=False)
    if listed:
        text = sub(text, 'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]')
    return text + INLINE.replace("RULE", rule)


def hypothesis(contrast: str, judges: str = '["tiny-judge"]', hid: str = "H1") -> str:
    return HYPOTHESIS.replace("HID", hid).replace("CONTRAST", contrast).replace("JUDGES", judges)


def served(endpoint: str) -> str:
    return SERVED_CHATBOT.replace("ENDPOINT", endpoint)


def plain_file(lab: Lab) -> Path:
    path = lab.tmp / "notes.txt"
    path.write_text("not a run\n")
    return path


Build = Callable[[Lab], "str | bytes"]


def D(build: Build, field: str | None, says: str, *, id: str, marks=()):
    return pytest.param(build, field, says, id=f"design-{id}", marks=marks)


def refused_by_check_expand_and_run(lab: Lab, capsys, build: Build, field: str | None, says: str):
    """Every design case is refused alike by `design check`, `design expand` and `run`."""
    path = lab.design(build(lab))
    out = lab.tmp / "out"
    names = [str(path), *([field] if field else []), says]
    for argv in (
        ["design", "check", str(path)],
        ["design", "expand", str(path), "--json"],
        ["run", str(path), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, names, [lab.tmp, lab.shared])
        assert not out.exists()


Argv = Callable[[Lab], list[str]]


def vector_arg(lab: Lab) -> str:
    return str(lab.shared / "vectors" / "tiny-social_isolation")


def pattern_copy(lab: Lab, old: str | None = None, new: str = "", name: str = "") -> Path:
    text = PATTERN_FILE.read_text()
    if old is not None:
        text = sub(text, old, new)
    path = lab.tmp / (name or PATTERN_FILE.name)
    path.write_text(text)
    return path


def prompt_file(lab: Lab, content: bytes | None) -> Path:
    path = lab.tmp / "prompt.txt"
    if content is not None:
        path.write_bytes(content)
    return path


def conversation_file(lab: Lab, content: str) -> Path:
    path = lab.tmp / "conversation.json"
    path.write_text(content)
    return path


def calibrate(lab: Lab, *more: str) -> list[str]:
    return [
        "steer", "calibrate", "--model", str(lab.model), "--vector", vector_arg(lab),
        "--pattern", "social_isolation", "--judge", "fake", "--layers", "1",
        "--strengths", "0.5", "--out", str(lab.tmp / "calibration"), *more,
    ]  # fmt: skip


def extract(lab: Lab, *more: str, pattern: str = "social_isolation") -> list[str]:
    return [
        "steer", "extract", "--model", str(lab.model), "--pattern", pattern,
        "--out", str(lab.tmp / "vector"), *more,
    ]  # fmt: skip


def try_(lab: Lab, *more: str, vector: str | None = None) -> list[str]:
    return [
        "steer", "try", vector or vector_arg(lab), "--model", str(lab.model),
        "--layer", "1", "--strength", "0.5", *more,
    ]  # fmt: skip


def judge_read(lab: Lab, *more: str) -> list[str]:
    return ["judge", "read", "--judge", str(lab.model), *more]


def C(argv: Argv, names: list[str], *, id: str, marks=()):
    return pytest.param(argv, names, id=f"cli-{id}", marks=marks)


def refused_option(lab: Lab, capsys, argv: Argv, names: list[str]) -> None:
    """One option case: one clear error, and none of the files the command would make."""
    one_clear_error(argv(lab), capsys, names, [lab.tmp, lab.shared])
    for made in ("calibration", "vector.safetensors", "vector.json", "exported"):
        assert not (lab.tmp / made).exists()
