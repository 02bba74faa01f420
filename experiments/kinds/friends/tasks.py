"""What the friends kind asks every judge of every letter a model wrote (the fixed letter is
not judged): a 0–100 score for every pattern of [scores] and coherence, with the rubric's
entry templates, and the identity check, a yes/no question asked with the writer's role card:
does the letter stay true to its writer's own life?"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from diarylab.diarists.cards import RoleCard
from diarylab.diarists.patterns import load_pattern
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.engine.workload import PLACEHOLDER, ReadTogether
from diarylab.experiments.kinds.friends.contrast import FIXED
from diarylab.experiments.kinds.friends.pairs import Pair
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.kinds.friends.schema import LetterScores
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts
from diarylab.rubric.prompts import JudgePrompt, load_template

IDENTITY_TEMPLATE = "letter_identity"
IDENTITY = "identity"


def letter_items(scores: LetterScores) -> list[str]:
    coherence = ["coherence"] if "coherence" in scores.letter else []
    return [*(f"pattern:{p}" for p in scores.pattern_ids), *coherence]


def model_letters(pairs: Sequence[Pair]) -> int:
    return sum(pair.letters for pair in pairs for seat in ("A", "B") if pair.profile(seat) != FIXED)


def planned_readings(scores: LetterScores, pairs: Sequence[Pair]) -> dict[str, int]:
    """Per judge, by question: what letter_tasks yields when no letter came back empty."""
    letters = model_letters(pairs)
    return {"number": letters * len(letter_items(scores)), "yes_no": letters}  # + identity


def planned_together(scores: LetterScores, pairs: Sequence[Pair]) -> tuple[ReadTogether, ...]:
    """How the judging phase reads letter_tasks (experiments/engine/judging.py reading_runs):
    every letter's 0–100 scores together, and every letter's identity check together."""
    letters = model_letters(pairs)
    parts = (
        ReadTogether("number", letters * len(letter_items(scores)), 1),
        ReadTogether("yes_no", letters, 1),
    )
    return tuple(p for p in parts if p.size and p.count)


def planned_per_judge(scores: LetterScores, pairs: Sequence[Pair]) -> int:
    return sum(planned_readings(scores, pairs).values())


def sample_prompts(scores: LetterScores, text: str = PLACEHOLDER) -> dict[str, JudgePrompt]:
    """A 0–100 prompt of this design on a letter: the placeholder (`diarylab plan`) or a real
    text (`plan --measure`)."""
    scorer = LetterScorer.load(scores)
    prompts = entry_prompts(text, scorer.patterns, scorer.templates)
    wanted = [p for item, p in prompts.items() if item in scorer.wanted]
    return {"number": wanted[0]} if wanted else {}


def letter_tasks(
    store: Store, scores: LetterScores, pairs: Sequence[Pair], cards: dict[str, RoleCard]
) -> Iterator[Task]:
    """Every judgment of one judge, in a fixed order: pair by pair, letter by letter in writing
    order, the scores then the identity check. An empty letter is not judged (counted as a flag)."""
    scorer = LetterScorer.load(scores)
    identity = load_template(IDENTITY_TEMPLATE)
    for pair in pairs:
        for seat, k in pair.order():
            if pair.profile(seat) == FIXED:
                continue
            letter = store.get(LetterRow, pair.letter_id(seat, k))
            assert letter is not None, f"letter {pair.letter_id(seat, k)} missing"
            if not letter.text.strip():
                continue
            yield from scorer.tasks(letter)
            prompt = identity.prompt(letter=letter.text, **cards[letter.writer].fields())
            yield Task("letter", letter.letter_id, IDENTITY, "yes_no", prompt, identity.ref)


@dataclass(frozen=True)
class LetterScorer:
    """The 0–100 scores [scores] asks of a letter (every listed pattern, coherence), with the
    rubric's entry templates: for the run and for a pilot's repeats alike."""

    templates: EntryTemplates
    patterns: tuple[tuple[str, str, str], ...]
    wanted: frozenset[str]

    @staticmethod
    def load(scores: LetterScores) -> LetterScorer:
        patterns = tuple(
            (p.id, p.name, p.definition) for p in map(load_pattern, scores.pattern_ids)
        )
        return LetterScorer(EntryTemplates.load(), patterns, frozenset(letter_items(scores)))

    def tasks(self, letter: LetterRow) -> Iterator[Task]:
        templates = self.templates
        for item, prompt in entry_prompts(letter.text, self.patterns, templates).items():
            if item in self.wanted:
                ref = templates.coherence.ref if item == "coherence" else templates.pattern.ref
                yield Task("letter", letter.letter_id, item, "number", prompt, ref)
