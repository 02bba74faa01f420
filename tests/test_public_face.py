"""The package root is the public face: the few names a notebook or a script needs, each typed,
documented in docs/api.md and loaded on first use; `import diarylab` loads neither torch nor
pandas."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

import diarylab


def test_every_exported_name_resolves_and_open_run_is_typed():
    from diarylab.experiments.frames.reader import RunResults

    for name in diarylab.__all__:
        assert getattr(diarylab, name) is not None
    hints = typing.get_type_hints(diarylab.open_run, localns={"RunResults": RunResults})
    assert hints["return"] is RunResults
    assert diarylab.RunResults is RunResults
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        diarylab.nothing  # noqa: B018


def test_importing_the_root_stays_light():
    code = "import sys, diarylab; print(sorted({'torch', 'pandas', 'scipy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
