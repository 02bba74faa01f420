"""A judge named on the command line (`--judge smollm2`, `--judge litellm:MODEL`) as the spec a
design's [[judges]] table would give: the options typed beside it fill the spec's fields."""

from __future__ import annotations

from typing import Any

from diarylab.foundation.datafiles import validate
from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import EndpointSettings, LocalSettings
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec

SERVED_PREFIX = "litellm:"


def judge_spec(
    name: str,
    *,
    endpoint: EndpointSettings | None = None,
    local: LocalSettings | None = None,
    served: dict[str, Any] | None = None,
) -> LocalJudgeSpec | ServedJudgeSpec:
    """The spec for a judge named on the command line: a local model, or litellm:MODEL with
    `served` holding ServedJudgeSpec's reading fields that were given (tokenizer, mode, ...)."""
    served = {k: v for k, v in (served or {}).items() if v is not None}
    max_error = served.pop("max_error", None)  # both kinds take it
    if max_error is not None and not name.startswith(SERVED_PREFIX):
        local_fields = {"max_error": max_error}
    else:
        local_fields = {}
        if max_error is not None:
            served["max_error"] = max_error
    if not name or not name.strip():
        raise LabError("empty judge name", where="--judge", fix="name a model or litellm:MODEL")
    if name.startswith(SERVED_PREFIX):
        model = name[len(SERVED_PREFIX) :].strip()
        if not model:
            raise LabError(
                f"{name!r} names no model",
                where="--judge",
                fix="write litellm:PROVIDER/MODEL, e.g. litellm:hosted_vllm/NAME",
            )
        fields = {
            "id": "judge",
            "kind": "litellm",
            "model": model,
            "endpoint": endpoint or EndpointSettings(),
            **served,
        }
        try:
            return validate(ServedJudgeSpec, fields, "--judge")
        except LabError as exc:
            # Name the option the user typed (--node-cutoff), not the spec's field.
            bad = next((k for k in served if f" {k}:" in str(exc)), None)
            if bad is None:
                raise
            flag = "--" + bad.replace("_", "-")
            message = str(exc).split(" — fix: ")[0].split(f" {bad}: ", 1)[-1]
            raise LabError(message, where=flag, fix=f"give {flag} a valid value") from None
    if (endpoint and endpoint != EndpointSettings()) or served:
        raise LabError(
            "endpoint options and served reading options (--tokenizer, --mode, ...) are for "
            "served judges",
            where="--judge",
            fix=f"write the judge as litellm:MODEL, or drop those options for {name!r}",
        )
    fields = {"id": "judge", "kind": "local", "model": name, "local": local or LocalSettings()}
    return validate(LocalJudgeSpec, {**fields, **local_fields}, "--judge")
