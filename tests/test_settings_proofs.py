"""Every field a design can hold has a proof: a test that shows it acting where it acts. The
meta-tests here walk each kind's design schema (diary, friends, benchmark) and fail when a field
names no test, or names one that does not exist; a new setting is added to a registry below,
with the test that proves it (tests/model_access/test_settings_reach.py and its neighbours hold
most)."""

from __future__ import annotations

import types
import typing
from pathlib import Path

from pydantic import BaseModel

from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.model_access.settings import EndpointSettings, GenerationSettings, LocalSettings

TESTS = Path(__file__).parent

HERE = "tests/model_access/test_settings_reach.py::"
JUDGE_REACH = "tests/rubric/judging/test_settings_reach_judges.py::"
SETTINGS_PROOFS: dict[type, dict[str, str]] = {
    GenerationSettings: {
        **dict.fromkeys(
            ("max_new_tokens", "temperature", "top_p"),
            HERE + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        ),
        "end_at_sentence": "tests/foundation/test_end_at_sentence.py::"
        "test_a_served_chatbots_cut_reply_is_ended_and_kept_whole_in_its_record",
    },
    LocalSettings: {
        "batch_size": HERE + "test_batch_size_3_generates_in_batches_of_3",
        **dict.fromkeys(
            ("dtype", "device", "revision", "trust_remote_code"),
            HERE + "test_local_settings_load_the_model_as_asked",
        ),
        **dict.fromkeys(
            ("device_map", "max_memory", "offload_folder"),
            HERE + "test_placement_settings_reach_from_pretrained_and_the_manifest",
        ),
    },
    EndpointSettings: {
        "base_url": HERE + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "api_key_env": HERE
        + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "concurrency": HERE
        + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "timeout_s": HERE + "test_timeout_gives_up_on_a_server_that_hangs",
        "max_retries": HERE + "test_max_retries_and_backoff_are_obeyed",
        "backoff_s": HERE + "test_max_retries_and_backoff_are_obeyed",
        "retry_budget_s": "tests/model_access/test_served.py::"
        "test_the_retry_budget_stops_a_call_whose_waits_would_pass_it",
        "prompts_per_request": JUDGE_REACH
        + "test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity",
    },
}
# The fields that are not inside a settings object, each with the test that shows it acting.
CONVERSATION = "tests/chatbots/test_conversations.py::"
DESIGN = "tests/experiments/designs/test_design.py::"
PROFILES = "tests/experiments/profiles/test_profile_making.py::"
HYPOTHESES = "tests/experiments/analysis/test_hypotheses.py::"
FIELD_PROOFS = {
    # The check makes its one-token call to the chatbot only when probe = true.
    "chatbots[litellm].probe": "tests/experiments/designs/test_design_check.py::"
    "test_probe_true_makes_one_cheap_call_and_false_makes_none",
    # Thinking kept apart, "off" sent to the template, and the check's probe reading it.
    "chatbots[litellm].thinking": "tests/chatbots/test_conversations.py::"
    "test_a_thinking_chatbots_replies_are_stored_without_their_thinking",
    "design.name": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.kind": DESIGN + "test_malformed_design_is_one_clear_error",
    "design.version": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.description": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.seed": "tests/test_resume.py::test_killed_runs_resume_to_the_same_store",
    "design.entries": HERE + "test_batch_size_3_generates_in_batches_of_3",
    "design.coverage_floor": PROFILES
    + "test_calibration_rule_uses_the_design_judge_and_records_its_choice",
    "diarist_model.model": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "diarist_model.engine": "tests/model_access/test_vllm_engine_reach.py::"
    "test_the_vllm_engine_and_its_settings_reach_the_worker",
    "chatbots[local].engine": "tests/model_access/test_vllm_engine_reach.py::"
    "test_a_local_chatbot_on_vllm_shares_the_diarists_worker",
    "chatbots[fixed].id": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[fixed].kind": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[fixed].text": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[local].system": HERE
    + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
    "chatbots[litellm].system": HERE
    + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
    "judges[litellm|openai-compatible].tokenizer": JUDGE_REACH
    + "test_served_judge_options_reach_the_judge",
    "judges[litellm|openai-compatible].prefill": JUDGE_REACH
    + "test_served_judge_options_reach_the_judge",
    "judges[litellm|openai-compatible].expand_floor": JUDGE_REACH
    + "test_served_judge_options_reach_the_judge",
    **{
        f"judges[litellm|openai-compatible].{name}": JUDGE_REACH
        + "test_served_judge_options_reach_the_judge"
        for name in ("mode", "reasoning_effort", "top_logprobs", "ids_per_request", "node_cutoff")
    },
    **{
        name: JUDGE_REACH + "test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity"
        for name in (
            "judges[litellm|openai-compatible].max_error",
            "judges[litellm|openai-compatible].scout_logprobs",
            "judges[local].max_error",
        )
    },
    "judges[litellm|openai-compatible].probe_floor": "tests/experiments/running/test_preflight.py::"
    "test_a_judge_that_rarely_starts_a_number_on_the_probe_is_refused",
    "profiles.id": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.pattern": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.extraction.pairs": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.extraction.batch_size": PROFILES
    + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "analysis.resamples": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_report_command_writes_findings",
    "analysis.cluster": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_the_design_cluster_and_baseline_chatbot_reach_the_report",
    "analysis.baseline_chatbot": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_the_design_cluster_and_baseline_chatbot_reach_the_report",
    "analysis.no_verdicts": "tests/experiments/designs/test_design_traps.py::"
    "test_a_minimum_no_design_reaches_is_refused_and_no_verdicts_says_why",
    "analysis.min_diarists": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_the_design_minimum_of_diarists_reaches_the_report",
    "analysis.decision_rule": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_the_design_rule_and_interval_reach_the_report",
    "analysis.interval": "tests/experiments/kinds/diary/test_diary_tables.py::"
    "test_the_design_rule_and_interval_reach_the_report",
    "cast.diarists": DESIGN + "test_valid_design_checks_and_expands",
    "cast.profiles": DESIGN + "test_valid_design_checks_and_expands",
    "scores.entry": HERE + "test_batch_size_3_generates_in_batches_of_3",
    "scores.patterns": HERE + "test_batch_size_3_generates_in_batches_of_3",
}
# Prefixes whose fields are all proved by one test.
PREFIX_PROOFS = {
    # On the worker's command line here; vLLM runs with them: tests/model_access/test_vllm_engine.py
    # test_the_worker_runs_with_the_settings_it_was_given.
    "diarist_model.vllm.": "tests/model_access/test_vllm_engine_reach.py::"
    "test_the_vllm_engine_and_its_settings_reach_the_worker",
    "profiles.steer.": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.calibration.": PROFILES
    + "test_calibration_rule_uses_the_design_judge_and_records_its_choice",
    # A hypothesis's head and contrast decide its verdict and what the results table says.
    "hypotheses.contrast": HYPOTHESES + "test_verdicts_follow_the_planted_effects",
    "hypotheses.": "tests/experiments/analysis/test_analysis_hypotheses.py::"
    "test_diary_and_friends_give_the_same_verdicts_from_the_same_values",
    "chatbots[local].vllm.": "tests/model_access/test_vllm_engine_reach.py::"
    "test_a_local_chatbot_on_vllm_shares_the_diarists_worker",
    # A spec's id, kind and model pick what is built (the travel test builds every kind).
    "chatbots[local].": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "chatbots[litellm].": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "judges[": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    # The run reused and its two locks decide what a derived run copies and what it refuses.
    "derived_from.": "tests/experiments/derived/test_derived_runs.py::"
    "test_adding_a_judge_writes_nothing_and_reads_the_run_judge_from_its_calls",
}


def _members(annotation: typing.Any) -> list[typing.Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple):
        return [m for a in typing.get_args(annotation) if a is not Ellipsis for m in _members(a)]
    return [annotation]


def leaves(model: type[BaseModel], prefix: str = "") -> list[tuple[str, type, str]]:
    """(path, owning model, field name) for every leaf field of a schema."""
    out = []
    for name, info in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        subs = [
            m for m in _members(info.annotation) if isinstance(m, type) and issubclass(m, BaseModel)
        ]
        if not subs:
            out.append((path, model, name))
            continue
        for sub in subs:
            tag = ""
            if len(subs) > 1:
                kind = sub.model_fields.get("kind")
                tag = "[" + "|".join(typing.get_args(kind.annotation) if kind else ()) + "]"
            out += leaves(sub, path + tag)
    return out


def proof_of(path: str, owner: type, name: str) -> str | None:
    if owner in SETTINGS_PROOFS:
        return SETTINGS_PROOFS[owner].get(name)
    if path in FIELD_PROOFS:
        return FIELD_PROOFS[path]
    return next((p for prefix, p in PREFIX_PROOFS.items() if path.startswith(prefix)), None)


def test_every_design_field_has_a_proof_that_exists():
    missing = [
        path for path, owner, name in leaves(DiaryDesignFile) if not proof_of(path, owner, name)
    ]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in leaves(DiaryDesignFile):
        proof = proof_of(path, owner, name)
        assert proof is not None
        assert_test_exists(path, proof)


def assert_test_exists(path: str, proof: str) -> None:
    """A proof is a test function, not a file: `tests/test_x.py::test_name`, and it exists."""
    file, _, test = proof.partition("::")
    assert test, f"{path}: {proof} names a file, not the test function that proves the field"
    text = (TESTS.parent / file).read_text(encoding="utf-8")
    assert f"def {test}(" in text, f"{path}: {proof} does not exist"


# The friends kind's own tables, each with the test that shows it acting; the tables every
# design shares are proved above.
FRIENDS = "tests/experiments/kinds/friends/test_friends_"
FRIENDS_PROOFS = {
    "design.entries": FRIENDS
    + "letters.py::test_every_letter_is_written_once_and_the_fixed_friend_calls_no_model",
    "pairs.cards": FRIENDS + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "pairs.a_first": FRIENDS
    + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "pairs.b_first": FRIENDS
    + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "conditions.steered": FRIENDS + "pairs.py::test_controls_have_the_right_seats",
    "conditions.controls": FRIENDS + "pairs.py::test_controls_have_the_right_seats",
    "outcome.letters": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "scores.letter": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "scores.patterns": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.resamples": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.cluster": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.min_role_cards": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.decision_rule": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.interval": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.no_verdicts": "tests/experiments/designs/test_design_traps.py::"
    "test_a_minimum_no_design_reaches_is_refused_and_no_verdicts_says_why",
}
FRIENDS_PREFIX_PROOFS = {
    "hypotheses.contrast": FRIENDS
    + "verdicts.py::test_holm_is_applied_across_the_hypotheses_of_each_judge",
    "hypotheses.": "tests/experiments/analysis/test_analysis_hypotheses.py::"
    "test_diary_and_friends_give_the_same_verdicts_from_the_same_values",
}


def test_every_friends_design_field_has_a_proof_that_exists():
    from diarylab.experiments.kinds.friends.schema import FriendsDesignFile

    def proof(path: str, owner: type, name: str) -> str | None:
        if path in FRIENDS_PROOFS:
            return FRIENDS_PROOFS[path]
        found = [p for prefix, p in FRIENDS_PREFIX_PROOFS.items() if path.startswith(prefix)]
        return found[0] if found else proof_of(path, owner, name)

    fields = leaves(FriendsDesignFile)
    missing = [path for path, owner, name in fields if not proof(path, owner, name)]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in fields:
        assert_test_exists(path, str(proof(path, owner, name)))


# ------------------------------------------------------------------ the benchmark kind's fields
BENCH_RUN = "tests/experiments/kinds/benchmark/test_benchmark_run.py::"
BENCH_OPTIONS = "tests/experiments/kinds/benchmark/test_benchmark_options.py::"
BENCHMARK_PROOFS = {
    "benchmark.data": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.format": BENCH_OPTIONS + "test_the_format_picks_the_schema",
    "benchmark.sample": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.convention": BENCH_OPTIONS + "test_the_design_chooses_the_scoring_convention",
    "benchmark.grader.template": BENCH_OPTIONS
    + "test_the_grader_template_and_generation_reach_the_judge",
    "benchmark.grader.generation.": BENCH_OPTIONS
    + "test_the_grader_template_and_generation_reach_the_judge",
    "benchmark.grader.defaults": BENCH_OPTIONS
    + "test_the_grader_defaults_are_the_reference_graders_and_the_labs_stay_an_option",
    "benchmark.grader.retries": BENCH_RUN
    + "test_a_local_judge_writes_then_is_read_and_malformed_answers_stay_ungraded",
    "benchmark.grader.retry_temperature": BENCH_OPTIONS
    + "test_retries_sample_at_the_retry_temperature",
    "benchmark.calibration.": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.calibration.anchors.se": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.calibration.anchors.source": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.calibration.anchors.placeholder": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.validation": "tests/experiments/kinds/benchmark/test_benchmark_validation.py::"
    "test_a_run_with_both_candidate_graders_reports_them",
    # Refused in benchmark designs (a benchmark reply answers one fixed conversation).
    "design.entries": BENCH_OPTIONS + "test_benchmark_designs_refuse_what_they_cannot_use",
    "diarist_model.": BENCH_OPTIONS + "test_benchmark_designs_refuse_what_they_cannot_use",
}


def benchmark_proof(path: str, owner: type, name: str) -> str | None:
    if path in BENCHMARK_PROOFS:
        return BENCHMARK_PROOFS[path]
    for prefix, proof in BENCHMARK_PROOFS.items():
        if prefix.endswith(".") and path.startswith(prefix):
            return proof
    return proof_of(path, owner, name)


def test_every_benchmark_design_field_has_a_proof_that_exists():
    from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile

    fields = leaves(BenchmarkDesignFile)
    missing = [path for path, owner, name in fields if not benchmark_proof(path, owner, name)]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in fields:
        proof = benchmark_proof(path, owner, name)
        assert proof is not None
        assert_test_exists(path, proof)
