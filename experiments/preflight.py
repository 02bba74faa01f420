"""The complete check of a design before anything is claimed, shared by `design check` and the
start of `run`: the schema (ranges of every setting, every name a hypothesis uses) has passed
when the design loaded; here every profile file and vector, every model name, every key
variable, and a probe of every served judge (rubric/probe_prompt.py: the mode its answers allow
and P(it starts a number)). A design that fails here leaves nothing behind."""

from __future__ import annotations

import os
from collections.abc import Callable

from chatbots.specs import LocalChatbotSpec, ServedChatbotSpec
from experiments.engine.design import Design
from experiments.power_check import power_lines
from experiments.profile_making import profile_ids
from foundation.errors import LabError
from model_access.loading import resolve
from model_access.placement import check_placement
from model_access.settings import LocalSettings
from rubric.judge_base import Judge
from rubric.judges import (
    LocalJudgeSpec,
    ServedJudgeSpec,
    build_judge,
    default_load_local,
    probe_verdict,
)
from rubric.probe_prompt import number_probe
from rubric.served_judge import ProbeResult, ServedJudge


def preflight(
    design: Design, *, environment: bool = True, probes: dict[str, ProbeResult] | None = None
) -> list[str]:
    """Raise the first problem as a LabError; returns the profile ids in design order. With
    environment=False only what the files show is checked (no key variables, no probes).
    `probes`, when given, receives each served judge's probe (by judge id): what its server
    said it was, for the manifest."""
    ids = profile_ids(design)
    power_lines(design)  # refuses hypotheses the design's clusters can never support
    spec = design.spec
    where = str(design.path)
    if spec.diarist_model is not None:
        _model(spec.diarist_model.model, f"{where} diarist_model.model")
        _placement(spec.diarist_model.model, spec.diarist_model.local, f"{where} diarist_model")
    for i, bot in enumerate(spec.chatbots):
        at = f"{where} chatbots[{i}]"
        if isinstance(bot, LocalChatbotSpec):
            _model(bot.model, f"{at}.model")
            _placement(bot.model, bot.local, at)
        elif isinstance(bot, ServedChatbotSpec) and environment:
            _key(bot.endpoint.api_key_env, f"{at}.endpoint.api_key_env")
    for i, judge in enumerate(spec.judges):
        at = f"{where} judges[{i}]"
        if isinstance(judge, LocalJudgeSpec):
            _model(judge.model, f"{at}.model")
            _placement(judge.model, judge.local, at)
            continue
        if environment:
            _key(judge.endpoint.api_key_env, f"{at}.endpoint.api_key_env")
            result = _probe(judge, at, lambda j=judge: build_judge(j, default_load_local))  # type: ignore[misc]
            if probes is not None:
                probes[judge.id] = result
    return ids


def _model(name: str, where: str) -> None:
    try:
        resolve(name)
    except LabError as exc:
        raise LabError(str(exc).split(" — fix: ")[0], where=where, fix=exc.fix) from None


def _placement(name: str, local: LocalSettings, at: str) -> None:
    """The devices a model's placement names exist here and an explicit device map fits the
    model (read from its config alone), so a wrong map is refused before anything loads."""
    try:
        check_placement(resolve(name), local)
    except LabError as exc:
        message = str(exc).split(" — fix: ")[0].removeprefix(f"{exc.where}: ")
        raise LabError(message, where=f"{at}.{exc.where}", fix=exc.fix) from None


def _key(name: str | None, where: str) -> None:
    if name and not os.environ.get(name):
        raise LabError(
            f"environment variable {name} is not set",
            where=where,
            fix=f"export {name}=<your key> before running (the design names the variable only)",
        )


def _probe(spec: ServedJudgeSpec, where: str, make: Callable[[], Judge]) -> ProbeResult:
    """The number probe (rubric/probe_prompt.py) before a run spends a call on the judge: the
    server must answer with log-probabilities, in the mode the design asks for, and the judge
    must start a number on the probe prompt with probability at least probe_floor."""
    try:
        judge = make()
        assert isinstance(judge, ServedJudge)
        result = judge.probe(number_probe())
    except LabError as exc:
        raise LabError(
            f"the judge failed its probe: {exc}",
            where=where,
            fix="start the server (or fix endpoint.base_url) and serve the judge with "
            "log-probabilities; `design check --offline` checks the files alone",
        ) from None
    verdict = probe_verdict(spec, result.mode, result.root_coverage)
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
