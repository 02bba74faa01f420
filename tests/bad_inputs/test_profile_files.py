"""Profile files and their vectors (named in a design's cast.profiles; `design check` and `run`):
profile   unknown-key, misspelt-strength, bad-scale, bad-positions, layer-out-of-range (2 on a
          2-layer model), layer-negative, no-layers, strength-too-large, sha-malformed,
          no-profile-table, calibration-nested-table, not-toml, pattern-mismatch
vector    vector-file-missing, vector-sha-mismatch, vector-bytes-changed, vector-sidecar-missing,
          -not-an-object ([1, 2, 3]), -not-json, -not-utf8, -other-format, -lacks-a-field,
          -wrong-type (num_layers = "two"), -wrong-shape (hidden_size 65)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from diarylab.testing.bad_inputs import (
    one_clear_error,
    sub,
)
from diarylab.testing.lab_fixtures import design_text

# Each case edits a private copy of a good profile (or its vector) and names it in a design.
Edit = Callable[[Path], object]


def edit(old: str, new: str) -> Edit:
    def apply(profile: Path) -> None:
        profile.write_text(sub(profile.read_text(), old, new))

    return apply


def vector_file(profile: Path, suffix: str) -> Path:
    return profile.parent.parent / "vectors" / f"tiny-social_isolation{suffix}"


def sidecar(change: Callable[[dict], object]) -> Edit:
    def apply(profile: Path) -> None:
        meta = vector_file(profile, ".json")
        data = json.loads(meta.read_text())
        meta.write_text(json.dumps(change(data)))

    return apply


def write_to(suffix: str, content: bytes | None) -> Edit:
    def apply(profile: Path) -> None:
        target = vector_file(profile, suffix)
        if content is None:
            target.unlink()
        else:
            target.write_bytes(content)

    return apply


def flip_a_byte(profile: Path) -> None:
    tensors = vector_file(profile, ".safetensors")
    data = bytearray(tensors.read_bytes())
    data[-1] ^= 0xFF
    tensors.write_bytes(bytes(data))


def P(change: Edit, where: str, field: str | None, says: str, *, id: str, marks=()):
    return pytest.param(change, where, field, says, id=f"profile-{id}", marks=marks)


PROFILE_CASES = [
    P(
        edit("positions", 'colour = "red"\npositions'),
        "profile",
        "profile.colour",
        "unknown field",
        id="unknown-key",
    ),
    P(
        edit("strength = 0.8", "strenght = 0.8"),
        "profile",
        "profile.strength",
        "missing",
        id="misspelt-strength",
    ),
    P(
        edit('scale = "relative"', 'scale = "log"'),
        "profile",
        "profile.scale",
        "'relative' or 'raw'",
        id="bad-scale",
    ),
    P(
        edit('positions = "response"', 'positions = "everywhere"'),
        "profile",
        "profile.positions",
        "'prompt'",
        id="bad-positions",
    ),
    P(
        edit("layers = [1]", "layers = [2]"),
        "profile",
        "[profile].layers",
        "layer 2 does not exist",
        id="layer-out-of-range",
    ),
    P(
        edit("layers = [1]", "layers = [-1]"),
        "profile",
        "profile.layers",
        "at least 0",
        id="layer-negative",
    ),
    P(
        edit("layers = [1]", "layers = []"),
        "profile",
        "profile.layers",
        "at least 1",
        id="no-layers",
    ),
    P(
        edit("strength = 0.8", "strength = 1000.0"),
        "profile",
        "profile.strength",
        "at most 100",
        id="strength-too-large",
    ),
    P(
        edit('vector_sha256 = "', 'vector_sha256 = "abc'),
        "profile",
        "profile.vector_sha256",
        "pattern",
        id="sha-malformed",
    ),
    P(
        lambda p: p.write_text(
            re.sub(r'vector_sha256 = "\w+"', f'vector_sha256 = "{"0" * 64}"', p.read_text())
        ),
        "safetensors",
        None,
        "expected 000000000000",
        id="vector-sha-mismatch",
    ),
    P(
        edit('pattern = "social_isolation"', 'pattern = "entitlement"'),
        "profile",
        "[profile].vector",
        "vector is for pattern 'social_isolation'",
        id="pattern-mismatch",
    ),
    P(
        lambda p: p.write_text("[calibration]\nnote = 'x'\n"),
        "profile",
        "profile",
        "missing",
        id="no-profile-table",
    ),
    P(
        lambda p: p.write_text(p.read_text() + "\n[calibration.more]\nx = 1\n"),
        "profile",
        "calibration.more",
        "",
        id="calibration-nested-table",
    ),
    P(
        lambda p: p.write_text(p.read_text() + "\n[profile\n"),
        "profile",
        None,
        "is given twice",  # tomllib reads the unclosed "[profile" as [profile] declared again
        id="not-toml",
    ),
    P(
        write_to(".safetensors", None),
        "safetensors",
        "[profile].vector",
        "not found",
        id="vector-file-missing",
    ),
    P(
        write_to(".json", None),
        "json",
        None,
        "missing tiny-social_isolation.json",
        id="vector-sidecar-missing",
    ),
    P(
        write_to(".json", b"[1, 2, 3]\n"),
        "json",
        None,
        "metadata is not a JSON object",
        id="vector-sidecar-not-an-object",
    ),
    P(
        write_to(".json", b"{not json"),
        "json",
        None,
        "unreadable metadata",
        id="vector-sidecar-not-json",
    ),
    P(
        write_to(".json", b"\xff\xfe{}"),
        "json",
        None,
        "unreadable metadata",
        id="vector-sidecar-not-utf8",
    ),
    P(
        sidecar(lambda m: {**m, "format_version": 99}),
        "json",
        None,
        "not a diarylab",
        id="vector-sidecar-other-format",
    ),
    P(
        sidecar(lambda m: {k: v for k, v in m.items() if k != "hidden_size"}),
        "json",
        None,
        "metadata lacks hidden_size",
        id="vector-sidecar-lacks-a-field",
    ),
    P(
        sidecar(lambda m: {**m, "num_layers": "two"}),
        "json",
        None,
        "metadata field num_layers should be an integer (got 'two')",
        id="vector-sidecar-wrong-type",
    ),
    P(
        sidecar(lambda m: {**m, "hidden_size": 65}),
        "safetensors",
        None,
        "inconsistent vector",
        id="vector-sidecar-wrong-shape",
    ),
    P(flip_a_byte, "safetensors", None, "does not match the sha256", id="vector-bytes-changed"),
]


@pytest.mark.parametrize(("change", "where", "field", "says"), PROFILE_CASES)
def test_a_bad_profile_file_is_one_clear_error(lab, capsys, change, where, field, says):
    profile = lab.own_profile()
    change(profile)
    named = {
        "profile": profile,
        "safetensors": vector_file(profile, ".safetensors"),
        "json": vector_file(profile, ".json"),
    }[where]
    design = lab.design(design_text(lab.model, profile))
    out = lab.tmp / "out"
    names = [str(named), *([field] if field else []), says]
    for argv in (
        ["design", "check", str(design)],
        ["run", str(design), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, names, [lab.tmp])
        assert not out.exists()
