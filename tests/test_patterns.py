from __future__ import annotations

import re
from pathlib import Path

import pytest

from diarists.patterns import MIN_PROMPTS, PATTERNS_DIR, available_patterns, load_pattern
from foundation.errors import LabError

SHIPPED = ["entitlement", "social_isolation", "unrelenting_standards"]


def test_shipped_patterns_load():
    assert available_patterns() == SHIPPED
    for pattern_id in SHIPPED:
        p = load_pattern(pattern_id)
        assert p.id == pattern_id and p.version >= 1 and p.name
        assert len(p.definition) > 200
        assert p.positive_system != p.negative_system
        assert len(p.extraction_prompts) >= MIN_PROMPTS and len(p.heldout_prompts) >= MIN_PROMPTS
        assert not set(p.extraction_prompts) & set(p.heldout_prompts)
        assert re.fullmatch(r"[0-9a-f]{64}", p.sha256)
        assert p.markers, "the demo heuristic needs marker words"
        assert load_pattern(p.path) == p  # by path too


def test_unknown_pattern_names_the_choices():
    with pytest.raises(LabError, match="social_isolation"):
        load_pattern("sadness")


def _broken(tmp_path: Path, old: str, new: str, name: str = "social_isolation") -> Path:
    text = (PATTERNS_DIR / "social_isolation.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_missing_field_names_file_field_and_fix(tmp_path):
    path = _broken(tmp_path, "negative_system =", "negative_sistem =")
    with pytest.raises(LabError) as err:
        load_pattern(path)
    message = str(err.value)
    assert str(path) in message and "negative_system" in message and "fix:" in message


def test_too_few_prompts_is_refused(tmp_path):
    text = (PATTERNS_DIR / "social_isolation.toml").read_text(encoding="utf-8")
    start = text.index("heldout = [")
    end = text.index("]", start)
    path = tmp_path / "social_isolation.toml"
    path.write_text(text[:start] + 'heldout = ["Write about today."' + text[end:])
    with pytest.raises(LabError, match=r"'heldout' has 1 items, needs at least 20.*fix: add 19"):
        load_pattern(path)


def test_id_must_match_file_name(tmp_path):
    path = _broken(tmp_path, 'id = "social_isolation"', 'id = "lonely"')
    with pytest.raises(LabError, match="differs from the file name"):
        load_pattern(path)


def test_heldout_prompts_must_be_new(tmp_path):
    first = load_pattern("social_isolation").extraction_prompts[0]
    path = _broken(tmp_path, "heldout = [", f'heldout = [\n  "{first}",')
    with pytest.raises(LabError, match="in both extraction and heldout"):
        load_pattern(path)
