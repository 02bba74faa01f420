"""The bad-input corpus: every user mistake is ONE line on stderr (`diarylab: error: <file>
<field>: <what> — fix: <how>`), exit status 2, no traceback, and nothing written.

Every CLI case runs in-process through `experiments.cli.main` and asserts: exit code 2; stderr
is exactly one line starting "diarylab: error:", with " — fix: " and no "Traceback"; it names
the file (or the option) and, where there is one, the field, plus a fragment of what is wrong;
and a recursive listing (names, sizes, mtimes) of the folders involved is unchanged — for `run`,
the --out folder does not exist afterwards.

Designs (each refused alike by `design check`, `design expand --json` and `run --out`):
  shape     table-is-a-number (design = 5), chatbots-is-a-number, diarist-model-is-a-string,
            cast-is-a-list, no-chatbots
  unknown   unknown-table-scorse ("did you mean 'scores'?"), unknown-key-in-design (entires →
            entries), -in-generation (temprature), -in-analysis (resample), -in-local (dtyp),
            -in-endpoint (concurency), unknown-array-of-tables, misspelt-required-key-in-judge
            (modle: "judges[0].model: missing")
  types     seed-is-a-string, entries-is-a-float, coverage-floor-is-a-string,
            diarists-is-a-bare-string, trust-remote-code-is-a-string, dtype-unknown (fp64),
            temperature-is-a-boolean, unknown-entry-score, unknown-cluster
  ranges    temperature-negative, top-p-above-one, max-new-tokens-zero, chatbot-batch-size-zero,
            timeout-zero, max-retries-negative, concurrency-zero, entries-zero,
            entries-a-billion, coverage-floor-two, resamples-zero, min-diarists-one,
            seed-negative, version-zero, name-not-a-slug
  kinds     judge-kind-unknown, chatbot-kind-is-a-judge-kind, experiment-kind-missing
  names     duplicate-chatbot-id, duplicate-judge-id, duplicate-hypothesis-id (the entry's
            id named), duplicate-diarist, duplicate-profile, unknown-score-pattern (the list
            item named)
  hypotheses  hypothesis-unknown-profile, -unknown-baseline-chatbot, -unknown-judge,
            -leaves-out-a-judge (every judge of the design must be named),
            -entry-beyond-the-design, -without-judges, -unknown-direction
  inline profiles  inline-strength-1e30, inline-strength-nan, inline-steer-and-calibration,
            inline-calibration-unknown-judge (profiles[0].calibration.judge),
            inline-calibration-floor-150, inline-extraction-pairs-zero, inline-unknown-pattern,
            inline-profile-not-cast,
            profile-path-missing, profile-neither-file-nor-rule
  the file  empty-file, not-utf8, key-written-twice, unterminated-string, design-missing,
            design-is-a-folder; positive control: a UTF-8 byte-order mark is accepted (exit 0)

Profile files and their vectors (named in a design's cast.profiles; `design check` and `run`):
  profile   unknown-key, misspelt-strength, bad-scale, bad-positions, layer-out-of-range (2 on a
            2-layer model), layer-negative, no-layers, strength-too-large, sha-malformed,
            no-profile-table, calibration-nested-table, not-toml, pattern-mismatch
  vector    vector-file-missing, vector-sha-mismatch, vector-bytes-changed, vector-sidecar-missing,
            -not-an-object ([1, 2, 3]), -not-json, -not-utf8, -other-format, -lacks-a-field,
            -wrong-type (num_layers = "two"), -wrong-shape (hidden_size 65)

Run folders (`status`, `status --verify`, `report`, `export`, `export --to`):
  a-file, missing, not-a-run-folder, empty-design-sha256, garbled-design-sha256,
  locked-design-missing, manifest-not-json, manifest-a-list, inputs-not-a-map,
  locked-input-missing, truncated-store, store-is-a-folder, empty-store (a 0-byte store is
  refused, not opened as a new one); and `run` into another design's run folder or a
  folder of other files

Command-line options:
  steer try    vector-missing, layer-out-of-range, temperature-negative, top-p-zero,
               max-new-tokens-zero, strength-nan, model-missing, bad-dtype, bad-scale (every
               option checked before the model loads); steer show vector-missing
  steer calibrate  strengths-nan, floor-150, layer-out-of-range, pattern-mismatch, prompts-zero,
               batch-size-zero, judge-names-no-model, bad-judge-dtype (also with --judge fake),
               bad-positions, out-is-a-file (all refused before the sweep)
  steer extract  pairs-zero, unknown-pattern, out-under-a-file; pattern files by path:
               pattern-file-unknown-key, -id-not-its-name, -version-a-string, -too-few-prompts
  judge        read: prompt-missing, prompt-empty, prompt-not-utf8, message-file-missing,
               prefill-without-messages, bad-dtype, endpoint-option-on-local-judge,
               timeout-zero, floor-above-one; score: unknown-pattern; rubric: not-json,
               not-a-list, no-reply, no-entry
  runs         report-resamples-zero, export-to-an-existing-file, run-out-is-a-file;
               export-to-under-a-file and run-out-under-a-file (refused up front),
               report-resamples-not-a-number and design-schema-unknown-kind (argparse's own
               refusals, as one line)

Lab data files (loaded directly; one LabError naming the file and the field, with a fix):
  the entry template refuses unknown placeholders ({hometown}, {weather}, {reply[0]}) and
  unbalanced braces when loaded; every card field is a placeholder the template may use;
  card-age-a-string, card-unknown-key, card-id-not-its-name, card-no-people,
  rubric-unknown-condition, rubric-duplicate-id, refusals-blank-opening,
  judge-template-no-prefill, judge-template-version-a-string
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.opening import load_design
from diarylab.experiments.runner import run_design
from diarylab.foundation.errors import LabError
from tests.lab_fixtures import design_text, make_profile

ROOT = Path(__file__).resolve().parent.parent
PATTERN_FILE = ROOT / "diarists" / "patterns" / "social_isolation.toml"
ENTRY_TEMPLATE = ROOT / "diarists" / "templates" / "entry.toml"
FIXED_ONLY = """
[[chatbots]]
id = "thanks"
kind = "fixed"
"""
SERVED_CHATBOT = """
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "api"
kind = "litellm"
model = "openai/some-model"
endpoint = { ENDPOINT }
"""
INLINE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2 }
RULE
"""
HYPOTHESIS = """
[[hypotheses]]
id = "HID"
says = "a preregistered prediction"
contrast = CONTRAST
direction = "greater"
judges = JUDGES
"""


# ----------------------------------------------------------------------------- the lab
@dataclass
class Lab:
    """What a case is built from: a per-test folder, the tiny model, a checked profile file and
    its vector (shared by the module, copied before a case edits them) and a finished run."""

    tmp: Path
    model: Path
    shared: Path
    profile: Path
    request: pytest.FixtureRequest

    def design(self, text: str | bytes, name: str = "design.toml") -> Path:
        path = self.tmp / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def text(self, *, profile: bool = True, **kwargs: Any) -> str:
        return design_text(self.model, self.profile if profile else None, **kwargs)

    def own_profile(self) -> Path:
        """A private copy of the profile and its vector, free to edit."""
        folder = self.tmp / "own"
        shutil.copytree(self.shared / "vectors", folder / "vectors")
        shutil.copytree(self.shared / "profiles", folder / "profiles")
        return folder / "profiles" / self.profile.name

    def own_run(self) -> Path:
        target = self.tmp / "run"
        shutil.copytree(self.request.getfixturevalue("finished"), target)
        for extra in ("store.sqlite-wal", "store.sqlite-shm"):
            (target / extra).unlink(missing_ok=True)
        return target


@pytest.fixture(scope="module")
def shared(tmp_path_factory, tiny_model_folder):
    """A profile file and its vector (random directions on the tiny model)."""
    folder = tmp_path_factory.mktemp("bad-inputs")
    return folder, make_profile(folder, tiny_model_folder)


@pytest.fixture(scope="module")
def finished(shared, tiny_model_folder):
    """A small finished run (one diarist, one entry, fixed replies, the tiny local judge)."""
    folder, profile = shared
    text = design_text(
        tiny_model_folder, profile, entries=1, diarists='["amara"]', chatbots=FIXED_ONLY
    ).replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    design = folder / "finished.toml"
    design.write_text(text)
    run = folder / "finished-run"
    run_design(load_design(design), run, progress=False)
    return run


@pytest.fixture
def lab(request, tmp_path, tiny_model_folder, shared):
    folder, profile = shared
    return Lab(tmp_path, tiny_model_folder, folder, profile, request)


def snapshot(*roots: Path) -> dict[str, tuple[bool, int, int]]:
    """Every file and folder under `roots`, with size and modification time."""
    out = {}
    for root in roots:
        if not root.exists():
            continue
        for path in [root, *sorted(root.rglob("*"))]:
            st = path.lstat()
            out[str(path)] = (path.is_dir(), st.st_size, st.st_mtime_ns)
    return out


def one_clear_error(argv: list[str], capsys, names: list[str], watch: list[Path]) -> str:
    """Run the command in-process and check the lab's rule; returns the message."""
    capsys.readouterr()
    before = snapshot(*watch)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit without returning
        code = exc.code if isinstance(exc.code, int) else 1
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err, err
    assert err.endswith("\n") and len(err.splitlines()) == 1, f"not one line: {err!r}"
    assert err.startswith("diarylab: error: "), err
    assert " — fix: " in err, f"no fix given: {err!r}"
    for name in names:
        assert name in err, f"{name!r} not named in {err!r}"
    assert snapshot(*watch) == before, f"{argv} wrote something"
    return err


def sub(text: str, old: str, new: str, count: int = 1) -> str:
    """Replace `old` (which must be there, so a case cannot silently turn valid)."""
    assert old in text, old
    return text.replace(old, new, count)


def without_table(text: str, name: str) -> str:
    """The text with the [name] table (up to the next table) removed."""
    out, n = re.subn(rf"^\[{name}\]\n(?:(?!\[).*\n)*", "", text, flags=re.M)
    assert n == 1, name
    return out


def inline(lab: Lab, rule: str, *, listed: bool = True) -> str:
    text = lab.text(profile=False)
    if listed:
        text = sub(text, 'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]')
    return text + INLINE.replace("RULE", rule)


def hypothesis(contrast: str, judges: str = '["tiny-judge"]', hid: str = "H1") -> str:
    return HYPOTHESIS.replace("HID", hid).replace("CONTRAST", contrast).replace("JUDGES", judges)


def served(endpoint: str) -> str:
    return SERVED_CHATBOT.replace("ENDPOINT", endpoint)


# ----------------------------------------------------------------------------- designs
# Each case: (the design's bytes or text, built from the lab) → the field named and a fragment of
# what is wrong. Every case is refused by `design check`, `design expand` and `run` alike.
Build = Callable[[Lab], "str | bytes"]


def D(build: Build, field: str | None, says: str, *, id: str, marks=()):
    return pytest.param(build, field, says, id=f"design-{id}", marks=marks)


DESIGN_CASES = [
    # --- shape: a table that is not a table, tables and keys nobody knows
    D(
        lambda lab: "design = 5\n" + without_table(lab.text(), "design"),
        "design",
        "[design]",
        id="table-is-a-number",
    ),
    D(
        lambda lab: "chatbots = 3\n" + lab.text(chatbots=""),
        "chatbots",
        "must be a list",
        id="chatbots-is-a-number",
    ),
    D(
        lambda lab: 'diarist_model = "smollm2"\n' + without_table(lab.text(), "diarist_model"),
        "diarist_model",
        "must be a table",
        id="diarist-model-is-a-string",
    ),
    D(
        lambda lab: without_table(lab.text(), "diarist_model"),
        "diarist_model",
        "add [diarist_model]",
        id="diary-design-without-a-diarist-model",
    ),
    D(
        lambda lab: "cast = [1, 2]\n" + without_table(lab.text(), "cast"),
        "cast",
        "must be a table",
        id="cast-is-a-list",
    ),
    D(
        lambda lab: sub(lab.text(), "[scores]", "[scorse]"),
        "scorse",
        "did you mean 'scores'?",
        id="unknown-table-scorse",
    ),
    D(
        lambda lab: sub(lab.text(), "entries = 3", "entires = 3"),
        "design.entires",
        "did you mean 'entries'?",
        id="unknown-key-in-design",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.9", "temprature = 0.9"),
        "diarist_model.generation.temprature",
        "did you mean 'temperature'?",
        id="unknown-key-in-generation",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resample = 300"),
        "analysis.resample",
        "did you mean 'resamples'?",
        id="unknown-key-in-analysis",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, dtyp = 'fp32'"),
        "diarist_model.local.dtyp",
        "did you mean 'dtype'?",
        id="unknown-key-in-local",
    ),
    D(
        lambda lab: sub(
            lab.text(),
            'id = "tiny-judge"\nkind = "local"\nmodel',
            'id = "tiny-judge"\nkind = "local"\nmodle',
        ),
        "judges[0].model",
        "missing",
        id="misspelt-required-key-in-judge",
    ),
    D(
        lambda lab: lab.text(chatbots=served("concurency = 2")),
        "chatbots[1].endpoint.concurency",
        "did you mean 'concurrency'?",
        id="unknown-key-in-endpoint",
    ),
    D(
        lambda lab: "\n[[kasts]]\nx = 1\n" + lab.text(),
        "kasts",
        "unknown field",
        id="unknown-array-of-tables",
    ),
    # --- wrong types
    D(
        lambda lab: sub(lab.text(), "seed = 7", 'seed = "7"'),
        "design.seed",
        "whole number",
        id="seed-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), "entries = 3", "entries = 3.0"),
        "design.entries",
        "whole number",
        id="entries-is-a-float",
    ),
    D(
        lambda lab: sub(lab.text(), "coverage_floor = 0.0", 'coverage_floor = "low"'),
        "design.coverage_floor",
        "number",
        id="coverage-floor-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), 'diarists = ["amara", "tomasz"]', 'diarists = "amara"'),
        "cast.diarists",
        "",
        id="diarists-is-a-bare-string",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, trust_remote_code = 'yes'"),
        "diarist_model.local.trust_remote_code",
        "true or false",
        id="trust-remote-code-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, dtype = 'fp64'"),
        "diarist_model.local.dtype",
        "'fp32'",
        id="dtype-unknown",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.7", "temperature = true"),
        "chatbots[1].generation.temperature",
        "number",
        id="temperature-is-a-boolean",
    ),
    # --- out of range
    D(
        lambda lab: sub(lab.text(), "temperature = 0.7", "temperature = -1"),
        "chatbots[1].generation.temperature",
        "at least 0",
        id="temperature-negative",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.9", "temperature = 0.9, top_p = 1.5"),
        "diarist_model.generation.top_p",
        "at most 1",
        id="top-p-above-one",
    ),
    D(
        lambda lab: sub(lab.text(), "max_new_tokens = 8", "max_new_tokens = 0"),
        "diarist_model.generation.max_new_tokens",
        "at least 1",
        id="max-new-tokens-zero",
    ),
    D(
        lambda lab: sub(
            lab.text(), "temperature = 0.7 }", "temperature = 0.7 }\nlocal = { batch_size = 0 }"
        ),
        "chatbots[1].local.batch_size",
        "at least 1",
        id="chatbot-batch-size-zero",
    ),
    D(
        lambda lab: lab.text(chatbots=served("timeout_s = 0")),
        "chatbots[1].endpoint.timeout_s",
        "more than 0",
        id="timeout-zero",
    ),
    D(
        lambda lab: lab.text(chatbots=served("max_retries = -1")),
        "chatbots[1].endpoint.max_retries",
        "at least 0",
        id="max-retries-negative",
    ),
    D(
        lambda lab: lab.text(chatbots=served("concurrency = 0")),
        "chatbots[1].endpoint.concurrency",
        "at least 1",
        id="concurrency-zero",
    ),
    D(
        lambda lab: lab.text(entries=0),
        "design.entries",
        "at least 1",
        id="entries-zero",
    ),
    D(
        lambda lab: lab.text(entries=10**9),
        "design.entries",
        "at most 100",
        id="entries-a-billion",
    ),
    D(
        lambda lab: sub(lab.text(), "coverage_floor = 0.0", "coverage_floor = 2"),
        "design.coverage_floor",
        "at most 1",
        id="coverage-floor-two",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resamples = 0"),
        "analysis.resamples",
        "at least 100",
        id="resamples-zero",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resamples = 200\nmin_diarists = 1"),
        "analysis.min_diarists",
        "at least 2",
        id="min-diarists-one",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = -7"),
        "design.seed",
        "at least",
        id="seed-negative",
    ),
    D(
        lambda lab: sub(lab.text(), 'name = "tiny-test"', 'name = "my run!"'),
        "design.name",
        "pattern",
        id="name-not-a-slug",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = 7\nversion = 0"),
        "design.version",
        "at least 1",
        id="version-zero",
    ),
    D(
        lambda lab: sub(lab.text(), 'entry = ["pattern"', 'entry = ["vibes", "pattern"'),
        "scores.entry[0]",
        "'pattern', 'coherence' or 'realism'",
        id="unknown-entry-score",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", 'resamples = 200\ncluster = "pair"'),
        "analysis.cluster",
        "'diarist'",
        id="unknown-cluster",
    ),
    D(
        lambda lab: "chatbots = []\n" + lab.text(chatbots=""),
        "chatbots",
        "at least 1",
        id="no-chatbots",
    ),
    # --- kinds and names
    D(
        lambda lab: sub(
            lab.text(), 'id = "tiny-judge"\nkind = "local"', 'id = "tiny-judge"\nkind = "oracle"'
        ),
        "judges[0].kind",
        "unknown kind 'oracle'",
        id="judge-kind-unknown",
    ),
    D(
        lambda lab: sub(lab.text(), 'kind = "fixed"', 'kind = "openai-compatible"'),
        "chatbots[0].kind",
        "unknown kind 'openai-compatible'",
        id="chatbot-kind-is-a-judge-kind",
    ),
    D(
        lambda lab: sub(lab.text(), 'kind = "diary"\n', ""),
        "design.kind",
        "unknown experiment kind None",
        id="experiment-kind-missing",
    ),
    D(
        lambda lab: sub(lab.text(), 'id = "tiny-chat"', 'id = "thanks"'),
        "chatbots",
        "chatbot id 'thanks' is used twice",
        id="duplicate-chatbot-id",
    ),
    D(
        lambda lab: lab.text(
            judges=f"""
[[judges]]
id = "j"
kind = "local"
model = "{lab.model}"

[[judges]]
id = "j"
kind = "local"
model = "{lab.model}"
"""
        ),
        "judges",
        "judge id 'j' is used twice",
        id="duplicate-judge-id",
    ),
    D(
        lambda lab: (
            lab.text() + hypothesis('{ kind = "coherence" }') + hypothesis('{ kind = "realism" }')
        ),
        "hypotheses",
        "hypothesis id 'H1' is used twice",
        id="duplicate-hypothesis-id",
    ),
    D(
        lambda lab: sub(lab.text(), '["amara", "tomasz"]', '["amara", "amara"]'),
        "cast.diarists",
        "a diarist is listed twice",
        id="duplicate-diarist",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "unsteered"]',
        ),
        "cast.profiles",
        "a profile is listed twice",
        id="duplicate-profile",
    ),
    D(
        lambda lab: sub(lab.text(), 'patterns = ["social_isolation"]', 'patterns = ["gloom"]'),
        "scores.patterns",
        "unknown pattern 'gloom'",
        id="unknown-score-pattern",
    ),
    # --- hypotheses naming what the design lacks
    D(
        lambda lab: (
            lab.text(profile=False)
            + hypothesis('{ kind = "first_entry_pattern", profile = "ghost" }')
        ),
        "hypothesis H1.contrast.profile",
        "unknown profile 'ghost'",
        id="hypothesis-unknown-profile",
    ),
    D(
        lambda lab: (
            lab.text()
            + hypothesis('{ kind = "drift", chatbot = "tiny-chat", baseline = "nobody" }')
        ),
        "hypothesis H1.contrast.baseline",
        "unknown chatbot 'nobody'",
        id="hypothesis-unknown-baseline-chatbot",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "coherence" }', judges='["oracle"]'),
        "hypothesis H1.judges",
        "unknown judge 'oracle'",
        id="hypothesis-unknown-judge",
    ),
    D(
        lambda lab: (
            lab.text(
                judges=f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{lab.model}"

[[judges]]
id = "second-judge"
kind = "local"
model = "{lab.model}"
"""
            )
            + hypothesis('{ kind = "coherence" }')
        ),
        "hypothesis H1.judges",
        "leaves out judge(s) second-judge",
        id="hypothesis-leaves-out-a-judge",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "drift", chatbot = "tiny-chat", entry = 9 }'),
        "hypothesis H1.contrast.entry",
        "entry 9 is past the design's last entry",
        id="hypothesis-entry-beyond-the-design",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "coherence" }', judges="[]"),
        "hypotheses[0].judges",
        "no judges",
        id="hypothesis-without-judges",
    ),
    D(
        lambda lab: (
            lab.text()
            + hypothesis('{ kind = "coherence" }').replace(
                'direction = "greater"', 'direction = "up"'
            )
        ),
        "hypotheses[0].direction",
        "'greater'",
        id="hypothesis-unknown-direction",
    ),
    # --- inline profile rules
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = 1e30 }"),
        "profiles[0].steer.strength",
        "at most 100",
        id="inline-strength-1e30",
    ),
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = nan }"),
        "profiles[0].steer.strength",
        "",
        id="inline-strength-nan",
    ),
    D(
        lambda lab: inline(
            lab,
            "steer = { layers = [1], strength = 0.5 }\n"
            'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5] }',
        ),
        "profiles[0]",
        "needs exactly one of steer and calibration",
        id="inline-steer-and-calibration",
    ),
    D(
        lambda lab: inline(
            lab, 'calibration = { judge = "oracle", layers = [1], strengths = [0.5] }'
        ),
        "profiles[0].calibration.judge",
        "calibrates with unknown judge 'oracle'",
        id="inline-calibration-unknown-judge",
    ),
    D(
        lambda lab: inline(
            lab,
            'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5], floor = 150 }',
        ),
        "profiles[0].calibration.floor",
        "at most 100",
        id="inline-calibration-floor-150",
    ),
    D(
        lambda lab: sub(
            inline(lab, "steer = { layers = [1], strength = 0.5 }"), "pairs = 2", "pairs = 0"
        ),
        "profiles[0].extraction.pairs",
        "at least 1",
        id="inline-extraction-pairs-zero",
    ),
    D(
        lambda lab: sub(
            inline(lab, "steer = { layers = [1], strength = 0.5 }"),
            'pattern = "social_isolation"\nextraction',
            'pattern = "gloom"\nextraction',
        ),
        "profiles[0]",
        "unknown pattern 'gloom'",
        id="inline-unknown-pattern",
    ),
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = 0.5 }", listed=False),
        "cast.profiles",
        "inline profile(s) lonely are not in cast.profiles",
        id="inline-profile-not-cast",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "nowhere/lonely.toml"]',
        ),
        "cast.profiles",
        "profile file 'nowhere/lonely.toml' not found",
        id="profile-path-missing",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "lonely"]',
        ),
        None,
        "'lonely' is neither unsteered",
        id="profile-neither-file-nor-rule",
    ),
    # --- the file itself
    D(lambda lab: b"", None, "missing table [design]", id="empty-file"),
    D(
        lambda lab: lab.text().encode("utf-8").replace(b"tiny-test", b"tiny-\xff\xfetest"),
        None,
        "not UTF-8",
        id="not-utf8",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = 7\nseed = 8"),
        None,
        "is given twice",
        id="key-written-twice",
    ),
    D(
        lambda lab: lab.text().replace('"', "'", 1).replace('"', "", 1),
        None,
        "not valid TOML",
        id="unterminated-string",
    ),
]


@pytest.mark.parametrize(("build", "field", "says"), DESIGN_CASES)
def test_a_bad_design_is_one_clear_error_for_check_expand_and_run(lab, capsys, build, field, says):
    path = lab.design(build(lab))
    out = lab.tmp / "out"
    names = [str(path), *([field] if field else []), says]
    for argv in (
        ["design", "check", str(path)],
        ["design", "expand", str(path), "--json"],
        ["run", str(path), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, names, [lab.tmp, lab.shared])
        assert not out.exists()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(lambda lab: lab.tmp / "absent.toml", "file not found", id="design-missing"),
        pytest.param(lambda lab: lab.tmp, "is a folder", id="design-is-a-folder"),
    ],
)
def test_a_design_that_is_not_a_file_is_one_clear_error(lab, capsys, make, says):
    path = make(lab)
    out = lab.tmp / "out"
    for argv in (
        ["design", "check", str(path)],
        ["design", "expand", str(path)],
        ["run", str(path), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, [str(path), says], [lab.tmp])
        assert not out.exists()


def test_a_byte_order_mark_is_accepted(lab, capsys):
    """Positive control: the harness's checks pass only on refusals, not on every input."""
    path = lab.design(b"\xef\xbb\xbf" + lab.text().encode("utf-8"))
    assert main(["design", "check", str(path)]) == 0, capsys.readouterr().err
    assert main(["design", "expand", str(path)]) == 0, capsys.readouterr().err


# ----------------------------------------------------------------------------- profile files
# Each case edits a private copy of a good profile (or its vector) and names it in a design.
Edit = Callable[[Path], object]


def edit(old: str, new: str) -> Edit:
    def apply(profile: Path) -> None:
        profile.write_text(sub(profile.read_text(), old, new))

    return apply


def vector_file(profile: Path, suffix: str) -> Path:
    return profile.parent.parent / "vectors" / f"tiny-social_isolation{suffix}"


def sidecar(change: Callable[[dict], object]) -> Edit:
    def apply(profile: Path) -> None:
        meta = vector_file(profile, ".json")
        data = json.loads(meta.read_text())
        meta.write_text(json.dumps(change(data)))

    return apply


def write_to(suffix: str, content: bytes | None) -> Edit:
    def apply(profile: Path) -> None:
        target = vector_file(profile, suffix)
        if content is None:
            target.unlink()
        else:
            target.write_bytes(content)

    return apply


def flip_a_byte(profile: Path) -> None:
    tensors = vector_file(profile, ".safetensors")
    data = bytearray(tensors.read_bytes())
    data[-1] ^= 0xFF
    tensors.write_bytes(bytes(data))


def P(change: Edit, where: str, field: str | None, says: str, *, id: str, marks=()):
    return pytest.param(change, where, field, says, id=f"profile-{id}", marks=marks)


PROFILE_CASES = [
    P(
        edit("positions", 'colour = "red"\npositions'),
        "profile",
        "profile.colour",
        "unknown field",
        id="unknown-key",
    ),
    P(
        edit("strength = 0.8", "strenght = 0.8"),
        "profile",
        "profile.strength",
        "missing",
        id="misspelt-strength",
    ),
    P(
        edit('scale = "relative"', 'scale = "log"'),
        "profile",
        "profile.scale",
        "'relative' or 'raw'",
        id="bad-scale",
    ),
    P(
        edit('positions = "response"', 'positions = "everywhere"'),
        "profile",
        "profile.positions",
        "'prompt'",
        id="bad-positions",
    ),
    P(
        edit("layers = [1]", "layers = [2]"),
        "profile",
        "[profile].layers",
        "layer 2 does not exist",
        id="layer-out-of-range",
    ),
    P(
        edit("layers = [1]", "layers = [-1]"),
        "profile",
        "profile.layers",
        "at least 0",
        id="layer-negative",
    ),
    P(
        edit("layers = [1]", "layers = []"),
        "profile",
        "profile.layers",
        "at least 1",
        id="no-layers",
    ),
    P(
        edit("strength = 0.8", "strength = 1000.0"),
        "profile",
        "profile.strength",
        "at most 100",
        id="strength-too-large",
    ),
    P(
        edit('vector_sha256 = "', 'vector_sha256 = "abc'),
        "profile",
        "profile.vector_sha256",
        "pattern",
        id="sha-malformed",
    ),
    P(
        lambda p: p.write_text(
            re.sub(r'vector_sha256 = "\w+"', f'vector_sha256 = "{"0" * 64}"', p.read_text())
        ),
        "safetensors",
        None,
        "expected 000000000000",
        id="vector-sha-mismatch",
    ),
    P(
        edit('pattern = "social_isolation"', 'pattern = "entitlement"'),
        "profile",
        "[profile].vector",
        "vector is for pattern 'social_isolation'",
        id="pattern-mismatch",
    ),
    P(
        lambda p: p.write_text("[calibration]\nnote = 'x'\n"),
        "profile",
        "profile",
        "missing",
        id="no-profile-table",
    ),
    P(
        lambda p: p.write_text(p.read_text() + "\n[calibration.more]\nx = 1\n"),
        "profile",
        "calibration.more",
        "",
        id="calibration-nested-table",
    ),
    P(
        lambda p: p.write_text(p.read_text() + "\n[profile\n"),
        "profile",
        None,
        "is given twice",  # tomllib reads the unclosed "[profile" as [profile] declared again
        id="not-toml",
    ),
    P(
        write_to(".safetensors", None),
        "safetensors",
        "[profile].vector",
        "not found",
        id="vector-file-missing",
    ),
    P(
        write_to(".json", None),
        "json",
        None,
        "missing tiny-social_isolation.json",
        id="vector-sidecar-missing",
    ),
    P(
        write_to(".json", b"[1, 2, 3]\n"),
        "json",
        None,
        "metadata is not a JSON object",
        id="vector-sidecar-not-an-object",
    ),
    P(
        write_to(".json", b"{not json"),
        "json",
        None,
        "unreadable metadata",
        id="vector-sidecar-not-json",
    ),
    P(
        write_to(".json", b"\xff\xfe{}"),
        "json",
        None,
        "unreadable metadata",
        id="vector-sidecar-not-utf8",
    ),
    P(
        sidecar(lambda m: {**m, "format_version": 99}),
        "json",
        None,
        "not a diarylab",
        id="vector-sidecar-other-format",
    ),
    P(
        sidecar(lambda m: {k: v for k, v in m.items() if k != "hidden_size"}),
        "json",
        None,
        "metadata lacks hidden_size",
        id="vector-sidecar-lacks-a-field",
    ),
    P(
        sidecar(lambda m: {**m, "num_layers": "two"}),
        "json",
        None,
        "metadata field num_layers should be an integer (got 'two')",
        id="vector-sidecar-wrong-type",
    ),
    P(
        sidecar(lambda m: {**m, "hidden_size": 65}),
        "safetensors",
        None,
        "inconsistent vector",
        id="vector-sidecar-wrong-shape",
    ),
    P(flip_a_byte, "safetensors", None, "does not match the sha256", id="vector-bytes-changed"),
]


@pytest.mark.parametrize(("change", "where", "field", "says"), PROFILE_CASES)
def test_a_bad_profile_file_is_one_clear_error(lab, capsys, change, where, field, says):
    profile = lab.own_profile()
    change(profile)
    named = {
        "profile": profile,
        "safetensors": vector_file(profile, ".safetensors"),
        "json": vector_file(profile, ".json"),
    }[where]
    design = lab.design(design_text(lab.model, profile))
    out = lab.tmp / "out"
    names = [str(named), *([field] if field else []), says]
    for argv in (
        ["design", "check", str(design)],
        ["run", str(design), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, names, [lab.tmp])
        assert not out.exists()


# ----------------------------------------------------------------------------- run folders
# Each case damages a private copy of a finished run folder (or names something that is not
# one); status, report and export all refuse it the same way and create nothing.
Damage = Callable[[Lab], Path]


def damaged(change: Callable[[Path], object]) -> Damage:
    def make(lab: Lab) -> Path:
        run = lab.own_run()
        change(run)
        return run

    return make


def plain_file(lab: Lab) -> Path:
    path = lab.tmp / "notes.txt"
    path.write_text("not a run\n")
    return path


def empty_folder(lab: Lab) -> Path:
    path = lab.tmp / "empty"
    path.mkdir()
    return path


def add_locked_input(run: Path) -> None:
    inputs = json.loads((run / "inputs.json").read_text())
    copy = {"sha256": "0" * 64, "copy": "inputs/files/gone.toml", "origin": "file"}
    inputs["inputs"][str(run.parent / "gone.toml")] = copy
    (run / "inputs.json").write_text(json.dumps(inputs))


def truncate(run: Path) -> None:
    store = run / "store.sqlite"
    store.write_bytes(store.read_bytes()[:1024])


def store_as_folder(run: Path) -> None:
    (run / "store.sqlite").unlink()
    (run / "store.sqlite").mkdir()


def R(make: Damage, named: Callable[[Path], Path], says: str, *, id: str, marks=()):
    return pytest.param(make, named, says, id=f"runfolder-{id}", marks=marks)


def itself(folder: Path) -> Path:
    return folder


def inside(name: str) -> Callable[[Path], Path]:
    return lambda folder: folder / name


RUN_CASES = [
    R(plain_file, itself, "no such run folder", id="a-file"),
    R(lambda lab: lab.tmp / "never-made", itself, "no such run folder", id="missing"),
    R(empty_folder, itself, "not a run folder", id="not-a-run-folder"),
    R(
        damaged(lambda r: (r / "design.sha256").write_text("")),
        inside("design.sha256"),
        "does not hold a sha256",
        id="empty-design-sha256",
    ),
    R(
        damaged(lambda r: (r / "design.sha256").write_text("xyz  design.toml\n")),
        inside("design.sha256"),
        "does not hold a sha256",
        id="garbled-design-sha256",
    ),
    R(
        damaged(lambda r: (r / "design.toml").unlink()),
        inside("design.toml"),
        "file not found",
        id="locked-design-missing",
    ),
    R(
        damaged(lambda r: (r / "manifest.json").write_text("{not json")),
        inside("manifest.json"),
        "unreadable",
        id="manifest-not-json",
    ),
    R(
        damaged(lambda r: (r / "manifest.json").write_text("[1, 2]")),
        inside("manifest.json"),
        "not a JSON object",
        id="manifest-a-list",
    ),
    R(
        damaged(lambda r: (r / "inputs.json").write_text('{"a": 1}')),
        inside("inputs.json"),
        "not a map of file",
        id="inputs-not-a-map",
    ),
    R(
        damaged(add_locked_input),
        inside("inputs/files/gone.toml"),
        "the folder's copy of an input is missing",
        id="locked-input-missing",
    ),
    R(damaged(truncate), inside("store.sqlite"), "the store is damaged", id="truncated-store"),
    R(
        damaged(lambda r: (r / "store.sqlite").write_bytes(b"")),
        inside("store.sqlite"),
        "",
        id="empty-store",
    ),
    R(damaged(store_as_folder), itself, "no store.sqlite", id="store-is-a-folder"),
]


@pytest.mark.parametrize(("make", "named", "says"), RUN_CASES)
def test_a_bad_run_folder_is_one_clear_error_for_status_report_and_export(
    lab, capsys, make, named, says
):
    folder = make(lab)
    for argv in (
        ["status", str(folder)],
        ["status", str(folder), "--verify"],
        ["report", str(folder)],
        ["export", str(folder)],
        ["export", str(folder), "--to", str(lab.tmp / "exported")],
    ):
        one_clear_error(argv, capsys, [str(named(folder)), says], [lab.tmp])
        assert not (lab.tmp / "exported").exists()


def test_run_into_a_folder_that_is_not_its_own_is_refused(lab, capsys):
    """A design run into another design's run folder, or into a folder of other files."""
    run = lab.own_run()
    design = lab.design(lab.text(entries=2))
    one_clear_error(
        ["run", str(design), "--out", str(run), "--no-progress"],
        capsys,
        [str(run), "holds a different design"],
        [lab.tmp],
    )
    foreign = lab.tmp / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    one_clear_error(
        ["run", str(design), "--out", str(foreign), "--no-progress"],
        capsys,
        [str(foreign), "not empty"],
        [lab.tmp],
    )


# ----------------------------------------------------------------------------- options
# Each case: the argv (built from the lab), what the one line names, and what must not exist.
Argv = Callable[[Lab], list[str]]


def vector_arg(lab: Lab) -> str:
    return str(lab.shared / "vectors" / "tiny-social_isolation")


def pattern_copy(lab: Lab, old: str | None = None, new: str = "", name: str = "") -> Path:
    text = PATTERN_FILE.read_text()
    if old is not None:
        text = sub(text, old, new)
    path = lab.tmp / (name or PATTERN_FILE.name)
    path.write_text(text)
    return path


def prompt_file(lab: Lab, content: bytes | None) -> Path:
    path = lab.tmp / "prompt.txt"
    if content is not None:
        path.write_bytes(content)
    return path


def conversation_file(lab: Lab, content: str) -> Path:
    path = lab.tmp / "conversation.json"
    path.write_text(content)
    return path


def calibrate(lab: Lab, *more: str) -> list[str]:
    return [
        "steer", "calibrate", "--model", str(lab.model), "--vector", vector_arg(lab),
        "--pattern", "social_isolation", "--judge", "fake", "--layers", "1",
        "--strengths", "0.5", "--out", str(lab.tmp / "calibration"), *more,
    ]  # fmt: skip


def extract(lab: Lab, *more: str, pattern: str = "social_isolation") -> list[str]:
    return [
        "steer", "extract", "--model", str(lab.model), "--pattern", pattern,
        "--out", str(lab.tmp / "vector"), *more,
    ]  # fmt: skip


def try_(lab: Lab, *more: str, vector: str | None = None) -> list[str]:
    return [
        "steer", "try", vector or vector_arg(lab), "--model", str(lab.model),
        "--layer", "1", "--strength", "0.5", *more,
    ]  # fmt: skip


def judge_read(lab: Lab, *more: str) -> list[str]:
    return ["judge", "read", "--judge", str(lab.model), *more]


def C(argv: Argv, names: list[str], *, id: str, marks=()):
    return pytest.param(argv, names, id=f"cli-{id}", marks=marks)


CLI_CASES = [
    # steer try / show
    C(
        lambda lab: try_(lab, vector=str(lab.tmp / "nothing")),
        ["nothing.safetensors", "missing"],
        id="steer-try-vector-missing",
    ),
    C(
        lambda lab: ["steer", "show", str(lab.tmp / "nothing")],
        ["nothing.safetensors", "missing"],
        id="steer-show-vector-missing",
    ),
    C(
        lambda lab: try_(lab, "--layer", "5"),
        ["--layer", "layer 5 does not exist"],
        id="steer-try-layer-out-of-range",
    ),
    C(
        lambda lab: try_(lab, "--temperature", "-1"),
        ["--temperature", "must be at least 0"],
        id="steer-try-temperature-negative",
    ),
    C(
        lambda lab: try_(lab, "--top-p", "0"),
        ["--top-p", "more than 0"],
        id="steer-try-top-p-zero",
    ),
    C(
        lambda lab: try_(lab, "--max-new-tokens", "0"),
        ["--max-new-tokens"],
        id="steer-try-max-new-tokens-zero",
    ),
    C(
        lambda lab: try_(lab, "--strength", "nan"),
        ["--strength", "finite number"],
        id="steer-try-strength-nan",
    ),
    C(
        lambda lab: try_(lab, "--model", str(lab.tmp / "no-model")),
        ["--model", "no-model"],
        id="steer-try-model-missing",
    ),
    C(lambda lab: try_(lab, "--dtype", "fp64"), ["--dtype", "fp64"], id="steer-try-bad-dtype"),
    C(
        lambda lab: try_(lab, "--scale", "log"),
        ["--scale", "'relative' or 'raw'"],
        id="steer-try-bad-scale",
    ),
    # steer calibrate
    C(
        lambda lab: calibrate(lab, "--strengths", "nan"),
        ["--strengths", "finite"],
        id="steer-calibrate-strengths-nan",
    ),
    C(
        lambda lab: calibrate(lab, "--floor", "150"),
        ["--floor", "at most 100"],
        id="steer-calibrate-floor-150",
    ),
    C(
        lambda lab: calibrate(lab, "--layers", "7"),
        ["--layers", "layer 7 does not exist"],
        id="steer-calibrate-layer-out-of-range",
    ),
    C(
        lambda lab: calibrate(lab, "--pattern", "entitlement"),
        ["tiny-social_isolation", "vector is for pattern 'social_isolation'"],
        id="steer-calibrate-pattern-mismatch",
    ),
    C(
        lambda lab: calibrate(lab, "--prompts", "0"),
        ["--prompts", "at least 1"],
        id="steer-calibrate-prompts-zero",
    ),
    C(
        lambda lab: calibrate(lab, "--batch-size", "0"),
        ["--batch-size"],
        id="steer-calibrate-batch-size-zero",
    ),
    C(
        lambda lab: calibrate(lab, "--judge", "litellm:"),
        ["--judge", "names no model"],
        id="steer-calibrate-judge-names-no-model",
    ),
    C(
        lambda lab: calibrate(lab, "--judge-dtype", "fp64"),
        ["--judge-dtype", "fp64"],
        id="steer-calibrate-bad-judge-dtype",
    ),
    C(
        lambda lab: calibrate(lab, "--positions", "everywhere"),
        ["--positions", "'prompt', 'response' or 'both'"],
        id="steer-calibrate-bad-positions",
    ),
    # steer extract, and pattern files given by path
    C(
        lambda lab: extract(lab, "--pairs", "0"),
        ["--pairs", "at least 1"],
        id="steer-extract-pairs-zero",
    ),
    C(
        lambda lab: extract(lab, "--pattern", "gloom"),
        ["--pattern", "unknown pattern 'gloom'"],
        id="steer-extract-unknown-pattern",
    ),
    C(
        lambda lab: extract(
            lab, pattern=str(pattern_copy(lab, "[heuristic]", "[heuristic]\nweight = 2"))
        ),
        ["social_isolation.toml", "heuristic.weight", "unknown field"],
        id="pattern-file-unknown-key",
    ),
    C(
        lambda lab: extract(lab, pattern=str(pattern_copy(lab, name="lonely.toml"))),
        ["lonely.toml", "pattern.id", "differs from the file name"],
        id="pattern-file-id-not-its-name",
    ),
    C(
        lambda lab: extract(lab, pattern=str(pattern_copy(lab, "version = 2", 'version = "2"'))),
        ["social_isolation.toml", "pattern.version", "whole number"],
        id="pattern-file-version-a-string",
    ),
    C(
        lambda lab: extract(
            lab, pattern=str(pattern_copy(lab, "extraction = [", 'extraction = ["one"]\nx = ['))
        ),
        ["social_isolation.toml", "prompts.extraction", "at least 20"],
        id="pattern-file-too-few-prompts",
    ),
    # judge read / score / rubric
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, None))),
        ["prompt.txt", "prompt file not found"],
        id="judge-read-prompt-missing",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"  \n"))),
        ["prompt.txt", "empty"],
        id="judge-read-prompt-empty",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"\xff\xfe"))),
        ["prompt.txt", "not UTF-8"],
        id="judge-read-prompt-not-utf8",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"x")), "--prefill", "A"),
        ["--prefill"],
        id="judge-read-prefill-without-messages",
    ),
    C(
        lambda lab: judge_read(
            lab, "--prompt-file", str(prompt_file(lab, b"x")), "--dtype", "fp64"
        ),
        ["--dtype", "fp64"],
        id="judge-read-bad-dtype",
    ),
    C(
        lambda lab: judge_read(
            lab, "--prompt-file", str(prompt_file(lab, b"x")), "--concurrency", "0"
        ),
        ["--concurrency"],
        id="judge-read-endpoint-option-on-local-judge",
    ),
    C(
        lambda lab: [
            "judge",
            "read",
            "--judge",
            "litellm:openai/x",
            "--base-url",
            "http://x/v1",
            "--prompt-file",
            str(prompt_file(lab, b"x")),
            "--timeout-s",
            "0",
        ],
        ["--timeout-s", "more than 0"],
        id="judge-read-timeout-zero",
    ),
    C(
        lambda lab: [
            "judge",
            "score",
            "--judge",
            str(lab.model),
            "--entry-file",
            str(prompt_file(lab, b"an entry")),
            "--pattern",
            "gloom",
        ],
        ["--pattern", "unknown pattern 'gloom'"],
        id="judge-score-unknown-pattern",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, "{not json")),
        ],
        ["conversation.json", "not valid JSON"],
        id="judge-rubric-not-json",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '{"role": "user"}')),
        ],
        ["conversation.json", "list of"],
        id="judge-rubric-not-a-list",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '[{"role": "user", "content": "today"}]')),
        ],  # fmt: skip
        ["conversation.json", "no assistant message"],
        id="judge-rubric-no-reply",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '[{"role": "assistant", "content": "hello"}]')),
        ],  # fmt: skip
        ["conversation.json", "no user message"],
        id="judge-rubric-no-entry",
    ),
    C(
        lambda lab: judge_read(lab, "--message-file", str(lab.tmp / "absent.txt")),
        ["absent.txt", "message file not found"],
        id="judge-read-message-file-missing",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"x")), "--floor", "5"),
        ["--floor"],
        id="judge-read-floor-above-one",
    ),
    C(
        lambda lab: calibrate(lab)[:-2] + ["--out", str(plain_file(lab))],
        ["notes.txt", "--out"],
        id="steer-calibrate-out-is-a-file",
    ),
    C(
        lambda lab: extract(lab)[:-2] + ["--out", str(plain_file(lab) / "vector")],
        ["notes.txt", "--out"],
        id="steer-extract-out-under-a-file",
    ),
    # run folders and designs by option
    C(
        lambda lab: ["report", str(lab.own_run()), "--resamples", "0"],
        ["--resamples", "too few"],
        id="report-resamples-zero",
    ),
    C(
        lambda lab: ["export", str(lab.own_run()), "--to", str(plain_file(lab))],
        ["notes.txt", "--to is a file"],
        id="export-to-an-existing-file",
    ),
    C(
        lambda lab: [
            "run",
            str(lab.design(lab.text())),
            "--out",
            str(plain_file(lab)),
            "--no-progress",
        ],
        ["notes.txt", "is a file, not a folder"],
        id="run-out-is-a-file",
    ),
    C(
        lambda lab: ["export", str(lab.own_run()), "--to", str(plain_file(lab) / "exported")],
        ["notes.txt", "--to"],
        id="export-to-under-a-file",
    ),
    C(
        lambda lab: [
            "run",
            str(lab.design(lab.text())),
            "--out",
            str(plain_file(lab) / "run"),
            "--no-progress",
        ],  # fmt: skip
        ["notes.txt", "--out"],
        id="run-out-under-a-file",
    ),
    C(
        lambda lab: ["report", str(lab.own_run()), "--resamples", "many"],
        ["--resamples", "many"],
        id="report-resamples-not-a-number",
    ),
    C(
        lambda lab: ["design", "schema", "--kind", "poetry"],
        ["--kind", "poetry"],
        id="design-schema-unknown-kind",
    ),
]


@pytest.mark.parametrize(("argv", "names"), CLI_CASES)
def test_a_bad_option_is_one_clear_error(lab, capsys, argv, names):
    args = argv(lab)
    one_clear_error(args, capsys, names, [lab.tmp, lab.shared])
    for made in ("calibration", "vector.safetensors", "vector.json", "exported"):
        assert not (lab.tmp / made).exists()


# ----------------------------------------------------------------------------- lab data files
def test_an_entry_template_with_an_unknown_placeholder_is_refused_when_loaded(tmp_path):
    from diarylab.diarists.templates import load_entry_template

    for old, new, field_name in [
        ("living in {home}", "living in {hometown}", "template.system"),
        ("It is {day}. Write", "It is {day}, {weather}. Write", "template.first_entry"),
        ('answered:\n\n"{reply}"', 'answered:\n\n"{reply[0]}"', "template.next_entry"),
        ("It is {day}. Write", "It is {day. Write", "template.first_entry"),
    ]:
        bad = tmp_path / "entry.toml"
        bad.write_text(sub(ENTRY_TEMPLATE.read_text(), old, new))
        with pytest.raises(LabError) as caught:
            load_entry_template(bad)
        message = str(caught.value)
        assert str(bad) in message and field_name in message and " — fix: " in message, message
        assert len(message.splitlines()) == 1
    assert load_entry_template().system  # the shipped template passes


def test_every_card_field_is_a_template_placeholder():
    from diarylab.diarists.cards import CARD_FIELDS, CARDS_DIR, load_card

    assert set(load_card(CARDS_DIR / "amara.toml").fields()) == set(CARD_FIELDS)


# The lab's own data files are read by the commands, not named on the command line: a bad copy
# is loaded directly and must be one LabError naming the file and the field, with a fix.
def _card(path):
    from diarylab.diarists.cards import load_card

    return load_card(path)


def _rubric(path):
    from diarylab.rubric.behavior_rubric import load_behavior_rubric

    return load_behavior_rubric(path)


def _refusals(path):
    from diarylab.chatbots.refusals import load_refusals

    return load_refusals(path)


def _judge_template(path):
    from diarylab.rubric.prompts import load_template

    return load_template(path)


CARD = ROOT / "diarists" / "cards" / "amara.toml"
RUBRIC = ROOT / "rubric" / "behavior_rubric.toml"
REFUSALS = ROOT / "chatbots" / "refusals.toml"
COHERENCE = ROOT / "rubric" / "templates" / "coherence.toml"


def L(load, source: Path, old: str, new: str, field: str, says: str, *, id: str, name=""):
    return pytest.param(load, source, old, new, field, says, name, id=f"labdata-{id}")


LAB_DATA_CASES = [
    L(_card, CARD, "age = 34", 'age = "34"', "card.age", "whole number", id="card-age-a-string"),
    L(
        _card,
        CARD,
        "version = 1",
        'version = 1\nhobby = "chess"',
        "card.hobby",
        "unknown field",
        id="card-unknown-key",
    ),
    L(
        _card,
        CARD,
        "age = 34",
        "age = 34",
        "card.id",
        "differs from the file name",
        id="card-id-not-its-name",
        name="bob.toml",
    ),
    L(
        _card,
        CARD,
        "people = [",
        "people = []\nx = [",
        "card.people",
        "at least 1",
        id="card-no-people",
    ),
    L(
        _rubric,
        RUBRIC,
        '\napplies_when = "risk"',
        '\napplies_when = "danger"',
        "question",
        "unknown person question 'danger'",
        id="rubric-unknown-condition",
    ),
    L(
        _rubric,
        RUBRIC,
        'id = "rigid_view"',
        'id = "risk"',
        "person",
        "question ids repeat",
        id="rubric-duplicate-id",
    ),
    L(
        _refusals,
        REFUSALS,
        "openings = [",
        'openings = [\n  " ",',
        "refusals.openings[0]",
        "pattern",
        id="refusals-blank-opening",
    ),
    L(
        _judge_template,
        COHERENCE,
        'prefill = "Score: "',
        "",
        "template.prefill",
        "missing",
        id="judge-template-no-prefill",
    ),
    L(
        _judge_template,
        COHERENCE,
        "version = 1",
        'version = "1"',
        "template.version",
        "whole number",
        id="judge-template-version-a-string",
    ),
]


@pytest.mark.parametrize(("load", "source", "old", "new", "field", "says", "name"), LAB_DATA_CASES)
def test_a_bad_lab_data_file_is_one_clear_error_when_loaded(
    tmp_path, load, source, old, new, field, says, name
):
    bad = tmp_path / (name or source.name)
    bad.write_text(sub(source.read_text(), old, new))
    with pytest.raises(LabError) as caught:
        load(bad)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and " — fix: " in message, message
    for part in (str(bad), field, says):
        assert part in message, f"{part!r} not in {message!r}"
