"""A run whose judges read at once (two served judges, each behind its own vLLM-faithful
stand-in) and whose chatbots answer at once (a served one and a local one), SIGKILLed while
judging and resumed, ends with exactly the store of an uninterrupted run — the same rows, read
back in the same order — and every reading names its server's fingerprint and dtype."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.model_access.local import LocalModel
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_helpers import bias_logits
from diarylab.testing.kill_resume import finish, kill_partway, tables
from diarylab.testing.lab_fixtures import design_text
from diarylab.testing.stores import call, opened
from diarylab.testing.tiny_models import TINY_SPEC, build_tiny_llama

JUDGE = """
[[judges]]
id = "{id}"
kind = "openai-compatible"
model = "hosted_vllm/fake-judge"
tokenizer = "{model}"
probe_floor = 0.0
node_cutoff = {cutoff}
endpoint = {{ base_url = "{url}", concurrency = 2 }}
"""

CHATBOTS = """
[[chatbots]]
id = "served-chat"
kind = "litellm"
model = "hosted_vllm/fake-judge"
generation = {{ max_new_tokens = 6, temperature = 0.7 }}
endpoint = {{ base_url = "{url}", concurrency = 2 }}

[[chatbots]]
id = "tiny-chat"
kind = "local"
model = "{model}"
generation = {{ max_new_tokens = 6, temperature = 0.7 }}
"""


@pytest.fixture()
def servers(shipped_tokenizer):
    """Two stand-ins, each with its own tiny model biased toward digits and the end of text (a
    reading is a few requests with real coverage); the second in dev mode, so it tells its
    dtype and the first does not."""
    digits = shipped_tokenizer.convert_tokens_to_ids([str(d) for d in range(10)])
    handlers = []
    for seed, dev_mode in ((0, False), (1, True)):
        model = LocalModel(
            build_tiny_llama(shipped_tokenizer, seed=seed), shipped_tokenizer, spec=TINY_SPEC
        )
        bias_logits(model, dict.fromkeys([*digits, shipped_tokenizer.eos_token_id], 30.0))
        handlers.append(judge_handler(model, dev_mode=dev_mode))
    with serve(handlers[0]) as a, serve(handlers[1]) as b:
        yield a, b


def write_design(folder: Path, model: Path, urls: tuple[str, str]) -> Path:
    # Two identities (node_cutoff differs), so each judge makes its own calls, on its own
    # server: two judges of one identity would share their calls, and a lane (lanes.lane_key).
    judges = "".join(
        JUDGE.format(id=f"judge-{n}", model=model, url=url, cutoff=cutoff)
        for n, url, cutoff in zip("ab", urls, (0.02, 0.03), strict=True)
    )
    text = design_text(
        model,
        None,
        entries=1,  # one turn: both chatbots answer it at once, then both judges read
        diarists='["amara"]',
        chatbots=CHATBOTS.format(model=model, url=urls[0]),
        judges=judges,
    ).replace('baseline_chatbot = "thanks"', 'baseline_chatbot = "tiny-chat"')
    path = folder / "design.toml"
    path.write_text(text)
    return path


def judge_calls(folder: Path) -> int:
    with opened(folder) as store:
        return store.count("calls", where={"kind": "judge"})


def frames(folder: Path) -> dict[str, list]:
    """The tables as the report reads them (Store.frame: key order, not commit order)."""
    store = Store(folder / "store.sqlite", (EntryRow, ReplyRow))
    try:
        return {t: store.frame(t).values.tolist() for t in ("entries", "replies", "judgments")}
    finally:
        store.close()


def test_concurrent_judges_killed_while_judging_resume_to_the_same_store(
    tmp_path, tiny_model_folder, servers
):
    design = write_design(tmp_path, tiny_model_folder, (servers[0].base_url, servers[1].base_url))
    reference = tmp_path / "reference"
    finish(design, reference, timeout_s=900)
    expected = tables(reference)
    total, judged = len(expected["calls"]), judge_calls(reference)
    writes = total - judged
    assert {r[5] for r in expected["replies"]} == {"served-chat", "tiny-chat"}
    assert {r[3] for r in expected["judgments"]} == {"judge-a", "judge-b"} and judged > 4

    # Killed twice while judging (both judges in flight), then finished. A judge's batch is
    # stored all at once, so the store grows in jumps (measured under load: 3 → 43 → 73): the
    # first kill comes at the first batch stored, which must leave readings still to make; the
    # second may find everything stored and the run only closing, still a kill to resume from.
    broken = tmp_path / "broken"
    seen = kill_partway(design, broken, total, [(writes + judged * f) / total for f in (0.05, 0.6)])
    assert writes < seen[0] < total and seen[0] <= seen[1] <= total, (seen, writes, total)
    finish(design, broken, timeout_s=900)
    assert tables(broken) == expected
    assert frames(broken) == frames(reference)

    # Each reading names its server: the first stand-in does not tell its dtype, the second
    # (dev mode) does; both send vLLM's fingerprint. The manifest names them per judge too.
    with opened(broken) as store:
        told = [
            (judge, result.get("dtype"), result.get("system_fingerprint"))
            for judge, key in store.select("judgments", ["judge", "call_key"])
            for _, result in [call(store, key)]
        ]
    dtypes = {judge: {d for j, d, _ in told if j == judge} for judge in ("judge-a", "judge-b")}
    assert dtypes == {"judge-a": {"unknown"}, "judge-b": {"float32"}}
    assert all(f.startswith("vllm-0.32.0-") for *_, f in told)
    manifest = json.loads((broken / "manifest.json").read_text())["served_judges"]
    assert manifest["judge-a"]["dtype"] == "unknown" and manifest["judge-b"]["dtype"] == "float32"
    assert manifest["judge-b"]["system_fingerprint"].startswith("vllm-0.32.0-")
    resumes = (broken / "resumes.jsonl").read_text().splitlines()
    assert json.loads(resumes[-1])["served_judges"] == manifest
