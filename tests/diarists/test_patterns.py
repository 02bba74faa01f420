from __future__ import annotations

import re
from pathlib import Path

import pytest

from diarylab.diarists.patterns import MIN_PROMPTS, PATTERNS_DIR, available_patterns, load_pattern
from diarylab.foundation.errors import LabError

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


def _error(path: Path) -> str:
    with pytest.raises(LabError) as err:
        load_pattern(path)
    return str(err.value)


def test_missing_field_names_file_field_and_fix(tmp_path):
    path = _broken(tmp_path, "negative_system =", "negative_sistem =")
    message = _error(path)
    assert message.startswith(f"{path} contrast.negative_system: missing")
    assert "fix: add negative_system" in message


def test_too_few_prompts_is_refused(tmp_path):
    text = (PATTERNS_DIR / "social_isolation.toml").read_text(encoding="utf-8")
    start = text.index("heldout = [")
    end = text.index("]", start)
    path = tmp_path / "social_isolation.toml"
    path.write_text(text[:start] + 'heldout = ["Write about today."' + text[end:])
    message = _error(path)
    assert message.startswith(f"{path} prompts.heldout:")
    assert f"at least {MIN_PROMPTS} items" in message and "fix:" in message


def test_prompts_must_be_non_empty_text(tmp_path):
    path = _broken(tmp_path, "heldout = [", 'heldout = [\n  "  ",')
    assert _error(path).startswith(f"{path} prompts.heldout[0]:")
    path = _broken(tmp_path, "heldout = [", "heldout = [\n  7,")
    assert _error(path).startswith(f"{path} prompts.heldout[0]:")


def test_id_must_match_file_name(tmp_path):
    path = _broken(tmp_path, 'id = "social_isolation"', 'id = "lonely"')
    message = _error(path)
    assert message.startswith(f"{path} pattern.id:") and "differs from the file name" in message
    assert "fix: rename the file to lonely.toml" in message


def test_heldout_prompts_must_be_new(tmp_path):
    first = load_pattern("social_isolation").extraction_prompts[0]
    path = _broken(tmp_path, "heldout = [", f'heldout = [\n  "{first}",')
    message = _error(path)
    assert message.startswith(f"{path} prompts:") and "in both extraction and heldout" in message


def test_contrast_needs_two_different_texts(tmp_path):
    text = (PATTERNS_DIR / "social_isolation.toml").read_text(encoding="utf-8")
    start, end = text.index("[contrast]"), text.index("[evaluation]")
    same = '[contrast]\npositive_system = "A diarist."\nnegative_system = "A diarist."\n\n'
    path = tmp_path / "social_isolation.toml"
    path.write_text(text[:start] + same + text[end:], encoding="utf-8")
    message = _error(path)
    assert message.startswith(f"{path} contrast:") and "are the same text" in message


def test_texts_must_not_be_blank(tmp_path):
    path = _broken(tmp_path, 'name = "Social isolation"', 'name = "   "')
    assert _error(path).startswith(f"{path} pattern.name:")


def test_unknown_tables_and_keys_are_refused(tmp_path):
    path = _broken(tmp_path, "[heuristic]", "[heuristics]")
    message = _error(path)
    assert (
        message.startswith(f"{path} heuristics: unknown field")
        and "did you mean 'heuristic'" in message
    )
    path = _broken(tmp_path, "[evaluation]", "[evaluation]\ntemperature = 0.7")
    assert _error(path).startswith(f"{path} evaluation.temperature: unknown field")


def test_version_must_be_an_integer(tmp_path):
    path = _broken(tmp_path, "version = 2", 'version = "2"')
    assert _error(path).startswith(f"{path} pattern.version:")


def test_heuristic_markers_are_optional_and_lower_case(tmp_path):
    text = (PATTERNS_DIR / "social_isolation.toml").read_text(encoding="utf-8")
    path = tmp_path / "social_isolation.toml"
    path.write_text(text[: text.index("[heuristic]")], encoding="utf-8")
    assert load_pattern(path).markers == ()
    path = _broken(tmp_path, 'markers = ["alone"', 'markers = ["ALONE"')
    assert load_pattern(path).markers[0] == "alone"
