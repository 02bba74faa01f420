"""A synthetic diary run in the analysis tables' shape, with effects planted at known values.

Pattern score of an entry (before judge noise) =
    base + diarist intercept[d, q]
    + [profile's pattern is q] × (steering + diarist slope[d] + drift[chatbot] × (k − 1)).
So the population truths are: steering effect = `steering`; drift at entry k under chatbot c =
`steering + drift[c] × (k − 1)`; c versus the baseline at k = `(drift[c] − drift[base]) × (k − 1)`;
coherence steered − unsteered = `coherence_drop`. Entry 1 is shared by every chatbot (one
entry_id and one text, exported under each chatbot, as the store does).

Diarists are independent draws, so one plant of N × 30 diarists split into blocks of 30 is N
independent datasets: coverage tests generate and analyse them all at once."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from diarylab.experiments.kinds.diary.frames import AnalysisTables

QUESTIONS = {  # question id -> (behavior id, desired answer, applies_when), ids as in the rubric
    "misses_risk": ("escalation", "no", "risk"),
    "crisis_help_without_risk": ("escalation", "no", "not risk"),
    "suggests_people": ("escalation", "yes", None),
    "critiques_writing": ("engagement", "no", None),
    "advises_without_asking": ("exploring", "no", None),
    "endorses_rigid_view": ("pattern_response", "no", "rigid_view"),
}
CONDITIONS = {q: when for q, (_, _, when) in QUESTIONS.items() if when}


@dataclass(frozen=True)
class Plant:
    diarists: int = 8
    patterns: tuple[str, ...] = ("isolation", "entitlement")
    chatbots: tuple[str, ...] = ("thanks", "warm", "cold")
    judges: tuple[str, ...] = ("judge-a", "judge-b")
    entries: int = 4
    steering: float = 20.0
    drift: dict[str, float] = field(
        default_factory=lambda: {"thanks": 0.0, "warm": -5.0, "cold": 3.0}
    )
    coherence_drop: float = -8.0
    diarist_sd: float = 10.0  # intercepts: cancel in paired comparisons
    slope_sd: float = 5.0  # diarist-specific steering response: what the bootstrap must carry
    noise_sd: float = 4.0  # per entry (shared by judges)
    judge_sd: float = 3.0  # per judge reading
    judge_offsets: tuple[float, ...] = (0.0, 6.0)
    yes_rate: dict[str, float] = field(
        default_factory=lambda: {"thanks": 0.1, "warm": 0.6, "cold": 0.3}
    )
    unreadable: float = 0.0  # share of judgments marked unreadable


def diarist_ids(n: int) -> list[str]:
    return [f"d{i:04d}" for i in range(n)]


def profile_ids(plant: Plant) -> list[str]:
    return ["unsteered"] + [f"steer_{p}" for p in plant.patterns]


def _grid(plant: Plant, tail: dict[str, list]) -> pd.DataFrame:
    """Every diarist × profile × chatbot × entry × (tail columns), in C order."""
    axes = {
        "diarist": diarist_ids(plant.diarists),
        "profile": profile_ids(plant),
        "chatbot": list(plant.chatbots),
        "entry_index": list(range(1, plant.entries + 1)),
        **tail,
    }
    index = pd.MultiIndex.from_product(list(axes.values()), names=list(axes))
    frame = index.to_frame(index=False)
    frame["pattern"] = frame["profile"].map(
        {p: (None if p == "unsteered" else p.removeprefix("steer_")) for p in profile_ids(plant)}
    )
    frame["cell_id"] = frame["diarist"] + "/" + frame["profile"] + "/" + frame["chatbot"]
    return frame


def _entry_ids(frame: pd.DataFrame) -> pd.Series:
    later = frame["cell_id"] + "/e" + frame["entry_index"].astype(str)
    first = frame["diarist"] + "/" + frame["profile"] + "/e1"
    return first.where(frame["entry_index"] == 1, later)


def make_tables(plant: Plant, seed: int) -> AnalysisTables:
    rng = np.random.default_rng(seed)
    d, p, c, k = plant.diarists, len(plant.patterns) + 1, len(plant.chatbots), plant.entries
    q, j = len(plant.patterns), len(plant.judges)
    intercept = rng.normal(0, plant.diarist_sd, (d, 1, 1, 1, q))
    slope = rng.normal(0, plant.slope_sd, (d, 1, 1, 1))
    quality = rng.normal(0, plant.diarist_sd / 2, (d, 1, 1, 1, 2))
    noise = rng.normal(0, plant.noise_sd, (d, p, c, k, q + 2))
    noise[:, :, :, 0, :] = noise[:, :, :1, 0, :]  # the first entry is one entry for all chatbots
    own = np.zeros((1, p, 1, 1, q))
    own[0, np.arange(1, p), 0, 0, np.arange(q)] = 1.0
    drift = np.array([plant.drift[b] for b in plant.chatbots])[None, None, :, None]
    push = plant.steering + slope + drift * np.arange(k)[None, None, None, :]
    pattern = 30.0 + intercept + own * push[..., None]
    steered = (np.arange(p) > 0).astype(float)[None, :, None, None]
    shape = (d, p, c, k)
    coherence = np.broadcast_to(75.0 + quality[..., 0] + plant.coherence_drop * steered, shape)
    realism = np.broadcast_to(60.0 + quality[..., 1], shape)
    latent = np.concatenate([pattern, coherence[..., None], realism[..., None]], axis=-1) + noise
    offsets = np.array(plant.judge_offsets)
    readings = latent[..., None] + offsets + rng.normal(0, plant.judge_sd, (*latent.shape, j))
    readings[:, :, :, 0] = readings[:, :, :1, 0]  # one judgment of the shared first entry
    readable = rng.random(readings.shape) >= plant.unreadable

    scores = [f"pattern:{name}" for name in plant.patterns] + ["coherence", "realism"]
    entries = _grid(plant, {"score": scores, "judge": list(plant.judges)})
    entries["mean"] = np.where(readable, readings, np.nan).ravel()
    entries["coverage"] = np.where(readable, 0.9, 0.2).ravel()
    entries["readable"] = readable.ravel()
    entries["entry_id"] = _entry_ids(entries)
    entries["text"] = "diary text of " + entries["entry_id"]

    rates = np.array([plant.yes_rate[b] for b in plant.chatbots])[None, None, :, None, None, None]
    p_yes = np.clip(rates + rng.normal(0, 0.15, (d, p, c, k, len(QUESTIONS), j)), 0.01, 0.99)
    replies = _grid(plant, {"question": list(QUESTIONS), "judge": list(plant.judges)})
    replies["behavior"] = replies["question"].map({q: v[0] for q, v in QUESTIONS.items()})
    replies["desired"] = replies["question"].map({q: v[1] for q, v in QUESTIONS.items()})
    replies["p_yes"] = p_yes.ravel()
    # The judge's P(yes) to each person question about the replied entry, and from it the
    # weight q of each conditioned question (1 − P for "not X"; 1 when unconditioned).
    person = {"risk": rng.beta(0.6, 2.0, (d, p, c, k, 1, j))}
    person["rigid_view"] = rng.beta(1.5, 1.5, (d, p, c, k, 1, j))
    weights = [
        np.ones((d, p, c, k, 1, j))
        if when is None
        else (1 - person["risk"] if when == "not risk" else person[when])
        for _, _, when in QUESTIONS.values()
    ]
    replies["applies"] = np.concatenate(weights, axis=4).ravel()
    replies["coverage"] = 0.95
    replies["readable"] = True
    replies["reply_id"] = replies["cell_id"] + "/r" + replies["entry_index"].astype(str)
    replies["text"] = "reply " + replies["reply_id"]

    first = diarist_ids(d)[0]
    flags = pd.DataFrame(
        [{"kind": "refusal", "where": f"{first}/unsteered/{plant.chatbots[-1]}/r2", "detail": "no"}]
    )
    return AnalysisTables(entries, replies, flags)


WORDS = [
    "the",
    "a",
    "I",
    "today",
    "felt",
    "nobody",
    "called",
    "again",
    "work",
    "sister",
    "quiet",
    "room",
    "window",
    "rain",
    "tired",
    "maybe",
    "tomorrow",
    "phone",
    "message",
    "dinner",
    "alone",
    "walk",
    "street",
    "coffee",
    "friend",
]


def paper_size_tables(seed: int = 1) -> AnalysisTables:
    """diary-full.toml's shape: 8 diarists, 3 patterns and the unsteered twin, 4 chatbots, 4
    entries, 2 judges (416 entries, 512 replies, 11,264 readings), entries of ~300 words and
    replies of ~180, as a study's page must hold them."""
    chatbots = ("thanks", "warm", "cold", "plain")
    plant = Plant(
        patterns=("isolation", "entitlement", "standards"),
        chatbots=chatbots,
        drift=dict(zip(chatbots, (0.0, -5.0, 3.0, 1.0), strict=True)),
        yes_rate=dict(zip(chatbots, (0.1, 0.6, 0.3, 0.4), strict=True)),
    )
    run = make_tables(plant, seed=seed)

    def prose(ident: str, words: int) -> str:
        rng = np.random.default_rng(zlib.crc32(ident.encode()))
        return " ".join(rng.choice(WORDS, words))

    entries, replies = run.entries.copy(), run.replies.copy()
    entries["text"] = entries["entry_id"].map(lambda i: prose(i, 300))
    replies["text"] = replies["reply_id"].map(lambda i: prose(i, 180))
    return AnalysisTables(entries, replies, run.flags)
