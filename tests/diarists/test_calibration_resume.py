"""A run SIGKILLed while calibrating an inline profile against a served judge (a loopback
stand-in whose log-probabilities come from the tiny model) resumes with every call the killed
run stored: no stored judge prompt reaches the server again, no stored sample is written again,
and the profile it chooses is the one an unbroken run chooses."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from diarylab.diarists.profiles import load_profile
from diarylab.model_access.local import LocalModel
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_helpers import bias_logits
from diarylab.testing.kill_resume import finish, kill_partway
from diarylab.testing.lab_fixtures import design_text
from diarylab.testing.stores import opened, requests
from diarylab.testing.tiny_models import TINY_SPEC, build_tiny_llama

PROFILE_STORE = "profiles/store.sqlite"

JUDGE = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
tokenizer = "{model}"
probe_floor = 0.0
node_cutoff = 0.02
endpoint = {{ base_url = "{url}", api_key_env = "DIARYLAB_TEST_KEY", concurrency = 2 }}
"""

RULE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2, generation = { max_new_tokens = 5, temperature = 0.8 } }

[profiles.calibration]
judge = "served"
layers = [1]
strengths = [0.5, 2.0]
floor = 0.0
prompts = 2
generation = { max_new_tokens = 4, temperature = 0.8 }
batch_size = 2
"""


def write_design(folder: Path, model: Path, url: str) -> Path:
    # The diary's own entries are scored for realism only, so no diary prompt can be a
    # calibration prompt (pattern and coherence): every prompt counted below is calibration's.
    text = design_text(
        model,
        None,
        entries=1,
        diarists='["amara"]',
        chatbots='\n[[chatbots]]\nid = "thanks"\nkind = "fixed"\n',
        judges=JUDGE.format(model=model, url=url),
    )
    text = text.replace('profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]')
    text = text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["realism"]')
    path = folder / "design.toml"
    path.write_text(text + RULE)
    return path


def stored_prompts(folder: Path) -> list[str]:
    """The user message of every judge call in the profile maker's store."""
    with opened(folder / PROFILE_STORE) as store:
        asked = requests(store, "judge")
    out = []
    for request in asked:
        messages = request["prompt"]["messages"]
        out.append(next(content for role, content in messages if role == "user"))
    return out


def asked(requests: list[dict], tokenizer, prompts: list[str]) -> Counter[str]:
    """How many server requests read each of `prompts` (an exact reading sends the rendered
    prompt as token ids; a request holds one prompt or a list of them: bounded readings of a
    batch are walked in step, each round's prompts in lists)."""
    sent = []
    for r in requests:
        prompt = r.get("prompt")
        if isinstance(prompt, list) and prompt:
            lists = prompt if isinstance(prompt[0], list) else [prompt]
            sent.append([tokenizer.decode(ids) for ids in lists])
    return Counter({p: sum(any(p in t for t in texts) for texts in sent) for p in prompts})


def profile_store(folder: Path) -> list[tuple]:
    """Every call of the profile maker's store but the time it was made, with the vector's
    hash left out: each run extracts its own vector, whose hash covers its creation time."""
    with opened(folder / PROFILE_STORE) as store:
        rows = [c[1:] for c in store.calls_of()]
    out = []
    for kind, model, request, result in rows:
        body = json.loads(request)
        if body.get("steer"):
            body["steer"].pop("vector_sha256")
        out.append((kind, model, json.dumps(body, sort_keys=True), result))
    return sorted(out)


def choice(folder: Path) -> tuple:
    profile = load_profile(folder / "profiles" / "lonely.toml")
    assert profile.steer is not None and profile.calibration is not None
    record = {k: v for k, v in profile.calibration.items() if k != "rule"}
    return profile.steer.layers, profile.steer.strength, record


@pytest.fixture()
def server(shipped_tokenizer, monkeypatch):
    """The stand-in's own tiny model, biased toward digits and the end of text, so a reading
    is a few requests (node_cutoff prunes the unlikely nodes) with real coverage, not ~100."""
    monkeypatch.setenv("DIARYLAB_TEST_KEY", "sk-test-not-a-real-key")
    model = LocalModel(build_tiny_llama(shipped_tokenizer), shipped_tokenizer, spec=TINY_SPEC)
    digits = shipped_tokenizer.convert_tokens_to_ids([str(d) for d in range(10)])
    bias_logits(model, dict.fromkeys([*digits, shipped_tokenizer.eos_token_id], 30.0))
    with serve(judge_handler(model)) as fake:
        yield fake


def test_a_run_killed_while_calibrating_resumes_without_asking_the_judge_again(
    tmp_path, tiny_model_folder, shipped_tokenizer, server
):
    design = write_design(tmp_path, tiny_model_folder, server.base_url)
    reference = tmp_path / "reference"
    finish(design, reference, timeout_s=900)
    expected = profile_store(reference)
    kinds = Counter(kind for kind, *_ in expected)
    # 2 pairs × 2 sides, 2 prompts × (baseline + 2 strengths), then pattern + coherence readings.
    assert kinds["diarist"] == 10 and 0 < kinds["judge"] <= 12
    reference_asks = asked(server.requests, shipped_tokenizer, stored_prompts(reference))
    assert all(n > 0 for n in reference_asks.values())

    # Killed once the samples are written and some of their readings are stored.
    broken = tmp_path / "broken"
    before = len(server.requests)
    [at_kill] = kill_partway(
        design,
        broken,
        len(expected),
        [(10 + kinds["judge"] / 2) / len(expected)],
        store=PROFILE_STORE,
    )
    assert 10 < at_kill < len(expected), at_kill
    assert not (broken / "profiles" / "lonely.toml").exists()  # killed while calibrating
    stored = stored_prompts(broken)
    assert stored and len(stored) == at_kill - 10
    killed_run = server.requests[before:]
    resumed_from = len(server.requests)
    finish(design, broken, timeout_s=900)

    # Every prompt the killed run stored was asked of the server then, and never again.
    assert all(n > 0 for n in asked(killed_run, shipped_tokenizer, stored).values())
    again = asked(server.requests[resumed_from:], shipped_tokenizer, stored)
    assert sum(again.values()) == 0, again
    # The rest were asked by the resumed run, and the store and the choice are the unbroken run's.
    assert profile_store(broken) == expected
    assert choice(broken) == choice(reference)
    for name in ("sweep.csv", "samples.csv"):
        path = Path("profiles") / "lonely.calibration" / name
        assert (broken / path).read_text() == (reference / path).read_text()
