"""One judge's part of `diarylab plan --json` (and of the plan.json a run keeps): prompts and
HTTP requests, expected and at most, per reading and in all, and what `--measure` measured."""

from __future__ import annotations

from typing import Any

from diarylab.experiments.planning.judge_plan import JudgePlan


def judge_json(j: JudgePlan) -> dict[str, Any]:
    c = j.cost
    return {
        "mode": c.mode,
        "expected": j.requests("expected"),
        "expected_basis": c.number_expected.basis if j.readings.get("number") else "trie",
        "exact": j.requests("exact"),
        "worst": j.requests("worst"),
        "http_expected": j.http(),
        "http_if_alike": j.http(alike=True),
        "http_parts": {
            "number": j.number_http(part="run"),
            "number_if_alike": j.number_http(alike=True, part="run"),
            "number_profiles": j.number_http(part="profiles"),
            "number_profiles_if_alike": j.number_http(alike=True, part="profiles"),
            "yes_no": j.yes_no_http(),
            "probe": c.probe.http,
            "grader_answers": j.grader_answers,
        },
        "per_reading": {
            "number_expected": c.number_expected.prompts,
            "number_exact": c.number_exact.prompts,
            "number_worst": c.number_worst.prompts,
            "yes_no": c.yes_no.prompts,
        },
        "grader_answers": j.grader_answers,
        "probe": {"prompts": c.probe.prompts, "http_requests": c.probe.http},
        "profile_readings": j.profile_readings,
        "note": c.note,
        "measured": None
        if j.measured_range() is None
        else {
            "prompts_range": list(j.measured_range() or ()),
            "per_reading": {
                q: {"prompts": list(m.prompts), "http_requests": list(m.http)}
                for q, m in (j.measure.by_question.items() if j.measure else ())
            },
        },
    }
