"""What every kind's pilot shares about its repeats (experiments/engine/repeats.py): a repeat's
id, and the pooled within-prompt SD per judge and score family, from readable scores only."""

from __future__ import annotations

import math

import pytest

from diarylab.experiments.engine.repeats import family, pooled_noise, repeat_id
from diarylab.experiments.engine.store import JudgmentRow, Store


def _row(n: int, target: str, judge: str, item: str, value: float | None) -> JudgmentRow:
    return JudgmentRow(
        judgment_id=f"j{n}",
        target_kind="letter",
        target_id=target,
        judge=judge,
        item=item,
        value=value,
        coverage=1.0,
        readable=value is not None,
        template=None,
        call_key=f"k{n}",
    )


def test_pooled_noise_is_the_mean_within_prompt_variance_per_judge_and_family(tmp_path):
    store = Store(tmp_path / "r.sqlite", ())
    values = {
        # sample variances: prompt a 4, prompt b 2/3; a prompt with one readable score is out
        ("a", "pattern:entitlement"): [10.0, 12.0, 14.0],
        ("b", "pattern:social_isolation"): [20.0, 21.0, 22.0, 21.0],
        ("c", "pattern:entitlement"): [50.0, None, None],
        ("a", "coherence"): [70.0, 80.0, None],
    }
    rows, n = [], 0
    for (prompt, item), xs in values.items():
        for r, x in enumerate(xs):
            n += 1
            rows.append(_row(n, repeat_id(f"pair.{prompt}2", r), "j1", item, x))
    store.put_rows(*rows)
    noise = {(t.judge, t.family): t for t in pooled_noise(store, repeats=4)}
    store.close()
    assert set(noise) == {("j1", "pattern"), ("j1", "coherence")}
    pattern = noise[("j1", "pattern")]
    assert pattern.prompts == 2 and pattern.repeats == 4
    assert pattern.sd == pytest.approx(math.sqrt((4.0 + 2 / 3) / 2))
    assert noise[("j1", "coherence")].sd == pytest.approx(math.sqrt(50.0))


def test_ids_and_families():
    assert repeat_id("pair.A2", 3) == "pair.A2~3"
    assert family("pattern:entitlement") == "pattern" and family("coherence") == "coherence"
