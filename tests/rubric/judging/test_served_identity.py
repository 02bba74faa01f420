"""What a served judge's server says it is (rubric/judging/served_identity.py): the dtype, told by
the
stand-in only where vLLM 0.32.0 tells it (the dev-mode /server_info route), and the
system_fingerprint; both stored with every reading, named per judge in the report's Judge
readings section with the widths of the readings' certified bounds, and shown by `judge probe`,
which exits 2 when `run` would refuse the judge."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from typing import Any

import pytest

from diarylab.experiments.analysis.readings import per_judge, section, stored_readings, summarize
from diarylab.experiments.cli import main
from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.expected import NodeReading
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.served_identity import UNKNOWN, dtype_of, served_dtype, server_root
from diarylab.rubric.prompts import JudgePrompt, TemplateRef
from diarylab.testing.confident_judge import confident_judge
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_tokenizers import mistral_style_tokenizer

TEMPLATE = TemplateRef("t", 1, "0" * 64)


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_stand_in_tells_the_dtype_only_in_dev_mode_as_vllm_does(tiny_model):
    with (
        serve(judge_handler(tiny_model)) as plain,
        serve(judge_handler(tiny_model, dev_mode=True)) as dev,
    ):
        root = server_root(plain.base_url)
        assert get(root + "/server_info")[0] == 404
        status, models = get(plain.base_url + "/models")
        assert status == 200 and "dtype" not in json.dumps(models)
        assert get(root + "/version") == (200, {"version": "0.32.0"})
        assert served_dtype(EndpointSettings(base_url=plain.base_url)) == UNKNOWN
        # The stand-in serves its model's own dtype, and says so where vLLM would.
        assert served_dtype(EndpointSettings(base_url=dev.base_url)) == "float32"
        both = EndpointSettings(base_url=[plain.base_url, dev.base_url])
        assert served_dtype(both) == "float32"  # a replica that does not say adds nothing
    assert served_dtype(EndpointSettings()) == UNKNOWN  # no server named
    assert served_dtype(EndpointSettings(base_url=plain.base_url)) == UNKNOWN  # gone


def test_a_server_info_body_gives_its_dtype_or_unknown():
    body = {"vllm_config": {"model_config": {"dtype": "torch.bfloat16"}}}
    assert dtype_of(body) == "bfloat16"
    assert dtype_of({"vllm_config": "ModelConfig(dtype=...)"}) == UNKNOWN  # the text format
    assert dtype_of({}) == UNKNOWN


class Bounded(Judge):
    """Every score: P("5" then end) = 0.9, P("7") = 0.1 never read further, so the reading
    stops early. By hand (rubric/judging/bound.py): C0 = 0.9, S0 = 4.5; the open 0.1 could be 7 or
    70..79, so E[n] lies in [5, (4.5 + 7.9) / 1.0] = [5, 12.4] (width 7.4) and the coverage in
    [0.9, 1.0]; with `read_all` the "7" node is read too and the reading is exact (width 0)."""

    def __init__(self, about: dict[str, Any], fingerprint: str | None) -> None:
        self.about, self.fingerprint = about, fingerprint

    def identity(self) -> dict[str, Any]:
        return {"bounded": self.fingerprint}

    def server_about(self) -> dict[str, Any]:
        return self.about

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        nodes = [
            NodeReading(prefix="", children={"5": math.log(0.9), "7": math.log(0.1)}),
            NodeReading(prefix="5", children={}, end_logprob=0.0),
        ]
        if "read_all" in str(prompt.text):
            nodes.append(NodeReading(prefix="7", children={}, end_logprob=0.0))
        record = {"backend": "served", "mode": "exact", "system_fingerprint": self.fingerprint}
        return dict(number_reading(nodes, record=record).record)


def fill(store: Store, judge_id: str, judge: Judge, texts: list[str]) -> None:
    """One score of each text (its target id the text)."""
    tasks = [
        Task("entry", text, "coherence", "number", JudgePrompt.raw(text), TEMPLATE)
        for text in texts
    ]
    judge_tasks(store, judge_id, lambda: judge, tasks, 0.5, lambda n: None)


def test_the_report_names_each_judges_server_and_its_bound_widths(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    served = Bounded({"dtype": "bfloat16"}, "vllm-0.32.0-aaaa1111")
    fill(store, "served", served, ["a", "b", "read_all c"])
    # A replica with another configuration: a second fingerprint, in the same judge's records.
    fill(store, "served", Bounded({"dtype": "bfloat16"}, "vllm-0.32.0-bbbb2222"), ["d"])
    fill(store, "quiet", Bounded({}, None), ["read_all e"])  # a server that says nothing
    readings = stored_readings(store, {})
    # The dtype came from the judge's server, through the judging door, into the stored record.
    record = next(c[4] for c in store.calls_of() if c[2] == "served")
    assert json.loads(record)["dtype"] == "bfloat16"
    judges = per_judge(readings).set_index("judge")
    assert judges.loc["served", "fingerprints"] == "vllm-0.32.0-aaaa1111, vllm-0.32.0-bbbb2222"
    assert judges.loc["served", "dtypes"] == "bfloat16"
    assert (judges.loc["served", "scores"], judges.loc["served", "bounded"]) == (4, 4)
    # widths 7.4, 7.4, 0, 7.4: median 7.4, max 7.4; coverage gaps 0.1, 0.1, 0, 0.1
    assert judges.loc["served", "bound_width_median"] == pytest.approx(7.4)
    assert judges.loc["served", "bound_width_max"] == pytest.approx(7.4)
    assert judges.loc["served", "coverage_gap_max"] == pytest.approx(0.1)
    assert judges.loc["quiet", "fingerprints"] == judges.loc["quiet", "dtypes"] == "not recorded"
    assert judges.loc["quiet", "bound_width_max"] == 0
    text = "\n".join(section(summarize(readings), "profile", 0.5))
    assert (
        "| served | bfloat16 | vllm-0.32.0-aaaa1111, vllm-0.32.0-bbbb2222 | 4 | 4 | 7.40 | " in text
    )
    assert "| quiet | not recorded | not recorded | 1 | 1 | 0.00 | 0.00 | 0.0000 |" in text
    store.close()


def probe(capsys, url: str, folder: str, *extra: str) -> tuple[int, dict[str, Any]]:
    argv = ["judge", "probe", "--judge", "litellm:hosted_vllm/fake-judge", "--base-url", url]
    code = main([*argv, "--tokenizer", folder, "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_the_probe_shows_the_servers_identity_and_exits_2_when_it_refuses(
    tmp_path, capsys, tiny_model, tiny_model_folder
):
    tokenizer = mistral_style_tokenizer()
    folder = tmp_path / "tok"
    tokenizer.save_pretrained(folder)
    handler = judge_handler(confident_judge(tokenizer), renderer="mistral", dev_mode=True)
    with serve(handler) as server, serve(judge_handler(tiny_model)) as random_judge:
        argv = ["judge", "probe", "--judge", "litellm:hosted_vllm/fake-judge"]
        assert main([*argv, "--base-url", server.base_url, "--tokenizer", str(folder)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1] == "ok" and "dtype float32" in lines
        [fingerprint] = [line.split()[1] for line in lines if line.startswith("system_fingerprint")]
        assert fingerprint.startswith("vllm-0.32.0-")
        # A tiny random model rarely starts a number: refused, as `run` would, with exit 2;
        # its server is not in dev mode, so its dtype is unknown.
        code, refused = probe(capsys, random_judge.base_url, str(tiny_model_folder))
        assert code == 2 and refused["verdict"].startswith("refused: root coverage")
        assert refused["dtype"] == "unknown" and refused["system_fingerprint"].startswith("vllm-")
