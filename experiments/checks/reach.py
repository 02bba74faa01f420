"""Whether a server a design names is there, asked before anything is sent to it: one `GET
/models` to each base URL of a self-hosted (OpenAI-compatible) endpoint, within a few seconds,
and the model the design names among the models it serves.

A check or a plan that met a dead server used to wait out the run's own retries (102 s for
`plan --measure`, then it went on with assumed figures). This answers in at most `timeout_s`
per URL, names the design entry, and says what to do. Endpoints with no base URL (an API
provider's default) are not asked: their keys and probes say enough."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import EndpointSettings

# What `design check`, `run` and `plan --measure` wait for a server's answer by default
# (`--timeout` changes it).
REACH_TIMEOUT_S = 10.0
# litellm's providers of OpenAI-compatible servers: the name after the prefix is the model
# name the server lists.
PROVIDERS = ("hosted_vllm/", "openai/")


def served_name(model: str) -> str:
    """The model's name as its server lists it (litellm's provider prefix removed)."""
    for prefix in PROVIDERS:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


def check_reachable(
    model: str,
    endpoint: EndpointSettings,
    where: str,
    timeout_s: float = REACH_TIMEOUT_S,
    context: int | None = None,
) -> None:
    """Every base URL answers `/models` within `timeout_s` and lists the model (a server
    without a `/models` route is taken at its word); `context`: the tokens the plan's longest
    sequence for this entry takes, which a vLLM server's `max_model_len` must hold."""
    name = served_name(model)
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    for url in endpoint.urls:
        request = urllib.request.Request(url.rstrip("/") + "/models")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                listed = json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            if error.code in (404, 405):
                continue  # no model list here: the probe will say whether the model answers
            if error.code in (401, 403):
                raise LabError(
                    f"the server at {url} refused the key (HTTP {error.code})",
                    where=f"{where}.endpoint.api_key_env",
                    fix="check the key in the variable endpoint.api_key_env names",
                ) from None
            raise _unreachable(url, f"HTTP {error.code}", where, timeout_s) from None
        except (TimeoutError, urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise _unreachable(url, str(reason) or type(error).__name__, where, timeout_s) from None
        cards = [m for m in listed.get("data", []) if isinstance(m, dict)]
        names = [str(m.get("id")) for m in cards]
        if names and name not in names:
            raise LabError(
                f"the server at {url} serves {', '.join(names)}, not {name!r}",
                where=f"{where}.model",
                fix=f'name the model as the server lists it (model = "hosted_vllm/{names[0]}"), '
                f"or serve {name} there (vllm serve ... --served-model-name {name})",
            )
        held = next((m.get("max_model_len") for m in cards if m.get("id") == name), None)
        if context is not None and isinstance(held, int) and held < context:
            raise LabError(
                f"the server at {url} holds {held} tokens a sequence; the plan's longest prompt "
                f"and reply for this entry take about {context}",
                where=f"{where}.endpoint.base_url",
                fix=f"restart it with --max-model-len {context} or more (`diarylab serve-lines "
                "DESIGN` prints the line)",
            )


def check_logprobs(
    model: str, endpoint: EndpointSettings, where: str, asked: int, timeout_s: float
) -> None:
    """One request for `asked` top log-probabilities of one token: a vLLM server started with a
    lower --max-logprobs refuses it (vllm/sampling_params.py: "greater than max allowed"),
    which a run would meet only at its first reading."""
    name = served_name(model)
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    body = {"model": name, "prompt": "Hi", "max_tokens": 1, "logprobs": asked, "temperature": 0}
    for url in endpoint.urls:
        request = urllib.request.Request(
            url.rstrip("/") + "/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s):
                pass
        except urllib.error.HTTPError as error:
            said = error.read().decode(errors="replace")
            if "max allowed" in said and "logprobs" in said:
                raise LabError(
                    f"the server at {url} refuses {asked} log-probabilities a request, which "
                    "this judge's readings ask",
                    where=f"{where}.endpoint.base_url",
                    fix=f"restart it with --max-logprobs {asked} or more (`diarylab "
                    "serve-lines DESIGN` prints the line)",
                ) from None
        except (TimeoutError, urllib.error.URLError, OSError):
            continue  # the probe says what a server that does not answer here does


def _unreachable(url: str, reason: str, where: str, timeout_s: float) -> LabError:
    return LabError(
        f"no answer from the server at {url} within {timeout_s:g} s ({reason})",
        where=f"{where}.endpoint.base_url",
        fix="start the server (docs/gpu-study.md gives each serve line) or correct "
        "endpoint.base_url; `--timeout` waits longer, `design check --offline` checks the "
        "files alone",
    )
