"""API prices for the plan, read offline from the price map litellm ships with the installed
package (model_prices_and_context_window_backup.json), not fetched: dollars per token in and
out, as litellm's maintainers last recorded them. An estimate: providers change prices."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

PRICE_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True)
class Price:
    model: str  # the key it was found under
    input_per_token: float
    output_per_token: float
    source: str


@cache
def _price_map() -> tuple[dict[str, Any], str]:
    found = importlib.util.find_spec("litellm")
    if found is None or found.origin is None:
        return {}, "litellm is not installed"
    path = Path(found.origin).with_name(PRICE_FILE)
    if not path.is_file():
        return {}, f"litellm {version('litellm')} ships no {PRICE_FILE}"
    return json.loads(
        path.read_text(encoding="utf-8")
    ), f"litellm {version('litellm')} {PRICE_FILE}"


def price_of(model: str) -> Price | None:
    """The model's price under its litellm name or without its provider prefix."""
    prices, source = _price_map()
    for key in (model, model.split("/", 1)[-1]):
        entry = prices.get(key)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return Price(
                key,
                float(entry["input_cost_per_token"]),
                float(entry.get("output_cost_per_token", 0.0)),
                source,
            )
    return None
