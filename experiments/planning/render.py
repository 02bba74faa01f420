"""The plan as text: `diarylab plan`'s lines and the totals `design check` prints."""

from __future__ import annotations

from collections.abc import Mapping

from diarylab.experiments.planning.judge_plan import JudgePlan
from diarylab.experiments.planning.plan import Plan

QUESTION = {"number": "0–100", "yes_no": "yes/no"}


def n(value: float | None) -> str:
    if value is None:
        return "unknown"
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def totals_line(plan: Plan) -> str:
    """One line: texts, readings, the judges' prompts expected (and exact), the progress total."""
    texts = sum(count for t, count in plan.texts() if t.model)
    readings = sum(sum(j.all_readings().values()) for j in plan.judges)
    expected, exact = plan.total("expected"), plan.total("exact")
    return (
        f"plan: texts by models {n(texts)}, judge readings {n(readings)}, judge prompts "
        f"{n(expected)} expected ({n(exact)} reading every trie node), "
        f"progress total {n(plan.workload.units(len(plan.judges)))} steps — `diarylab plan` "
        "for the details"
    )


def plan_lines(plan: Plan, rates: Mapping[str, float]) -> list[str]:
    d = plan.design
    out = [f"{d.name} ({d.kind.name}): {plan.cells} cells", "texts:"]
    for t, count in plan.texts():
        per = " (per judge)" if t.per_judge else ""
        cost = "" if t.model else ", no model call"
        most = f", ≤ {t.max_tokens} tokens each" if t.max_tokens and t.model else ""
        out.append(f"  {t.phase:<9} {t.label}{per}: {n(count)}{most}{cost}")
    out.append("judges:")
    for j in plan.judges:
        out += _judge_lines(j)
    out.append(
        f"total judge prompts: {n(plan.total('expected'))} expected · "
        f"{n(plan.total('exact'))} reading every trie node · {n(plan.total('worst'))} "
        "with every decimal mark followed too"
    )
    tokens = plan.generated_tokens()
    if tokens:
        spread = ", ".join(f"{phase} {n(v)}" for phase, v in tokens.items())
        out.append(f"generated tokens (at most: every text at its max_new_tokens): {spread}")
    out.append(
        f"progress total: {n(plan.workload.units(len(plan.judges)))} steps (texts + readings)"
    )
    hours = plan.hours(rates)
    spread = ", ".join(f"{phase} {_duration(h)}" for phase, h in hours.items())
    given = "at the rates given" if rates else "give --rate NAME=PER_S"
    out.append(f"wall hours at measured rates ({given}; GPU-hours below): {spread}")
    for item in plan.workload.uncounted:
        out.append(f"not counted: {item}")
    return out


def _judge_lines(j: JudgePlan) -> list[str]:
    c = j.cost
    readings = ", ".join(f"{QUESTION.get(q, q)} {n(v)}" for q, v in j.readings.items())
    lines = [f"  {j.judge} [{c.mode}]: readings {readings}"]
    if j.profile_readings:
        lines.append(
            f"    making the inline profiles (calibration samples, pattern and coherence): "
            f"0–100 {n(j.profile_readings)} more"
        )
    if j.grader_answers:
        lines.append(f"    grader answers written: {n(j.grader_answers)} (1 request each)")
    if c.mode == "local":
        lines.append(f"    {c.note}")
        return lines
    per = c.number_expected
    label = {
        "estimate": "estimate for a confident judge",
        "measured": "measured on the judge",
    }.get(per.basis, "from its trie")
    if j.all_readings().get("number"):
        alone = " read alone" if c.number_batches and per.basis != "measured" else ""
        lines.append(
            f"    per 0–100 reading: {n(per.prompts)} prompts / {n(per.http)} HTTP requests"
            f"{alone} ({label}); every trie node {n(c.number_exact.prompts)}, with every mark "
            f"followed {n(c.number_worst.prompts)}"
        )
        if alone:
            profiles = ""
            if j.profile_readings:
                profiles = (
                    f"; the inline profiles' {n(j.number_http(part='profiles'))} "
                    f"({n(j.number_http(alike=True, part='profiles'))})"
                )
            lines.append(
                f"    0–100 readings read together walk in step, sharing requests: "
                f"{n(j.number_http(part='run'))} HTTP requests, "
                f"{n(j.number_http(alike=True, part='run'))} if each batch's readings agree "
                f"(batches of {_sizes(j.batches('number'))}){profiles}"
            )
    if j.readings.get("yes_no") and c.yes_no_list > 1:
        lines.append(
            f"    yes/no readings: {n(c.yes_no.prompts)} prompt each, read together and sent "
            f"in lists of up to {c.yes_no_list}: {n(j.yes_no_http())} HTTP requests"
        )
    if c.probe.prompts:
        lines.append(
            f"    the run's probe before any reading: {n(c.probe.prompts)} prompts / "
            f"{n(c.probe.http)} HTTP requests (counted below)"
        )
    lines.append(
        f"    prompts: {n(j.requests('expected'))} expected, {n(j.requests('exact'))} reading "
        f"every node; HTTP requests {n(j.http())}; prompt tokens ≤ {n(j.prompt_tokens())}"
    )
    measured = j.measured_range()
    if measured is not None:
        lines.append(
            f"    prompts if every reading took the fewest / the most a sampled one took: "
            f"{n(measured[0])} – {n(measured[1])}"
        )
    if c.note:
        lines.append(f"    {c.note}")
    return lines


def _sizes(batches: dict[int, int]) -> str:
    return ", ".join(f"{size} ×{count}" for size, count in sorted(batches.items()))


def _duration(hours: float | None) -> str:
    if hours is None:
        return "no rate given"
    return f"{hours:.2f} h" if hours >= 1 else f"{hours * 60:.1f} min"
