"""`diarylab plan` counts what a run makes: a small diary design is planned, then run against the
vLLM-shaped judge stand-in (testing/fake_judge_server.py) with a confident judge model behind it,
and the plan's texts, readings, prompts and HTTP requests must equal what the run wrote to its
store and what the server was asked. Bad options exit 2 with one message."""

from __future__ import annotations

import json
import time

import pytest

import diarylab
from diarylab.experiments.cli import main
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.workload import read_batches
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.vocab import vocab_facts
from diarylab.rubric.probe_prompt import number_probe
from diarylab.testing.confident_judge import confident_judge
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_tokenizers import mistral_style_tokenizer
from diarylab.testing.lab_fixtures import served_judge


def design(model_folder, tokenizer, url, *, max_error=0.0) -> str:
    return f"""
[design]
name = "plan-test"
kind = "diary"
seed = 11
entries = 1
coverage_floor = 0.0

[diarist_model]
model = "{model_folder}"
generation = {{ max_new_tokens = 8, temperature = 0.9 }}

[cast]
diarists = ["amara"]
profiles = ["unsteered"]

[[chatbots]]
id = "thanks"
kind = "fixed"
{served_judge(tokenizer, url, max_error=max_error)}
[scores]
entry = ["pattern"]
patterns = ["social_isolation"]

[analysis]
resamples = 200
baseline_chatbot = "thanks"
"""


def plan_json(path, capsys, *args) -> dict:
    assert main(["plan", str(path), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _prompts(body) -> list[list[int]]:
    """A /v1/completions body's prompts: a list of token lists is one prompt per list."""
    prompt = body["prompt"]
    return prompt if isinstance(prompt[0], list) else [prompt]


def prompts_in(bodies) -> int:
    return sum(len(_prompts(b)) for b in bodies)


@pytest.fixture(scope="module")
def judge_model(tmp_path_factory):
    tokenizer = mistral_style_tokenizer()
    folder = tmp_path_factory.mktemp("tok")
    tokenizer.save_pretrained(folder)
    return confident_judge(tokenizer), tokenizer, folder


def test_the_plan_counts_what_the_run_makes(tmp_path, capsys, tiny_model_folder, judge_model):
    model, tokenizer, tokenizer_folder = judge_model
    with serve(judge_handler(model, renderer="mistral")) as server:
        path = tmp_path / "design.toml"
        path.write_text(design(tiny_model_folder, tokenizer_folder, server.base_url))
        plan = plan_json(path, capsys)
        assert not server.requests  # planning asks no server
        assert main(["run", str(path), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    # The run's preflight probes the judge on its own prompt first, and asks once for the
    # log-probabilities its readings need (a text prompt): not readings.
    probe = render_judge_prompt(tokenizer, number_probe()).text
    probe_ids = tokenizer(probe, add_special_tokens=False)["input_ids"]
    bodies = [
        b
        for b in server.requests
        if "prompt" in b
        and not isinstance(b["prompt"], str)
        and _prompts(b)[0][: len(probe_ids)] != probe_ids
    ]
    assert len(bodies) < len(server.requests)
    store = Store(tmp_path / "run" / "store.sqlite", (EntryRow, ReplyRow))
    try:
        entries, replies = store.count(EntryRow.TABLE), store.count(ReplyRow.TABLE)
        items = [r[0] for r in store.select("judgments", ["item"])]
    finally:
        store.close()
    texts = {t["what"]: t["count"] for t in plan["texts"]}
    assert (
        texts
        == {"entries": entries, "replies by thanks": replies}
        == {
            "entries": 1,
            "replies by thanks": 1,
        }
    )
    numbers = sum(1 for i in items if i.startswith("pattern:"))
    assert plan["readings"]["served"] == {"number": numbers, "yes_no": len(items) - numbers}
    asked = plan["requests"]["served"]
    assert asked["mode"] == "exact" and asked["expected_basis"] == "trie"
    # max_error 0 reads every trie node: the plan's count is the run's, prompt for prompt, but
    # for the "."/"," the judge made likely enough to follow up — which only its answers show
    marks = set(vocab_facts(tokenizer).point_ids)
    follow = [b for b in bodies if _prompts(b)[0][-1] in marks]
    assert all(p[-1] in marks for b in follow for p in _prompts(b))  # a round of their own
    followed = prompts_in(follow)
    # the plan counts the run's probe too: every request the server saw
    everything = [b for b in server.requests if "prompt" in b]
    assert len(everything) > len(bodies)
    assert plan["total"] == plan["total_exact"] == prompts_in(everything) - followed
    assert plan["total_http"] == len(everything) - len(follow)
    assert plan["total_exact"] + followed <= plan["total_worst"]  # every mark followed: the most
    assert plan["progress_total"] == entries + replies + len(items)
    # The run kept its plan, and its readings state what the server was asked: `status` puts
    # the two side by side, per reading.
    assert json.loads((tmp_path / "run" / "plan.json").read_text())["total"] == plan["total"]
    asks = {a.question: a for a in _asks(tmp_path / "run")}
    assert sum(a.prompts for a in asks.values()) == prompts_in(bodies)
    # a yes/no reading sent in a list states its share of the list's requests
    assert sum(a.http_requests for a in asks.values()) == pytest.approx(len(bodies), abs=1e-3)
    # The notebook frames state the same counts, reading by reading.
    with diarylab.open_run(tmp_path / "run") as results:
        readings = results.readings()
    assert readings["prompts"].sum() == prompts_in(bodies)
    assert readings["http_requests"].sum() == pytest.approx(len(bodies), abs=1e-3)
    assert main(["status", str(tmp_path / "run")]) == 0
    shown = capsys.readouterr().out
    per = asked["per_reading"]["number_expected"]
    number = asks["number"]
    assert (
        f"served 0–100: {number.readings} of {numbers} readings; planned {per:g} prompts → "
        f"{number.prompts / number.readings:.2f} prompts"
    ) in shown
    # ... and the report does too, in its own section
    assert main(["report", str(tmp_path / "run")]) == 0
    findings = (tmp_path / "run" / "report" / "findings.md").read_text(encoding="utf-8")
    section = findings.split("## Plan vs run", 1)[1].split("\n## ", 1)[0]
    assert f"- served 0–100: {number.readings} of {numbers} readings; planned {per:g}" in section
    assert "× the plan" in section


def batches_read(tasks, question: str, width: int) -> dict[int, int]:
    """{size: count} of the batches the judging phase reads a question's tasks in
    (experiments/engine/judging.py reading_runs: a group whole, the rest `width` at a time, as
    the store's cached calls cut them)."""
    from diarylab.experiments.engine.judging import reading_runs

    out: dict[int, int] = {}
    for asked, grouped, run in reading_runs(tasks):
        if asked != question:
            continue
        n = len(run)
        sizes = [n] if grouped else [min(width, n - k) for k in range(0, n, width)]
        for size in sizes:
            out[size] = out.get(size, 0) + 1
    return out


def _asks(folder):
    store = Store(folder / "store.sqlite", (EntryRow, ReplyRow))
    try:
        return store.judge_asks()
    finally:
        store.close()


def test_a_bounded_judge_is_planned_at_a_few_prompts_and_labelled_an_estimate(
    tmp_path, capsys, tiny_model_folder, judge_model
):
    _, _, tokenizer_folder = judge_model
    path = tmp_path / "design.toml"
    path.write_text(
        design(tiny_model_folder, tokenizer_folder, "http://127.0.0.1:9/v1", max_error=0.05)
    )
    plan = plan_json(path, capsys, "--rate", "served=50", "--rate", "diarist=2")
    assert main(["design", "check", str(path), "--offline"]) == 0
    check = capsys.readouterr().out
    readings = sum(plan["readings"]["served"].values())
    assert f"plan: texts by models 1, judge readings {readings}, " in check
    assert f"judge prompts {plan['total']:,} expected ({plan['total_exact']:,} reading" in check
    per = plan["requests"]["served"]["per_reading"]
    assert plan["requests"]["served"]["expected_basis"] == "estimate"
    assert per["number_expected"] <= 10 < per["number_exact"] < per["number_worst"]
    # the run's probe and its log-probabilities request: in both totals
    probe = plan["requests"]["served"]["probe"]["prompts"]
    assert 0 < probe <= 5
    assert (plan["total"] - probe) * 5 < plan["total_exact"] - probe  # bounded: far under
    hours = plan["hours"]
    assert hours["writing"] == pytest.approx(1 / 2 / 3600)
    assert hours["judging"] == pytest.approx(plan["total"] / 50 / 3600)
    assert "chatbots" not in hours  # the fixed reply costs no call
    assert main(["plan", str(path), "--rate", "served=50", "--rate", "diarist=2"]) == 0
    text = capsys.readouterr().out
    assert "estimate for a confident judge" in text
    assert f"judging {hours['judging'] * 60:.1f} min" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rate", "served"], "'served' is not NAME=PER_S"),
        (["--rate", "served=fast"], "'fast' is not a positive rate"),
        (["--rate", "served=0"], "'0' is not a positive rate"),
        (["--rate", "nobody=3"], "'nobody' is not a judge, chatbot or the diarist"),
        (["--tokenizer", "nobody=smollm2"], "'nobody' is not a judge of"),
    ],
)
def test_a_bad_option_is_one_clear_error(tmp_path, capsys, tiny_model_folder, args, message):
    path = tmp_path / "design.toml"
    path.write_text(design(tiny_model_folder, "smollm2", "http://127.0.0.1:9/v1"))
    assert main(["plan", str(path), *args]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and " — fix: " in captured.err
    assert "Traceback" not in captured.err and not captured.out


def test_the_probe_measures_a_rate_in_prompts_per_second(capsys, judge_model):
    model, _, tokenizer_folder = judge_model
    args = ["--judge", "litellm:hosted_vllm/fake-judge", "--tokenizer", str(tokenizer_folder)]
    with serve(judge_handler(model, renderer="mistral")) as server:
        args += ["--base-url", server.base_url, "--json"]
        assert main(["judge", "probe", *args]) == 0
        probed = prompts_in([b for b in server.requests if "prompt" in b])
        capsys.readouterr()
        server.requests.clear()
        assert main(["judge", "probe", *args, "--rate", "3"]) == 0
        rate = json.loads(capsys.readouterr().out)["rate"]
        timed = prompts_in([b for b in server.requests if "prompt" in b]) - probed
    assert rate["readings"] == 3 and rate["prompts"] == timed >= 3
    assert rate["prompts_per_s"] == pytest.approx(rate["prompts"] / rate["seconds"])
    assert main(["judge", "probe", *args[:4], "--rate", "0"]) == 2
    assert "--rate" in capsys.readouterr().err


def test_the_friends_plan_counts_the_tasks_its_judging_phase_yields(capsys):
    """The shipped friends design: every model letter written (a stand-in store), the kind's
    own task list per judge equals the plan's readings by question, and the plan's texts the
    letters its pairs hold."""
    from collections import Counter

    from diarylab.diarists.cards import load_cards
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.kinds.friends.kind import friends_spec
    from diarylab.experiments.kinds.friends.rows import LetterRow
    from diarylab.experiments.kinds.friends.tasks import letter_tasks
    from diarylab.experiments.profiles.refs import profile_ids

    design = load_design("experiments/designs/friends.toml")
    cells = design.kind.cells(design, profile_ids(design))
    spec = friends_spec(design)

    class Letters:  # what letter_tasks reads of a store: each letter, written
        def get(self, row_type, letter_id):
            pair_id, seat = letter_id.rsplit(".", 1)
            pair = next(p for p in cells if p.id == pair_id)
            return LetterRow(
                letter_id, pair_id, pair.condition, seat[0], pair.card(seat[0]), "x",
                pair.profile(seat[0]), None, "x", int(seat[1:]), 1, "A letter.", 3, None, "k",
            )  # fmt: skip

    cards = {c.id: c for c in load_cards(spec.pairs.card_ids)}
    tasks = list(letter_tasks(Letters(), spec.scores, cells, cards))
    asked = Counter(t.question for t in tasks)
    plan = plan_json("experiments/designs/friends.toml", capsys)
    assert plan["readings"]["mistral-small-3.1"] == dict(asked) == {"number": 8064, "yes_no": 2016}
    # ... and the batches the judging phase reads them in are the ones the plan counts
    workload = design.kind.workload(design, cells)
    for question in ("number", "yes_no"):
        planned = read_batches(workload.together, question, asked[question], 16)
        assert batches_read(tasks, question, 16) == planned, question
    # every letter's identity check together: full lists, not one request a letter
    assert read_batches(workload.together, "yes_no", 2016, 16) == {16: 126}
    texts = {t["what"]: t["count"] for t in plan["texts"]}
    assert texts["letters"] + texts["fixed letters"] == sum(2 * p.letters for p in cells)
    # The shipped friends design names its judges' tokenizers: read exactly, within max_error.
    assert plan["requests"]["mistral-small-3.1"]["mode"] == "bounded (max_error 0.05)"


def test_the_bounded_estimate_is_what_the_confident_test_judge_takes(judge_model, tmp_path):
    """The estimate's stated judge is the shape of testing/confident_judge.py: one real bounded
    reading of that judge through the stand-in takes the prompts the plan expects."""
    from diarylab.experiments.planning.costs import reading_cost
    from diarylab.experiments.planning.plan import YES_NO_SAMPLE
    from diarylab.rubric.judging.building import build_judge
    from diarylab.rubric.judging.judges import ServedJudgeSpec

    model, tokenizer, folder = judge_model
    with serve(judge_handler(model, renderer="mistral")) as server:
        fields = {"base_url": server.base_url, "max_retries": 0, "prompts_per_request": 8}
        spec = ServedJudgeSpec(
            id="served", kind="openai-compatible", model="hosted_vllm/fake-judge",
            tokenizer=str(folder), endpoint=fields,
        )  # fmt: skip
        judge = build_judge(spec, lambda *a: None)  # type: ignore[arg-type, return-value]
        record = judge.number_record(number_probe())
    cost = reading_cost(spec, {"number": number_probe(), "yes_no": YES_NO_SAMPLE})
    assert cost.number_expected.basis == "estimate"
    assert (record["requests"], record["http_requests"]) == (
        cost.number_expected.prompts,
        cost.number_expected.http,
    )


@pytest.mark.parametrize("which", ["confident", "diffuse"])
def test_a_measured_plan_is_within_a_quarter_of_what_the_run_took(
    which, tmp_path, capsys, tiny_model, tiny_model_folder, judge_model
):
    """`plan --measure --from RUN` reads a seeded sample of the run's own texts with the served
    judge (bounded, as the design reads it) and plans from what the readings took: prompts per
    reading and HTTP requests in all within ±25 % of what the run's readings state, for the
    confident test judge and for a tiny random (diffuse) one."""
    if which == "confident":
        model, folder, handler = judge_model[0], judge_model[2], {"renderer": "mistral"}
    else:
        model, folder, handler = tiny_model, tiny_model_folder, {}
    run = tmp_path / "run"
    with serve(judge_handler(model, **handler)) as server:
        path = tmp_path / "design.toml"
        text = design(tiny_model_folder, folder, server.base_url, max_error=0.05)
        path.write_text(text.replace("entries = 1", "entries = 3"))
        assert main(["run", str(path), "--out", str(run), "--no-progress"]) == 0
        capsys.readouterr()
        plan = plan_json(path, capsys, "--measure", "--from", str(run), "--sample", "8")
    cost = plan["requests"]["served"]
    assert cost["expected_basis"] == "measured" and "measured on" in cost["note"]
    asks = {a.question: a for a in _asks(run)}
    for question, key in (("number", "number_expected"), ("yes_no", "yes_no")):
        took = asks[question].prompts / asks[question].readings
        assert cost["per_reading"][key] == pytest.approx(took, rel=0.25), question
    # the readings state their own requests; the run's probe (planned too) is not a reading
    http = sum(a.http_requests for a in asks.values())
    assert cost["http_expected"] - cost["probe"]["http_requests"] == pytest.approx(http, rel=0.25)
    low, high = cost["measured"]["prompts_range"]
    assert low <= cost["expected"] <= high


def test_a_judge_that_cannot_be_reached_stops_the_measure_at_once(
    tmp_path, capsys, tiny_model_folder, judge_model
):
    """`plan --measure` with the judge's server down exits 2 within seconds, naming the judge
    (it used to wait out the run's retries, 102 s, then plan on assumed figures)."""
    path = tmp_path / "design.toml"
    path.write_text(design(tiny_model_folder, judge_model[2], "http://127.0.0.1:9/v1"))
    began = time.monotonic()
    assert main(["plan", str(path), "--measure", "--timeout", "2"]) == 2
    assert time.monotonic() - began < 15
    err = capsys.readouterr().err
    assert "judges[0].endpoint.base_url: no answer from the server at http://127.0.0.1:9/v1" in err
    assert main(["plan", str(path)]) == 0  # the stated figures need no server


def test_bounded_readings_read_together_take_the_http_requests_the_plan_counts(
    tmp_path, capsys, tiny_model_folder, judge_model
):
    """An entry's 0–100 readings walk in step and share each round's requests: the run sends
    exactly the HTTP requests the plan counts for batches whose readings agree (the confident
    test judge writes 72 on every prompt), and the plan's expected figure, each reading by a
    judge of its own number, is no fewer. The batches are the ones the judging phase reads."""
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.kinds.diary.tasks import diary_tasks
    from diarylab.experiments.profiles.refs import profile_ids

    model, _, tokenizer_folder = judge_model
    with serve(judge_handler(model, renderer="mistral")) as server:
        path = tmp_path / "design.toml"
        text = design(tiny_model_folder, tokenizer_folder, server.base_url, max_error=0.05)
        text = text.replace("entries = 1", "entries = 2").replace(
            'entry = ["pattern"]\npatterns = ["social_isolation"]',
            'entry = ["pattern", "coherence", "realism"]\n'
            'patterns = ["social_isolation", "entitlement"]',
        )
        path.write_text(text)
        plan = plan_json(path, capsys)
        assert main(["run", str(path), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    sent = [b for b in server.requests if "prompt" in b]
    assert plan["readings"]["served"]["number"] == 8  # two entries, four scores each
    asks = {a.question: a for a in _asks(tmp_path / "run")}
    parts = plan["requests"]["served"]["http_parts"]
    # yes/no groups go as the plan says, to the request; the probe is the run's first 3
    assert parts["yes_no"] == pytest.approx(asks["yes_no"].http_requests, abs=1e-3)
    assert parts["probe"] + asks["yes_no"].http_requests + asks["number"].http_requests == (
        pytest.approx(len(sent), abs=1e-3)
    )
    # 0–100 readings in step: within a quarter of the run (a reading that asks one node more
    # than the stated judge spills a list: 7 requests here against 6 planned) ...
    taken = asks["number"].http_requests
    assert parts["number_if_alike"] <= parts["number"]
    assert parts["number_if_alike"] == pytest.approx(taken, rel=0.25)
    assert plan["total_http"] == pytest.approx(len(sent), rel=0.25)
    assert taken < asks["number"].readings  # fewer requests than readings: they shared
    # the run's own task order gives the batches the plan read its readings in
    design_ = load_design(path)
    cells = design_.kind.cells(design_, profile_ids(design_))
    store = Store(tmp_path / "run" / "store.sqlite", (EntryRow, ReplyRow))
    try:
        tasks = list(diary_tasks(store, design_.spec, cells))  # type: ignore[arg-type]
    finally:
        store.close()
    workload = design_.kind.workload(design_, cells)
    for question in ("number", "yes_no"):
        n = sum(1 for t in tasks if t.question == question)
        assert batches_read(tasks, question, 4) == read_batches(
            workload.together, question, n, 4
        ), question
    assert batches_read(tasks, "number", 4) == {4: 2}  # two entries' scores, four at a time
