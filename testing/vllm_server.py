"""A real vLLM server for the `vllm` test tier: the CPU build in the lab's vLLM venv
(scripts/setup-vllm.sh), serving the converted embedded default (SmolLM2-135M-Instruct) in
float32 on loopback. One server per test session (tests/conftest.py `vllm_server`); it is
stopped by its own process group's id (the api server and the engine and worker processes it
spawns), never by name.

The flags are the ones measured on 2 CPU cores (issue 25): float32 so an exact reading equals
the local one; --block-size 32 because on CPU the default block is 128 and only full blocks are
prefix-cached, so short judge prompts would never hit the cache; --max-logprobs 20 as vLLM's
default; VLLM_CPU_KVCACHE_SPACE=2 (GiB) instead of a share of the machine's memory;
--enforce-eager because the compiled model's warm-up took 62 of the server's 92-95 s start on
2 cores (torch.compile, 2026-12-04), eager starts in 28 s, and what this tier checks (readings,
lists, probes, retries, resumes) is the served arithmetic, not the compiler: the compiled path
is held to transformers by tests/model_access/test_vllm_engine.py. Benches pass eager=False to time
vLLM as a researcher runs it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# the repository (resolved: this module is imported through the link diarylab/testing)
ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup-vllm.sh"
SERVED_NAME = "smollm2"
MAX_MODEL_LEN = 2048
START_TIMEOUT_S = float(os.environ.get("DIARYLAB_VLLM_START_TIMEOUT_S", "600"))
STARTED: list[VllmServer] = []  # for the session's summary line (tests/conftest.py)


@dataclass(frozen=True)
class VllmServer:
    base_url: str  # http://127.0.0.1:PORT/v1
    model_folder: Path  # what it serves (tokenizer files included)
    served_name: str
    pid: int
    log: Path
    start_s: float  # seconds from launch to a healthy /health

    @property
    def litellm_model(self) -> str:
        return f"hosted_vllm/{self.served_name}"


def vllm_python() -> Path:
    """The vLLM venv's python, installing it first if its stamp is missing or stale (instant
    when installed: `make test` has already run the script)."""
    done = subprocess.run([str(SETUP)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/setup-vllm.sh failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@dataclass(frozen=True)
class Launch:
    """A server process on its way up (`launch`), made a VllmServer by `wait_up`."""

    server: VllmServer
    process: subprocess.Popen[bytes]
    began: float


def launch(
    model_folder: Path,
    log: Path,
    *,
    eager: bool = True,
    extra_args: tuple[str, ...] = (),
    max_model_len: int = MAX_MODEL_LEN,
    port: int | None = None,
    kv_cache_gib: int = 2,
) -> Launch:
    """Start a server of `model_folder` on a loopback port (a free one unless `port` is given:
    a server brought back where a killed one was) without waiting for it, so that a test
    module can bring several up at once (their start-ups overlap on the CPU); `extra_args` are
    further `vllm serve` flags (a reasoning parser, a tokenizer mode); `kv_cache_gib` the KV
    cache it takes, in whole GiB as vLLM reads the variable (a tiny model needs 1)."""
    python = vllm_python()
    port = port or free_port()
    command = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",  # `vllm serve` fails: the dist is named vllm-cpu
        "--model",
        str(model_folder),
        "--served-model-name",
        SERVED_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        str(max_model_len),
        "--max-num-seqs",
        "8",
        "--max-logprobs",
        "20",
        "--enable-prefix-caching",
        "--block-size",
        "32",
        *(["--enforce-eager"] if eager else []),
        *extra_args,
    ]
    env = {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("PYTHONPATH", None)  # the lab's packages stay out of vLLM's environment
    began = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    server = VllmServer(
        f"http://127.0.0.1:{port}/v1", model_folder, SERVED_NAME, proc.pid, log, 0.0
    )
    return Launch(server, proc, began)


def wait_up(launched: Launch) -> VllmServer:
    """The launched server once /health answers; on a failed start (or Ctrl-C while waiting)
    nothing is left running and the error carries the log's tail."""
    server, proc, began = launched.server, launched.process, launched.began
    health = server.base_url.removesuffix("/v1") + "/health"
    try:
        while not healthy(health):
            if proc.poll() is not None or time.monotonic() - began > START_TIMEOUT_S:
                tail = server.log.read_text(errors="replace")[-4000:]
                raise RuntimeError(f"the vLLM server did not come up (log {server.log}):\n{tail}")
            time.sleep(1.0)
    except BaseException:
        stop(server)
        raise
    seconds = round(time.monotonic() - began, 1)
    up = VllmServer(
        server.base_url, server.model_folder, SERVED_NAME, proc.pid, server.log, seconds
    )
    STARTED.append(up)
    return up


def start(
    model_folder: Path,
    log: Path,
    *,
    eager: bool = True,
    extra_args: tuple[str, ...] = (),
    max_model_len: int = MAX_MODEL_LEN,
) -> VllmServer:
    """A server of `model_folder`, up (see `launch`)."""
    return wait_up(
        launch(model_folder, log, eager=eager, extra_args=extra_args, max_model_len=max_model_len)
    )


def start_together(*launches: Launch) -> list[VllmServer]:
    """Every launched server up, or none left running."""
    up: list[VllmServer] = []
    try:
        for launched in launches:
            up.append(wait_up(launched))
    except BaseException:
        for launched in launches:
            stop(launched.server)
        raise
    return up


def kill(server: VllmServer) -> None:
    """SIGKILL to the server's whole process group at once, as an out-of-memory kill or a
    preempted machine ends it: no shutdown, nothing flushed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(server.pid, 0)


def stop(server: VllmServer, grace_s: float = 10.0) -> None:
    """SIGTERM to the server's own process group (it was started in a new session, so the group
    id is its pid), SIGKILL to whatever is left after `grace_s`."""
    stop_all([server], grace_s)


def stop_all(servers: Sequence[VllmServer], grace_s: float = 10.0) -> None:
    """`stop` for several servers at once: each is told first, then all are waited for
    together, so that their shutdowns overlap."""
    told = []
    for server in servers:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
            told.append(server)
    deadline = time.monotonic() + grace_s
    while told and time.monotonic() < deadline:
        told = [s for s in told if _alive(s)]
        time.sleep(0.2)
    for server in told:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
    for server in servers:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server.pid, 0)


def _alive(server: VllmServer) -> bool:
    try:
        os.killpg(server.pid, 0)
    except ProcessLookupError:
        return False
    return True
