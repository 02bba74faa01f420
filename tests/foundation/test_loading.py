"""Loading a tokenizer alone (model_access/loading.py load_tokenizer): what a served judge's
client needs, without weights and without a download."""

from __future__ import annotations

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.loading import load_tokenizer


def test_the_embedded_default_and_a_weightless_folder_load(tmp_path, shipped_tokenizer):
    assert len(load_tokenizer("smollm2")) == len(shipped_tokenizer)
    shipped_tokenizer.save_pretrained(tmp_path / "tok")
    assert not list((tmp_path / "tok").glob("*.safetensors"))
    assert load_tokenizer(str(tmp_path / "tok")).get_vocab() == shipped_tokenizer.get_vocab()


@pytest.mark.parametrize(
    "spec,match",
    [
        ("not a model", "unknown model"),
        ("nobody-here/not-cached-9f3", "cannot load tokenizer"),  # no hub access at run time
    ],
)
def test_what_cannot_be_loaded_is_one_error_naming_the_tokenizer(spec, match):
    with pytest.raises(LabError, match=match) as caught:
        load_tokenizer(spec)
    assert caught.value.where == "judge tokenizer"
