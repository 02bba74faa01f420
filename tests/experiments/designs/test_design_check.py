"""The check tells everything at once (issue 23, item 5): every new-user mistake is one clear
line (file, field, fix) before anything is written, and a design with several mistakes is told
all of them in one run of `design check` (and of `run`'s preflight), exit 2."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from diarylab.experiments.cli import main
from diarylab.testing.fake_openai import Routed, chat_response, closed_port_url, serve
from diarylab.testing.lab_fixtures import design_text

ROOT = Path(__file__).resolve().parents[3]
FAKE_KEY = "sk-proj-Zq81LmXv0aT4rB7nW2yK9cE5dH3fJ6gU"


@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    """A local hub cache holding the config.json of a made-up 32-layer model "acme/llama-32",
    laid out as huggingface_hub lays it out; the hub itself can't be reached."""
    cache = tmp_path / "hub"
    repo = cache / "models--acme--llama-32"
    snapshot = repo / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(
        json.dumps({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 64})
    )
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(snapshot.name)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def refused(tmp_path: Path, text: str, capsys, *args: str) -> list[str]:
    """`design check` and `run` both refuse, write nothing and print the same problems, one
    line each with its fix; returns the lines."""
    design = tmp_path / "design.toml"
    design.write_text(text)
    out = tmp_path / "run"
    assert main(["design", "check", str(design), *args]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    for line in lines:
        assert line.startswith(f"diarylab: error: {design}") and line.count(" — fix: ") == 1, line
    if not args:  # --offline is `design check`'s alone
        assert main(["run", str(design), "--out", str(out), "--no-progress"]) == 2
        assert capsys.readouterr().err.strip().splitlines() == lines
        assert not out.exists()
    return lines


def served_chatbot(i: int, model: str = "openai/x", endpoint: str = "") -> str:
    return f"""
[[chatbots]]
id = "api-{i}"
kind = "litellm"
model = "{model}"
endpoint = {{ api_key_env = "DIARYLAB_CHECK_UNSET_{i}"{endpoint} }}
"""


INLINE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
steer = {{ layers = [{layer}], strength = {strength} }}
"""


def inline(text: str, layer: int = 1, strength: float = 0.5) -> str:
    text = text.replace('profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]')
    return text + INLINE.format(layer=layer, strength=strength)


def test_five_problems_of_the_environment_are_told_in_one_report(
    tmp_path, hub, tiny_model_folder, capsys, monkeypatch
):
    """Three unset key variables, a layer the diarist model lacks and a misspelt hub id: all
    five at once, each naming its field."""
    for i in range(3):
        monkeypatch.delenv(f"DIARYLAB_CHECK_UNSET_{i}", raising=False)
    chatbots = (
        '\n[[chatbots]]\nid = "thanks"\nkind = "fixed"\n'
        + "".join(served_chatbot(i) for i in range(3))
        + '\n[[chatbots]]\nid = "local"\nkind = "local"\nmodel = "acme/llama-32-instrct"\n'
    )
    text = design_text(tiny_model_folder, None, chatbots=chatbots).replace(
        f'[diarist_model]\nmodel = "{tiny_model_folder}"',
        '[diarist_model]\nmodel = "acme/llama-32"',
    )
    lines = refused(tmp_path, inline(text, layer=40), capsys)
    assert len(lines) == 5, lines
    for i in range(3):
        assert any(
            f"chatbots[{i + 1}].endpoint.api_key_env: environment variable "
            f"DIARYLAB_CHECK_UNSET_{i} is not set" in line
            for line in lines
        ), lines
    layer = next(line for line in lines if "profiles[0].steer.layers" in line)
    assert "steers layer(s) [40], but acme/llama-32 has 32 layers (0–31)" in layer
    assert "fix: pick layers between 0 and 31" in layer
    hub_id = next(line for line in lines if "chatbots[4].model" in line)
    assert (
        "model 'acme/llama-32-instrct' is not in the local hub cache" in hub_id
        and "the hub can't be reached" in hub_id
        and "check the id for a misspelling, or download it first" in hub_id
    ), hub_id


def test_schema_problems_are_told_in_one_report_and_a_key_is_never_repeated(
    tmp_path, tiny_model_folder, capsys
):
    """An unknown role card, a relative strength of 5.0 and a key written where its variable's
    name goes: three lines, and the key's value in none of them."""
    chatbots = (
        '\n[[chatbots]]\nid = "thanks"\nkind = "fixed"\n'
        f'\n[[chatbots]]\nid = "api"\nkind = "litellm"\nmodel = "openai/x"\n'
        f'endpoint = {{ api_key_env = "{FAKE_KEY}" }}\n'
    )
    text = design_text(tiny_model_folder, None, chatbots=chatbots, diarists='["amara", "zed"]')
    lines = refused(tmp_path, inline(text, strength=5.0), capsys)
    assert len(lines) == 3, lines
    assert all(FAKE_KEY not in line and FAKE_KEY[:12] not in line for line in lines)
    key = next(line for line in lines if "chatbots[1].endpoint.api_key_env" in line)
    assert "api_key_env names an environment variable, not the key itself" in key
    assert any("cast.diarists" in line and "'zed'" in line for line in lines), lines
    strength = next(line for line in lines if "profiles[0].steer.strength" in line)
    assert "relative strength 5 is beyond ±2" in strength and 'scale = "raw"' in strength


@pytest.mark.parametrize("name", ["sk-abc", "hf_AbCdEf", "my key", "OPENAI_API_KEY=sk-x"])
def test_key_shaped_api_key_env_is_refused_without_its_value(
    tmp_path, tiny_model_folder, capsys, name
):
    chatbots = served_chatbot(0).replace('"DIARYLAB_CHECK_UNSET_0"', json.dumps(name))
    lines = refused(tmp_path, design_text(tiny_model_folder, None, chatbots=chatbots), capsys)
    assert len(lines) == 1 and "not the key itself" in lines[0] and name not in lines[0]


def test_layers_are_checked_against_the_cached_config_even_offline(
    tmp_path, hub, tiny_model_folder, capsys
):
    text = design_text(tiny_model_folder, None).replace(
        f'[diarist_model]\nmodel = "{tiny_model_folder}"',
        '[diarist_model]\nmodel = "acme/llama-32"',
    )
    calibrated = text.replace('profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]') + (
        '\n[[profiles]]\nid = "lonely"\npattern = "social_isolation"\n'
        'calibration = { judge = "tiny-judge", layers = [8, 31, 32], strengths = [0.1] }\n'
    )
    (line,) = refused(tmp_path, calibrated, capsys, "--offline")
    assert "profiles[0].calibration.layers: profile 'lonely' steers layer(s) [32]" in line
    # A folder's own config counts too: the tiny model has 2 layers.
    (line,) = refused(tmp_path, inline(design_text(tiny_model_folder, None), layer=2), capsys)
    assert "steers layer(s) [2], but" in line and "has 2 layers (0–1)" in line
    # Within range: passes, offline and not.
    design = tmp_path / "ok.toml"
    design.write_text(inline(text, layer=31))
    assert main(["design", "check", str(design), "--offline"]) == 0, capsys.readouterr().err


def test_a_hub_id_the_cache_lacks_is_refused_and_offline_says_it_was_not_checked(
    tmp_path, hub, tiny_model_folder, capsys
):
    text = design_text(tiny_model_folder, None).replace(
        f'[diarist_model]\nmodel = "{tiny_model_folder}"',
        '[diarist_model]\nmodel = "meta-llama/Llama-3.1-8B-Instrct"',
    )
    (line,) = refused(tmp_path, text, capsys)
    assert (
        "diarist_model.model: model 'meta-llama/Llama-3.1-8B-Instrct' is not in the local hub"
        in (line)
    )
    assert "hf download meta-llama/Llama-3.1-8B-Instrct config.json" in line
    design = tmp_path / "design.toml"
    assert main(["design", "check", str(design), "--offline"]) == 0
    assert "not checked: " in capsys.readouterr().out


def test_a_relative_strength_beyond_two_is_refused_and_raw_is_not(
    tmp_path, tiny_model_folder, capsys
):
    (line,) = refused(tmp_path, inline(design_text(tiny_model_folder, None), strength=-2.5), capsys)
    assert "profiles[0].steer.strength: relative strength -2.5 is beyond ±2" in line
    design = tmp_path / "raw.toml"
    design.write_text(
        inline(design_text(tiny_model_folder, None), strength=5.0).replace(
            "strength = 5.0 }", 'strength = 5.0, scale = "raw" }'
        )
    )
    assert main(["design", "check", str(design)]) == 0, capsys.readouterr().err


def probed_design(url: str, *, probe: bool = True, key: str = "DIARYLAB_CHECK_KEY") -> str:
    return f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "api"
kind = "litellm"
model = "openai/fake-chat"
probe = {str(probe).lower()}
endpoint = {{ base_url = "{url}", api_key_env = "{key}" }}
"""


def test_probe_true_makes_one_cheap_call_and_false_makes_none(
    tmp_path, tiny_model_folder, capsys, monkeypatch
):
    monkeypatch.setenv("DIARYLAB_CHECK_KEY", "x")
    with serve(lambda body: (200, chat_response("OK"))) as server:
        design = tmp_path / "design.toml"
        design.write_text(
            design_text(tiny_model_folder, None, chatbots=probed_design(server.base_url))
        )
        assert main(["design", "check", str(design)]) == 0, capsys.readouterr().err
        assert len(server.requests) == 1 and server.requests[0]["max_tokens"] == 8
        headers = {k.lower(): v for k, v in server.headers[0].items()}
        assert headers["authorization"] == "Bearer x"  # the key variable, through the door
        design.write_text(
            design_text(
                tiny_model_folder, None, chatbots=probed_design(server.base_url, probe=False)
            )
        )
        assert main(["design", "check", str(design)]) == 0
        assert main(["design", "check", str(design), "--offline"]) == 0
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "said", "fix"),
    [
        (401, "AuthenticationError", "check the key in the variable endpoint.api_key_env names"),
        (404, "NotFoundError", "check the model name"),
    ],
)
def test_a_chatbot_probe_refused_by_its_server_is_one_line(
    tmp_path, tiny_model_folder, capsys, monkeypatch, status, said, fix
):
    monkeypatch.setenv("DIARYLAB_CHECK_KEY", "x")
    error = {"error": {"message": "nope", "type": "invalid_request_error", "code": status}}
    with serve(lambda body: (status, error)) as server:
        text = design_text(tiny_model_folder, None, chatbots=probed_design(server.base_url))
        (line,) = refused(tmp_path, text, capsys)
        assert len(server.requests) == 2  # one try each for `design check` and `run`
    assert "chatbots[1]: chatbot 'api' failed its probe" in line and said in line, line
    assert f"fix: {fix}" in line


def test_a_down_server_is_told_at_once_without_a_runs_advice(
    tmp_path, tiny_model_folder, capsys, monkeypatch
):
    """A chatbot and a judge on closed ports, with the run's own retries (max_retries 4):
    the check tries each once, so it is told in seconds, not after backoff, and says what to
    do before a run, never "re-running resumes"; two problems, two lines, one fix each."""
    monkeypatch.setenv("DIARYLAB_CHECK_KEY", "x")
    judges = f"""
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
mode = "top-k"
endpoint = {{ base_url = "{closed_port_url()}", max_retries = 4, backoff_s = 4.0 }}
"""
    text = design_text(
        tiny_model_folder, None, chatbots=probed_design(closed_port_url()), judges=judges
    )
    design = tmp_path / "design.toml"
    design.write_text(text)
    main(["design", "check", str(design), "--offline"])  # imports warmed, not timed
    capsys.readouterr()
    began = time.monotonic()
    lines = refused(tmp_path, text, capsys)
    took = time.monotonic() - began
    assert len(lines) == 2, lines
    assert took < 10, f"check and run took {took:.1f} s against closed ports"
    assert all("re-running resumes" not in line for line in lines)
    assert all("fix: start the server (docs/gpu-study.md" in line for line in lines)
    assert any("chatbots[1].endpoint.base_url: no answer from the server" in line for line in lines)
    assert any("judges[0].endpoint.base_url: no answer from the server" in line for line in lines)


def test_a_served_judge_without_a_tokenizer_must_say_top_k(tmp_path, tiny_model_folder, capsys):
    judges = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
endpoint = { base_url = "http://127.0.0.1:9/v1" }
"""
    text = design_text(tiny_model_folder, None, judges=judges)
    (line,) = refused(tmp_path, text, capsys, "--offline")
    assert (
        "judges[0].tokenizer: judge 'served' has no tokenizer, so it can only be read from top-k "
        "log-probabilities (never exact) — fix: name its tokenizer" in line
    )
    assert 'or say mode = "top-k"' in line
    design = tmp_path / "top-k.toml"
    design.write_text(
        text.replace(
            'model = "openai/fake-judge"\n', 'model = "openai/fake-judge"\nmode = "top-k"\n'
        )
    )
    assert main(["design", "check", str(design), "--offline"]) == 0, capsys.readouterr().err


def test_a_sample_larger_than_the_benchmark_file_is_refused(tmp_path, capsys):
    synthetic = ROOT / "tests" / "data" / "mentalhealthbench_synthetic.jsonl"
    text = (
        (ROOT / "experiments" / "designs" / "benchmark-mentalhealthbench.toml")
        .read_text()
        .replace("../../data/mentalhealthbench.jsonl", str(synthetic))
    )
    assert "sample = 300" in text
    (line,) = refused(tmp_path, text, capsys, "--offline")
    assert (
        "benchmark.sample: sample = 300 asks for more conversations than the file holds (27)"
        in (line)
    )
    assert "fix: set sample = 27 or fewer" in line


def test_a_run_locked_before_the_reading_mode_rule_still_opens_and_resumes(
    tmp_path, tiny_model_folder
):
    """The rule is for new designs: a run folder's own design (and `run` resuming that very
    file) is read as it was locked, its judge read top-k as before."""
    from diarylab.experiments.designs.opening import load_design, resumes
    from diarylab.experiments.engine.runfolder import SHA_FILE
    from diarylab.foundation.datafiles import file_sha256
    from diarylab.foundation.errors import LabError

    judges = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
endpoint = { base_url = "http://127.0.0.1:9/v1" }
"""
    design = tmp_path / "design.toml"
    design.write_text(design_text(tiny_model_folder, None, judges=judges))
    with pytest.raises(LabError, match="has no tokenizer"):
        load_design(design)
    assert load_design(design, locked=True).spec.judges[0].reading_mode == "top-k"
    out = tmp_path / "run"
    assert not resumes(design, out)
    out.mkdir()
    (out / SHA_FILE).write_text(file_sha256(design) + "\n")
    assert resumes(design, out)
    design.write_text(design.read_text() + "\n# edited\n")
    assert not resumes(design, out)


SERVED_JUDGE = """
[[judges]]
id = "tiny-judge"
kind = "openai-compatible"
model = "hosted_vllm/x"
tokenizer = "{tokenizer}"
endpoint = {{ base_url = "{url}" }}
"""
CALIBRATED = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
calibration = {{ judge = "tiny-judge", layers = [1], strengths = [{strengths}], floor = 50 }}
"""


def _served(text: str, tokenizer: str, url: str) -> str:
    local = text[text.index("[[judges]]") :].split("\n\n")[0]
    return text.replace(local, SERVED_JUDGE.format(tokenizer=tokenizer, url=url).strip())


@pytest.mark.parametrize(
    ("case", "field", "said", "fix"),
    [
        ("tokenizer folder", "judges[0].tokenizer", "no tokenizer files at './nowhere/tok'",
         'tokenizer = "'),
        ("no scheme", "judges[0].endpoint.base_url", "has no scheme",
         'base_url = "http://127.0.0.1:8000/v1"'),
        ("negative sweep", "profiles[0].calibration.strengths[0]", "steers away",
         "strengths = [0.05, 0.1, 0.2]"),
        ("duplicate key", "", "is given twice (Cannot overwrite", "keep one of the two"),
        ("range", "design.entries", "must be at least 1 (got 0)", "e.g. entries = 1"),
        ("type", "design.entries", 'must be a whole number (got "four")', "e.g. entries = 3"),
        ("empty list", "cast.diarists", "needs at least 1 item (got 0)", 'diarists = ["..."]'),
    ],
)  # fmt: skip
def test_each_mistake_offline_is_refused_with_its_field_and_a_concrete_fix(
    tmp_path, tiny_model_folder, capsys, case, field, said, fix
):
    text = design_text(tiny_model_folder, None)
    if case == "tokenizer folder":
        text = _served(text, "./nowhere/tok", "http://127.0.0.1:8000/v1")
    elif case == "no scheme":
        text = _served(text, "smollm2", "127.0.0.1:8000")
    elif case == "negative sweep":
        text = text.replace('profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]')
        text += CALIBRATED.format(strengths="-0.5, 0.25")
    elif case == "duplicate key":
        text = text.replace("seed = 7", "seed = 7\nseed = 8")
    elif case == "range":
        text = text.replace("entries = 3", "entries = 0")
    elif case == "type":
        text = text.replace("entries = 3", 'entries = "four"')
    elif case == "empty list":
        text = text.replace('diarists = ["amara", "tomasz"]', "diarists = []")
    design = tmp_path / "design.toml"
    design.write_text(text)
    assert main(["design", "check", str(design), "--offline"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    [line] = [x for x in err.strip().splitlines() if said in x]
    assert line.startswith(f"diarylab: error: {design}")
    assert field in line.split(" — fix: ")[0]
    assert fix in line.split(" — fix: ")[1]


def test_offline_the_not_checked_list_names_everything_it_skipped(
    tmp_path, tiny_model_folder, capsys
):
    text = _served(design_text(tiny_model_folder, None), "smollm2", "http://127.0.0.1:9/v1")
    design = tmp_path / "design.toml"
    design.write_text(text)
    assert main(["design", "check", str(design), "--offline"]) == 0
    skipped = [
        line.removeprefix("  not checked: ")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("  not checked: ")
    ]
    served = "judges[0] tiny-judge: the server at http://127.0.0.1:9/v1 answering"
    assert any(s.startswith(served) for s in skipped)
    assert any("local models load" in s and "chatbots tiny-chat" in s for s in skipped)


def test_hypotheses_inherit_the_designs_judges(tmp_path, tiny_model_folder, capsys):
    """A hypothesis that names no judges is read by every judge of the design: a second judge
    added to [[judges]] needs no hypothesis edited. One that names some still must name all."""
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.kinds.diary.contrasts import parse_hypotheses

    judges = f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{tiny_model_folder}"

[[judges]]
id = "second-judge"
kind = "local"
model = "{tiny_model_folder}"
max_error = 0.0
"""
    hypothesis = """
[[hypotheses]]
id = "H1"
says = "the lonely profile scores its pattern higher"
direction = "greater"
contrast = { kind = "first_entry_pattern", profile = "lonely" }
"""
    text = inline(design_text(tiny_model_folder, None, judges=judges, extra=hypothesis))
    design = tmp_path / "design.toml"
    design.write_text(text)
    assert main(["design", "check", str(design), "--offline"]) == 0
    loaded = load_design(design)
    [h] = loaded.spec.hypotheses
    assert h.judges == ("tiny-judge", "second-judge")
    [parsed] = parse_hypotheses(loaded.raw)
    assert parsed.judges == ("tiny-judge", "second-judge")
    capsys.readouterr()
    design.write_text(
        text.replace('direction = "greater"', 'direction = "greater"\njudges = ["tiny-judge"]')
    )
    assert main(["design", "check", str(design), "--offline"]) == 2
    assert "leaves out judge(s) second-judge" in capsys.readouterr().err


def _qwen_like(url: str, thinking: str | None) -> str:
    setting = f'thinking = "{thinking}"\n' if thinking else ""
    return f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "open-qwen"
kind = "litellm"
model = "hosted_vllm/qwen-like"
endpoint = {{ base_url = "{url}" }}
{setting}"""


def test_a_self_hosted_chatbot_that_thinks_is_named_unless_its_design_says_what_to_do(
    tmp_path, tiny_model_folder, capsys
):
    """A hosted_vllm chatbot is probed without probe = true (its call costs nothing); a probe
    reply that shows thinking, under no thinking setting, is one line naming the chatbot and
    the settings that fix it. With thinking = "apart" the same server passes."""
    thinks = chat_response("<think>\nThe user wants", finish_reason="length")
    with serve(lambda body: (200, thinks)) as server:
        text = design_text(tiny_model_folder, None, chatbots=_qwen_like(server.base_url, None))
        (line,) = refused(tmp_path, text, capsys)
        assert server.requests[0]["max_tokens"] == 8
        design = tmp_path / "ok.toml"
        design.write_text(
            design_text(tiny_model_folder, None, chatbots=_qwen_like(server.base_url, "apart"))
        )
        assert main(["design", "check", str(design)]) == 0, capsys.readouterr().err
    assert "chatbots[1].thinking: chatbot 'open-qwen' thinks" in line
    assert 'set thinking = "off"' in line and 'thinking = "apart"' in line


def test_thinking_off_that_the_server_ignores_is_named(tmp_path, tiny_model_folder, capsys):
    thinks = chat_response("<think>\nThe user wants", finish_reason="length")
    with serve(lambda body: (200, thinks)) as server:
        text = design_text(tiny_model_folder, None, chatbots=_qwen_like(server.base_url, "off"))
        (line,) = refused(tmp_path, text, capsys)
        sent = server.requests[0]
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert 'still thinks with thinking = "off"' in line


def _silent_server() -> tuple[socket.socket, str]:
    """A port that accepts connections and never answers (a hung or firewalled server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def test_a_dead_chatbot_server_is_named_within_the_timeout(tmp_path, tiny_model_folder, capsys):
    """The shipped study's chatbot server (hosted_vllm, :8002) down or hung: `design check`
    gives up within --timeout and names the chatbot, before any vector is extracted."""
    listener, url = _silent_server()
    with listener:
        text = design_text(tiny_model_folder, None, chatbots=_qwen_like(url, "off"))
        design = tmp_path / "design.toml"
        design.write_text(text)
        began = time.monotonic()
        assert main(["design", "check", str(design), "--timeout", "1"]) == 2
        took = time.monotonic() - began
    err = capsys.readouterr().err
    assert took < 15, took
    assert "chatbots[1].endpoint.base_url: no answer from the server at" in err
    assert "within 1 s" in err and "`--timeout` waits longer" in err


def test_a_server_serving_another_model_is_named_with_its_models(
    tmp_path, tiny_model_folder, capsys
):
    """vLLM lists what it serves at GET /v1/models (vllm/entrypoints/openai/models/
    api_router.py, show_available_models): a chatbot named otherwise is one line with the
    name to use."""
    models = {"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model"}]}
    answers = Routed(lambda path, body: (200, chat_response("OK")), get=lambda path: (200, models))
    with serve(answers) as server:
        text = design_text(tiny_model_folder, None, chatbots=_qwen_like(server.base_url, "off"))
        (line,) = refused(tmp_path, text, capsys)
        assert server.gets[0] == "/v1/models"
    assert "chatbots[1].model: the server at" in line
    assert "serves Qwen/Qwen3-8B, not 'qwen-like'" in line
    assert 'model = "hosted_vllm/Qwen/Qwen3-8B"' in line
