"""A short diary run with a served chatbot and a served exact judge, planned before it runs
and counted by the servers themselves: the plan's tokens per served model beside the servers'
Prometheus counters for the run (vllm:prompt_tokens, vllm:prompt_tokens_cached,
vllm:generation_tokens, vllm:request_success; vllm/v1/metrics/loggers.py). Used by
tests/experiments/planning/test_vllm_plan_tokens.py and bench/plan_tokens.py."""

from __future__ import annotations

import contextlib
import io
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from diarylab.testing.lab_fixtures import design_text

COUNTERS = {
    "prompt": "vllm:prompt_tokens_total",
    "cached": "vllm:prompt_tokens_cached_total",
    "generated": "vllm:generation_tokens_total",
    "requests": "vllm:request_success_total",
}
# the plan's figure for each counter (`plan --json` gpu.models.NAME)
PLANNED = {
    "prompt": "prompt_tokens",
    "cached": "cached_tokens",
    "generated": "generated_tokens_at_most",
    "requests": "requests",
}
ENTRY_TOKENS, REPLY_TOKENS = 48, 32
CHATBOT, JUDGE = "open-chat", "served"


def server_counts(server) -> dict[str, float]:
    """The server's counters, summed over their labels."""
    with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/metrics") as answer:
        lines = answer.read().decode().splitlines()
    return {
        name: sum(
            float(line.rsplit(" ", 1)[1])
            for line in lines
            if line.startswith(counter) and line[len(counter)] in " {"
        )
        for name, counter in COUNTERS.items()
    }


@dataclass(frozen=True)
class Counted:
    planned: dict[str, float]  # the plan's figure for each counter
    server: dict[str, float]  # what the server counted for the run

    def ratio(self, name: str) -> float:
        return self.planned[name] / self.server[name] if self.server[name] else float("nan")

    def computed(self) -> tuple[float, float]:
        """Prompt tokens computed (sent less cached): planned, counted."""
        return (
            self.planned["prompt"] - self.planned["cached"],
            self.server["prompt"] - self.server["cached"],
        )


def design(model_folder: Path, chatbot, judge, judge_tokenizer: Path) -> str:
    """One diarist, three entries, the fixed reply and a served chatbot (its thinking kept
    apart), one served judge read exactly (max_error 0: every trie node, a count the plan
    knows) on the pattern score and the behavior rubric."""
    chatbots = f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "{CHATBOT}"
kind = "litellm"
model = "{chatbot.litellm_model}"
generation = {{ max_new_tokens = {REPLY_TOKENS}, temperature = 0.7 }}
endpoint = {{ base_url = "{chatbot.base_url}", concurrency = 4, max_retries = 2 }}
thinking = "apart"
"""
    judges = f"""
[[judges]]
id = "{JUDGE}"
kind = "openai-compatible"
model = "{judge.litellm_model}"
tokenizer = "{judge_tokenizer}"
max_error = 0.0
endpoint = {{ base_url = "{judge.base_url}", concurrency = 8, max_retries = 2, backoff_s = 0.2 }}
"""
    text = design_text(
        model_folder, None, entries=3, diarists='["amara"]', chatbots=chatbots, judges=judges
    )
    text = text.replace("max_new_tokens = 8,", f"max_new_tokens = {ENTRY_TOKENS},")
    return text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["pattern"]')


def plan_and_run(
    folder: Path, model_folder: Path, chatbot, judge, judge_tokenizer: Path
) -> dict[str, Counted]:
    """`diarylab plan --json`, then the run, counted by both servers."""
    from diarylab.experiments.cli import main
    from diarylab.testing.kill_resume import finish

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "design.toml"
    path.write_text(design(model_folder, chatbot, judge, judge_tokenizer))
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["plan", str(path), "--json"]) == 0
    models = json.loads(printed.getvalue())["gpu"]["models"]
    servers = {CHATBOT: chatbot, JUDGE: judge}
    before = {name: server_counts(s) for name, s in servers.items()}
    finish(path, folder / "run", timeout_s=600)
    after = {name: server_counts(s) for name, s in servers.items()}
    return {
        name: Counted(
            {k: float(models[name][v]) for k, v in PLANNED.items()},
            {k: after[name][k] - before[name][k] for k in COUNTERS},
        )
        for name in servers
    }
