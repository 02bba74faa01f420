"""The declared columns of every result frame `diarylab.open_run(path)` returns: name, dtype
and meaning, in order. experiments/frames/reader.py builds the frames to these declarations and
docs/results-columns.md is generated from them (tests/experiments/frames/test_run_frames.py holds
both to them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # pandas dtype the column holds ("object" for text or nullable values)
    meaning: str


def _columns(*rows: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*row) for row in rows)


_WHO = (
    ("diarist", "object", "the writer's role card (a diary's diarist, a letter's writer)"),
    ("profile", "object", 'the writer\'s profile id ("unsteered", a steered profile, ...)'),
    ("pattern", "object", "the profile's pattern, None for unsteered"),
    ("chatbot", "object", "the chatbot the conversation is with, None where none answers"),
    ("entry", "Int64", "the text's place in its conversation (entry or letter index, from 1)"),
)
FRAMES: dict[str, tuple[Column, ...]] = {
    "texts": _columns(
        ("text_id", "object", "the text's id in the store (its table's key)"),
        ("table", "object", "the store table it is in (entries, replies, letters, ...)"),
        *_WHO,
        ("text", "object", "the text as written"),
        ("flag", "object", "empty, truncated, refusal, or None"),
    ),
    "readings": _columns(
        ("judgment_id", "object", "the reading's id in the store"),
        ("judge", "object", "the design's judge id"),
        ("question", "object", "number (a 0–100 score) or yes_no"),
        ("item", "object", "what was asked: pattern:<id>, coherence, realism, a rubric question"),
        ("target_kind", "object", "what was judged, as the kind names it (entry, reply, ...)"),
        ("target_id", "object", "the judged text's text_id"),
        *_WHO,
        ("value", "float64", "mean 0–100 (number) or P(yes) (yes_no); NaN where unreadable"),
        ("coverage", "float64", "probability the judge answered in the scale at all"),
        ("readable", "bool", "coverage reached the judge's floor"),
        ("exact", "bool", "every probability the reading needs was read"),
        ("bound_low", "float64", "a bounded reading's certified interval for the mean: low"),
        ("bound_high", "float64", "... and high (NaN where the reading states no bound)"),
        ("max_error", "float64", "the judge's max_error (0: read every node; NaN: not stated)"),
        ("prompts", "Int64", "prompts the reading took on a served judge (<NA> for local)"),
        (
            "http_requests",
            "float64",
            "HTTP requests it took on a served judge (a yes/no "
            "reading sent in a list of prompts: its share of the list's requests)",
        ),
    ),
    "projection": _columns(
        ("judgment_id", "object", "the reading's id in the store"),
        ("item", "object", "pattern:<id>: the pattern whose direction the text is read along"),
        ("target_id", "object", "the entry's text_id"),
        *_WHO,
        ("value", "float64", "the projection (activation units, not 0–100)"),
    ),
    "calls": _columns(
        ("key", "object", "the call's cache key in the store"),
        ("role", "object", "diarist, chatbot, judge, grader, projection, ..."),
        ("model", "object", "the model (or judge id) the call went to"),
        ("created", "float64", "when the result was stored (seconds since the epoch)"),
        ("prompt_tokens", "Int64", "prompt tokens the record states (<NA>: none stated)"),
        ("completion_tokens", "Int64", "completion tokens the record states"),
    ),
}
FRAMES["answers"] = FRAMES["readings"]
FRAMES["ratings"] = _columns(
    ("rating_id", "object", "the answer's id in the store's ratings table"),
    ("rater", "object", "r1, r2, ... (rating pages and CSVs) or ls-<user> (Label Studio)"),
    ("item_id", "object", "the blinded item the rater saw (rating/sample.json)"),
    ("question_key", "object", "the rating form's key of the question (q01, ...)"),
    ("item", "object", "the judges' item it mirrors: pattern:<id>, coherence, a rubric question"),
    ("scale", "object", "number (0–100) or yes_no (1 yes, 0 no)"),
    ("target_kind", "object", "entry or reply"),
    ("target_id", "object", "the rated text's text_id"),
    *_WHO,
    ("value", "float64", "the rater's answer: 0–100, or 1 for yes and 0 for no"),
    ("inclusion", "float64", "the probability the sample's draw took this text"),
    ("weight", "float64", "1 / inclusion: the weight the report's judge figures give it"),
    ("source", "object", "the file the answer was imported from"),
)


def columns_doc() -> str:
    """docs/results-columns.md: every frame's columns, from FRAMES."""
    lines = [
        "# Result frames",
        "",
        "Generated from `experiments/frames/columns.py` (`FRAMES`); do not edit by hand.",
        "`diarylab.open_run(path)` returns these frames.",
        "",
    ]
    for name, columns in FRAMES.items():
        lines += [f"## `{name}()`", "", "| column | dtype | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | {c.dtype} | {c.meaning} |" for c in columns]
        lines.append("")
    return "\n".join(lines)


FRAMES["verdicts"] = _columns(
    ("id", "str", "the hypothesis's id in the design (H1, ...)"),
    ("says", "str", "the hypothesis in words, as preregistered"),
    ("contrast", "str", "the contrast tested, written out (what minus what)"),
    ("direction", "str", "greater or less: the sign the hypothesis predicts"),
    ("judge", "str", "the judge whose scores this row tests"),
    ("estimate", "float64", "the contrast's mean over the clusters (diarists; friends: cards)"),
    ("low", "float64", "the 95 % sign-flip interval's lower end (the intervals rule reads it)"),
    ("high", "float64", "its upper end"),
    ("n_diarists", "int64", "clusters the contrast rests on (a friends run: n_cards)"),
    ("sd", "float64", "the clusters' standard deviation of the contrast"),
    ("p", "float64", "the exact two-sided sign-flip p over the clusters"),
    ("p_holm", "float64", "p Holm-adjusted across the family, per judge (the holm rule reads it)"),
    ("mde", "float64", "the smallest effect the rule detects with 80 % power here (simulated)"),
    ("judge_correlation", "float64", "the two judges' correlation over clusters (ρ)"),
    ("rule", "str", "the preregistered rule judge_verdict and overall follow"),
    ("judge_verdict", "str", "this judge's verdict: supported, contradicted, not supported, ..."),
    ("overall", "str", "the hypothesis's verdict across its judges (all must agree)"),
    ("sensitivity_rule", "str", "the other rule, run beside the preregistered one (labelled)"),
    ("sensitivity_judge_verdict", "str", "this judge's verdict under the other rule"),
    ("sensitivity_overall", "str", "the overall verdict under the other rule"),
    ("sources", "object", "the text_ids the row rests on (a tuple)"),
)
