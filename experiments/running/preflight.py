"""The complete check of a design before anything is claimed, shared by `design check` and the
start of `run`: the schema (ranges of every setting, every name a hypothesis uses) has passed
when the design loaded; here every profile file and vector, every model (resolved, hub ids in
the local cache or on the hub, inline profiles' layers against the diarist model's config),
every key variable, a probe of every served judge (rubric/probe_prompt.py: the mode its answers
allow and P(it starts a number)) and of each served chatbot that asks for one. Every problem
found is told at once (a LabErrors of one line each); a design that fails leaves nothing
behind."""

from __future__ import annotations

from diarylab.chatbots.specs import LocalChatbotSpec, ServedChatbotSpec
from diarylab.experiments.checks.models import check_models
from diarylab.experiments.checks.power import power_lines
from diarylab.experiments.checks.probes import (
    at_check,
    check_endpoint,
    check_key,
    probe_chatbot,
    probes_chatbot,
)
from diarylab.experiments.checks.reach import REACH_TIMEOUT_S, check_logprobs, check_reachable
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.profiles.refs import profile_ids
from diarylab.foundation.errors import Collector, LabError
from diarylab.model_access.loading import resolve
from diarylab.model_access.placement import check_placement
from diarylab.model_access.served import TransportFailure
from diarylab.model_access.settings import LocalSettings
from diarylab.rubric.judging.building import build_judge, default_load_local
from diarylab.rubric.judging.judges import ServedJudgeSpec
from diarylab.rubric.judging.served_judge import ProbeResult, ServedJudge
from diarylab.rubric.probe_prompt import number_probe


def preflight(
    design: Design,
    *,
    environment: bool = True,
    probes: dict[str, ProbeResult] | None = None,
    notes: list[str] | None = None,
    timeout_s: float = REACH_TIMEOUT_S,
) -> list[str]:
    """Raise every problem found (one LabError, or a LabErrors of several); returns the profile
    ids in design order. With environment=False only what the files show is checked (no key
    variables, no probes, no hub: a hub id the local cache lacks goes into `notes`).
    `probes`, when given, receives each served judge's probe (by judge id): what its server
    said it was, for the manifest. A server that does not answer within `timeout_s` is one
    error naming its entry (experiments/checks/reach.py)."""
    found = Collector()
    ids: list[str] = []
    with found.check():
        ids = profile_ids(design)
        # The kind's own inputs (a benchmark's data file, its sample size and grader template)
        # are read when it expands its cells: their problems join the others. Only with the
        # profiles read: without them a hypothesis would seem to name an unknown profile.
        design.kind.cells(design, ids)
    with found.check():
        power_lines(design)  # refuses hypotheses the design's clusters can never support
    unchecked = check_models(design, found, ask_hub=environment)
    _placements(design, found)
    if notes is not None:
        notes += unchecked
        if not environment:
            notes += skipped_offline(design)
    if environment:
        _environment(design, found, probes, timeout_s)
    found.raise_any()
    return ids


def skipped_offline(design: Design) -> list[str]:
    """What only the environment can show, named for each model it concerns: key variables,
    and the answers of the servers the design reaches (the probes)."""
    out = []
    for i, bot in enumerate(design.spec.chatbots):
        if isinstance(bot, ServedChatbotSpec):
            key = bot.endpoint.api_key_env
            probe = " (its probe, thinking included)" if probes_chatbot(bot) else ""
            out.append(
                f"chatbots[{i}] {bot.id}: " + (f"key variable {key} set, " if key else "")
                + f"the server at {bot.endpoint.where} answering{probe}"
            )  # fmt: skip
    for i, spec in enumerate(design.spec.judges):
        if (judge := spec.served()) is not None:
            key = judge.endpoint.api_key_env
            out.append(
                f"judges[{i}] {judge.id}: " + (f"key variable {key} set, " if key else "")
                + f"the server at {judge.endpoint.where} answering the number probe with "
                "log-probabilities in the mode asked"
            )  # fmt: skip
    local = [f"diarist_model {design.spec.writer.model}"] if design.spec.writes else []
    local += [f"chatbots {b.id}" for b in design.spec.chatbots if isinstance(b, LocalChatbotSpec)]
    local += [f"judges {j.id}" for j in design.spec.judges if j.local_weights() is not None]
    if local:
        out.append(f"that the local models load and fit their devices ({', '.join(local)})")
    return out


def _placements(design: Design, found: Collector) -> None:
    """Each local model's placement: the devices it names exist here and an explicit device map
    fits the model (read from its config alone), so a wrong map is refused before anything
    loads."""
    spec, where = design.spec, str(design.path)
    placed: list[tuple[str, LocalSettings, str]] = []
    if spec.writing_model is not None:
        diarist = spec.writing_model
        placed.append((diarist.model, diarist.local, f"{where} diarist_model"))
    placed += [
        (bot.model, bot.local, f"{where} chatbots[{i}]")
        for i, bot in enumerate(spec.chatbots)
        if isinstance(bot, LocalChatbotSpec)
    ]
    placed += [
        (*weights, f"{where} judges[{i}]")
        for i, judge in enumerate(spec.judges)
        if (weights := judge.local_weights()) is not None
    ]
    for name, local, at in placed:
        if local.device is None and local.device_map is None and local.max_memory is None:
            continue  # one default device: nothing to check
        try:
            source = resolve(name)
        except LabError:
            continue  # check_models has said so
        with found.check():
            try:
                check_placement(source, local)
            except LabError as exc:
                message = str(exc).split(" — fix: ")[0].removeprefix(f"{exc.where}: ")
                raise LabError(message, where=f"{at}.{exc.where}", fix=exc.fix) from None


def _environment(
    design: Design,
    found: Collector,
    probes: dict[str, ProbeResult] | None,
    timeout_s: float,
) -> None:
    """Every served model's server answers within timeout_s and serves the model named, every
    key variable is set, and the probes pass; every failure is collected, one line each."""
    where = str(design.path)
    longest = _longest(design)
    for i, bot in enumerate(design.spec.chatbots):
        if not isinstance(bot, ServedChatbotSpec):
            continue
        at = f"{where} chatbots[{i}]"
        with found.check():
            check_reachable(bot.model, bot.endpoint, at, timeout_s, longest.get(bot.id))
            check_key(bot.endpoint.api_key_env, f"{at}.endpoint.api_key_env")
            if probes_chatbot(bot):  # only with its key set: the probe would say the same again
                probe_chatbot(bot, at)
    for i, spec in enumerate(design.spec.judges):
        if (judge := spec.served()) is None:
            continue
        at = f"{where} judges[{i}]"
        with found.check():
            check_reachable(judge.model, judge.endpoint, at, timeout_s, longest.get(judge.id))
            check_key(judge.endpoint.api_key_env, f"{at}.endpoint.api_key_env")
            if judge.endpoint.urls:  # a server of the researcher's own: its limit is theirs
                check_logprobs(judge.model, judge.endpoint, at, judge.logprobs_asked(), timeout_s)
            result = _probe(judge, at)
            if probes is not None:
                probes[judge.id] = result


def _longest(design: Design) -> dict[str, int]:
    """Per served entry, the tokens the plan's longest sequence takes (prompt and new tokens,
    with the room `serve-lines` gives it); empty where the design cannot be planned here."""
    from diarylab.experiments.planning.plan import plan_design
    from diarylab.experiments.planning.serve_lines import context_floor
    from diarylab.experiments.planning.tokens import model_work

    spec = design.spec
    served = [*spec.chatbots, *spec.judges]
    if not any(getattr(getattr(e, "endpoint", None), "urls", None) for e in served):
        return {}  # no server of the researcher's own: nothing to hold a context
    try:
        works = model_work(plan_design(design))
    except LabError:
        return {}
    return {w.who: context_floor(w.longest) for w in works if w.where == "served"}


def _probe(spec: ServedJudgeSpec, where: str) -> ProbeResult:
    """The number probe (rubric/probe_prompt.py) before a run spends a call on the judge: the
    server must answer with log-probabilities, in the mode the design asks for, and the judge
    must start a number on the probe prompt with probability at least probe_floor. It is made
    with check-time transport (one try, a short timeout)."""
    checked = spec.model_copy(update={"endpoint": check_endpoint(spec.endpoint)})
    try:
        judge = build_judge(checked, default_load_local)
        assert isinstance(judge, ServedJudge)
        result = judge.probe(number_probe())
    except TransportFailure as exc:  # no answer: said for a check, not for a stopped run
        raise at_check(exc, where, "the judge failed its probe") from None
    except LabError as exc:
        if "refused the request" in str(exc):
            raise at_check(exc, where, "the judge failed its probe") from None
        # The judge's own problem (no log-probabilities, a tokenizer that will not load) with
        # its own fix: one fix per line, never two joined.
        raise LabError(
            f"the judge failed its probe: {str(exc).split(' — fix: ')[0]}",
            where=where,
            fix=exc.fix or "see `diarylab judge probe` for this judge",
        ) from None
    verdict = spec.probe_verdict(result.mode, result.root_coverage)
    if verdict != "ok":
        raise LabError(
            f"the judge's probe was {verdict} (first tokens {list(result.first_tokens)[:5]})",
            where=where,
            fix="see `diarylab judge probe` for this judge: a top-k chat judge whose server "
            "drops or renders the prefill differently reads low — name its tokenizer for exact "
            "reading; a server ignoring logprob_token_ids needs top_logprobs = vocabulary size; "
            "lower probe_floor only for a judge that cannot be read better",
        )
    return result
