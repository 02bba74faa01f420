"""The manifest as report rows: readable, every path relative to the folder or by name."""

from __future__ import annotations

from diarylab.experiments.analysis.manifest_view import manifest_table, section, shown_path

MANIFEST = {
    "design": {"name": "d", "kind": "diary", "version": 2, "sha256": "a" * 64,
               "file": "/work/old/experiments/designs/demo.toml"},
    "diarist_model": {"spec": "smollm2", "dtype": "float32", "num_layers": 30, "revision": None,
                      "tokenizer_sha256": "450fd25d" + "0" * 56},
    "diarist_settings": {"engine": "transformers", "generation": {"max_new_tokens": 110}},
    "chatbots": {"thanks": {"kind": "fixed", "text": "Thank you for sharing."}},
    "judges": {"j": {"id": "j", "kind": "local", "model": "/home/me/models/judge",
                     "max_error": 0.05}},
    "profiles": {"unsteered": None, "p": {"steer": {"pattern": "social_isolation", "layers": [20],
                 "strength": 0.25, "scale": "relative", "positions": "response",
                 "vector_sha256": "3" * 64}, "file": "/tmp/run/profiles/p.toml"}},
    "data_files": {"card:amara": "b" * 64},
    "git_commit": "354333434c280c8d719ab59eeae5c68a73ddf5d6",
    "python": "3.11.7", "platform": "Linux-x",
    "packages": {"torch": "2.13.0", "gguf": None},
}  # fmt: skip


def test_manifest_rows_read_as_sentences_without_paths_or_full_hashes(tmp_path):
    rows = dict(manifest_table(MANIFEST, tmp_path / "run").values.tolist())
    assert rows["diarist model"] == (
        "smollm2 (float32, 30 layers, revision —, tokenizer sha256 450fd25d…)"
    )
    assert rows["design"].endswith("the locked copy `design.toml`, from `demo.toml`")
    assert rows["chatbot thanks"] == 'fixed reply "Thank you for sharing."'
    assert rows["judge j"] == "local: judge (outside the run folder); max_error 0.05"
    assert rows["profile unsteered"] == "unsteered"
    assert "vector sha256 33333333…" in rows["profile p"]
    assert rows["data file card:amara"] == "sha256 bbbbbbbb…"
    assert rows["packages"] == "gguf not installed, torch 2.13.0"
    text = section(MANIFEST, tmp_path / "run")
    assert "/work" not in text and "/home" not in text and "/tmp" not in text
    assert "b" * 64 not in text and "(../manifest.json)" in text


def test_a_path_inside_the_folder_is_shown_relative_to_it(tmp_path):
    run = tmp_path / "run"
    assert shown_path(str(run / "profiles" / "p.toml"), run) == "profiles/p.toml"
    assert shown_path("profiles/p.toml", run) == "profiles/p.toml"
    assert shown_path("C:\\\\Users\\\\me\\\\x.toml", None) == "x.toml (outside the run folder)"
