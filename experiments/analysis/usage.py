"""Model calls and tokens per model, from the store's call records (every call's result is
stored through the one cached-call door, with the usage its model reported), for every kind.

Per role (the call's kind: diarist, chatbot, judge, grader, projection) × model id: how many
calls the store holds, how many the latest run made and how many earlier runs of the folder
made (a resumed run reads those back from the store instead of calling again), and the prompt
and completion tokens the records state. A record states them as an API or server reported
them (`usage`), or as the lab's local runtime counted them (`new_tokens` written, a judge
reading's `prompt_tokens`); where no record of a model states one, the table says so rather
than counting zero."""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.manifest_view import shown_path
from diarylab.experiments.engine.store import Store

RESUMES = "resumes.jsonl"  # experiments/engine/runfolder.py: one record per resumed run
COLUMNS = (
    "role", "model", "calls", "made_last_run", "made_earlier", "prompt_tokens",
    "prompt_recorded", "completion_tokens", "completion_recorded",
)  # fmt: skip
# What a record states of its tokens: an API's or server's usage, else the local runtime's count.
_PROMPT = ("$.usage.prompt_tokens", "$.prompt_tokens")
_COMPLETION = ("$.usage.completion_tokens", "$.new_tokens")


def last_run_start(folder: Path) -> float | None:
    """When the latest run of the folder began: its resume record's time (None for a folder
    never resumed: every stored call is then the first run's)."""
    path = Path(folder) / RESUMES
    if not path.is_file():
        return None
    starts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            if "started" in record:  # the call records' clock, to the microsecond
                starts.append(float(record["started"]))
                continue
            # older records: to the second (a call of the run before, made in the same second
            # the resume began, counts as the resumed run's)
            stamp = record["resumed"]
            starts.append(float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))))
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line of a killed run: the earlier records still count
    return max(starts) if starts else None


def usage_table(store: Store, folder: Path) -> pd.DataFrame:
    """One row per role × model (see the module docstring), sorted by role then model."""
    since = last_run_start(folder)
    cut = 0.0 if since is None else since  # never resumed: every call is the first run's
    rows = store.call_totals([_PROMPT, _COMPLETION], cut)
    out = [
        (
            kind,
            model,
            n,
            int(last or 0),
            n - int(last or 0),
            prompt or 0,
            n_prompt,
            wrote or 0,
            n_wrote,
        )
        for kind, model, n, last, prompt, n_prompt, wrote, n_wrote in rows
    ]
    return pd.DataFrame(out, columns=list(COLUMNS))


def _tokens(total: str, recorded: str) -> Callable[[pd.Series], str]:
    def shown(row: pd.Series) -> str:
        n, of = int(row[recorded]), int(row["calls"])
        if n == 0:
            return "not recorded"
        return f"{int(row[total])}" + ("" if n == of else f" ({n} of {of} calls)")

    return shown


def section(frame: pd.DataFrame, folder: Path | None = None) -> list[str]:
    """The report's "## Model calls and tokens" section (Markdown); a model given as a folder
    is named as manifest_view names paths (never the machine's path)."""
    columns: dict[str, str | Callable[[pd.Series], str]] = {
        "role": "role",
        "model": lambda r: shown_path(str(r["model"]), folder),
    }
    return [
        "## Model calls and tokens\n",
        "Per model, from the store's call records: the calls stored, how many the latest run "
        "made and how many earlier runs of this folder made (read back, not called again, by a "
        "resumed run), and the tokens the records state (an API's or server's reported usage; "
        "the local runtime's own count of the tokens it wrote, and of a judge reading's prompt). "
        "`not recorded`: no record of that model states it (a local writer does not store its "
        "prompt's length; a judge reading writes no tokens). At full precision: "
        "`tables/usage.csv`.\n",
        md.table(
            frame,
            columns
            | {"calls": "calls"}
            | {"made by the latest run": "made_last_run", "made by earlier runs": "made_earlier"}
            | {"prompt tokens": _tokens("prompt_tokens", "prompt_recorded")}
            | {"completion tokens": _tokens("completion_tokens", "completion_recorded")},
        ),
    ]


def plan_section(store: Store, folder: Path) -> list[str]:
    """The report's "## Plan vs run" section: per judge and question, the prompts and HTTP
    requests per reading the plan said (plan.json, kept when the run began) beside what the
    stored readings state they took — the figures `diarylab status` prints."""
    from diarylab.experiments.analysis.plan_vs_run import plan_vs_run

    lines = plan_vs_run(folder, store.judge_asks(), usage_table(store, folder))
    if len(lines) == 1:  # no plan kept: say so
        return ["## Plan vs run\n", lines[0].removeprefix("plan vs run: ").capitalize() + ".\n"]
    return [
        "## Plan vs run\n",
        "What `diarylab plan` said each judge's readings would take (the plan kept in "
        "`plan.json` when the run began) against what the stored readings state they took, per "
        "reading: a served judge's prompts and HTTP requests (a yes/no reading sent in a list of "
        "prompts counts its share of the list's requests); a local judge is counted in "
        "readings only. Then each model's tokens, planned and stated by its records.\n",
        f"The plan the run is held to: {lines[0].split('; the plan: ', 1)[-1]}.\n",
        *(f"- {line.strip()}" for line in lines[1:]),
        "",
    ]
