"""The `vllm` diarist engine: generation by vLLM, in a worker process of its own, behind the
local runtime's interface (LocalModel.generate and steering.apply.generate_steered route to it
when a LocalModel carries one).

How the two environments live together: vLLM's CPU build pins transformers < 5.20 and the lab
runs 5.24, so vLLM is never imported here. scripts/setup-vllm.sh makes vLLM's venv (GPU
machines get the CUDA build there), and this module starts model_access/vllm_worker.py with that
venv's python and drives it with JSON lines. The lab keeps its own transformers copy of the
model for everything but generation (chat templates, token ids, vector extraction, calibration,
local judges); the worker loads the same weights in the same dtype.

Steering crosses the boundary as numbers, not code: per steered row, the vector to add at each
layer (the lab's Steer.addition: strength × residual norm × unit direction, float32) and which
positions it covers. Seeds go per row (vLLM's per-request generator), so a row's text does not
depend on its batch and a resumed run writes what an unbroken one wrote."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import GenerationSettings, VllmSettings

WORKER = Path(__file__).with_name("vllm_worker.py")
DTYPES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def vllm_python() -> Path:
    """The vLLM venv's python: DIARYLAB_VLLM_PYTHON, else scripts/setup-vllm.sh's venv."""
    if named := os.environ.get("DIARYLAB_VLLM_PYTHON"):
        return Path(named)
    venv = os.environ.get("DIARYLAB_VLLM_VENV")
    if not venv:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        venv = str(Path(cache) / "diarylab" / "vllm-venv")
    return Path(venv) / "bin" / "python"


@dataclass(frozen=True)
class RowSteer:
    """One row's steering as the worker applies it: a vector per layer and the positions."""

    key: str  # identifies the steering (a hash of its spec): the worker's prefix-cache salt
    positions: str  # "response" | "prompt" | "both" (steering.settings.Positions)
    additions: dict[int, torch.Tensor]  # layer -> (hidden,) float32

    def wire(self) -> dict[str, Any]:
        return {
            "positions": self.positions,
            "additions": {str(k): v.to(torch.float32).tolist() for k, v in self.additions.items()},
        }


def steer_key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class EngineOutput:
    token_ids: tuple[int, ...]  # as generated, a stop token included
    finish_reason: str | None


@dataclass
class VllmEngine:
    """A lazily started vLLM worker for one model (folder or hub id) in one dtype."""

    location: str
    dtype: torch.dtype
    settings: VllmSettings
    stop_token_ids: tuple[int, ...]
    _proc: subprocess.Popen[str] | None = field(default=None, repr=False)
    _answers: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    described: dict[str, Any] = field(default_factory=dict)
    log: Path | None = None
    where: str = "[diarist_model].engine"  # the design field an error names

    def key(self) -> dict[str, Any]:
        """What enters cache keys: the engine and the settings that change its numbers."""
        # "steering": where the steering is added — inside vLLM's compiled model
        # (model_access/vllm_steered_llama.py), not by an eager hook as before.
        return {
            "name": "vllm",
            "dtype": DTYPES.get(self.dtype, str(self.dtype)),
            "steering": "in-model",
        }

    def command(self) -> list[str]:
        s = self.settings
        command = [
            str(vllm_python()),
            str(WORKER),
            "--model",
            self.location,
            "--dtype",
            DTYPES.get(self.dtype, "auto"),
            "--max-model-len",
            str(s.max_model_len),
            "--max-num-seqs",
            str(s.max_num_seqs),
            "--gpu-memory-utilization",
            str(s.gpu_memory_utilization),
        ]
        if s.block_size:
            command += ["--block-size", str(s.block_size)]
        return command

    def check(self) -> None:
        """Refuse early (before a run claims its folder) when vLLM's venv is not there."""
        python = vllm_python()
        if not python.exists():
            raise LabError(
                f"the vLLM engine's python {python} does not exist",
                where=self.where,
                fix="run scripts/setup-vllm.sh (or set DIARYLAB_VLLM_PYTHON), or set "
                'engine = "transformers"',
            )

    def start(self) -> None:
        self.check()
        read, write = os.pipe()
        env = {**os.environ, "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")  # GiB of KV cache on CPU (vLLM: 4)
        env.pop("PYTHONPATH", None)
        self.log = Path(tempfile.mkstemp(prefix="diarylab-vllm-", suffix=".log")[1])
        with self.log.open("w") as sink:
            self._proc = subprocess.Popen(
                [*self.command(), "--answers", str(write)],
                stdin=subprocess.PIPE,
                stdout=sink,
                stderr=sink,
                pass_fds=(write,),
                text=True,
                env=env,
            )
        os.close(write)
        self._answers = os.fdopen(read, "r")
        ready = self._read()
        self.described = {k: v for k, v in ready.items() if k != "ok"}

    def _read(self) -> dict[str, Any]:
        line = self._answers.readline()
        if not line:
            code = self._proc.wait() if self._proc else None
            raise LabError(
                f"the vLLM worker ended (exit {code}) without answering; its log ends:\n"
                f"{self._log_tail()}",
                where=self.where,
                fix=f"read the whole log in {self.log}",
            )
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise LabError(
                f"the vLLM worker failed: {answer.get('error')}",
                where=self.where,
                fix=f"read its log in {self.log}",
            )
        return answer

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:] if self.log else ""
        except OSError:
            return ""

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        settings: GenerationSettings,
        seeds: Sequence[int] | None,
        steers: Sequence[RowSteer | None],
    ) -> list[EngineOutput]:
        if len(steers) != len(prompts) or (seeds is not None and len(seeds) != len(prompts)):
            raise ValueError("one seed and one steer (or None) per prompt")
        table = {s.key: s.wire() for s in steers if s is not None}
        rows = [
            {
                "prompt": list(p),
                "seed": None if seeds is None else int(seeds[i]),
                "steer": None if steers[i] is None else steers[i].key,  # type: ignore[union-attr]
            }
            for i, p in enumerate(prompts)
        ]
        request = {
            "op": "generate",
            "rows": rows,
            "steers": table,
            "max_new_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "stop_token_ids": list(self.stop_token_ids),
        }
        with self._lock:
            if self._proc is None:
                self.start()
            assert self._proc is not None and self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            answer = self._read()
        return [
            EngineOutput(tuple(int(t) for t in o["token_ids"]), o.get("finish_reason"))
            for o in answer["outputs"]
        ]

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps({"op": "close"}) + "\n")
                proc.stdin.close()
                proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            if self._answers is not None:
                self._answers.close()
