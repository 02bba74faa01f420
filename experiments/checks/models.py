"""Every model a design names, resolved before anything loads: the embedded default, a folder
with weights, or a hub id found in the local hub cache (or on the hub, when it can be reached);
and every layer an inline profile steers checked against the diarist model's config, so that
layer 40 of a 32-layer model is refused by the check, not hours later by `run`."""

from __future__ import annotations

from diarylab.chatbots.specs import LocalChatbotSpec
from diarylab.experiments.engine.contract import Design
from diarylab.foundation.errors import Collector, LabError
from diarylab.model_access.hub import ModelFacts, model_facts
from diarylab.model_access.loading import resolve


def check_models(design: Design, found: Collector, *, ask_hub: bool = True) -> list[str]:
    """Appends each problem to `found`; returns notes on what could not be checked (a hub id
    the cache lacks when the hub is not to be asked: `design check --offline`)."""
    spec = design.spec
    notes: list[str] = []
    where = str(design.path)
    if spec.writing_model is not None:
        writer = spec.writing_model
        facts = _facts(
            writer.model,
            writer.local.revision,
            f"{where} diarist_model.model",
            found,
            ask_hub,
            notes,
        )
        if facts is not None:
            _layers(design, facts, found)
    for i, bot in enumerate(spec.chatbots):
        if isinstance(bot, LocalChatbotSpec):
            _facts(
                bot.model, bot.local.revision, f"{where} chatbots[{i}].model", found, ask_hub, notes
            )
    for i, judge in enumerate(spec.judges):
        if (weights := judge.local_weights()) is not None:
            model, local = weights
            _facts(
                model,
                local.revision,
                f"{where} judges[{i}].model",
                found,
                ask_hub,
                notes,
            )
    return notes


def _facts(
    name: str,
    revision: str | None,
    where: str,
    found: Collector,
    ask_hub: bool,
    notes: list[str],
) -> ModelFacts | None:
    try:
        facts = model_facts(resolve(name), revision, ask_hub=ask_hub)
    except LabError as exc:
        found.add(LabError(exc.message, where=where, fix=exc.fix))
        return None
    if not facts.known:
        notes.append(
            f"{where}: {name} is not in the local hub cache; its id and layers are checked "
            "without --offline"
        )
        return None
    return facts


def _layers(design: Design, facts: ModelFacts, found: Collector) -> None:
    """Inline profiles' layers (fixed and swept) against the diarist model's decoder blocks.
    Profile files carry vectors, whose own layer count is checked when they are read."""
    if facts.layers is None:
        return
    for i, rule in enumerate(design.spec.profile_rules):
        asked = [("steer.layers", rule.steer.layers)] if rule.steer else []
        if rule.calibration:
            asked.append(("calibration.layers", rule.calibration.layers))
        for field, layers in asked:
            beyond = [layer for layer in layers if layer >= facts.layers]
            if beyond:
                found.add(
                    LabError(
                        f"profile {rule.id!r} steers layer(s) {beyond}, but {facts.spec} has "
                        f"{facts.layers} layers (0–{facts.layers - 1})",
                        where=f"{design.path} profiles[{i}].{field}",
                        fix=f"pick layers between 0 and {facts.layers - 1} (the middle third, "
                        f"about {facts.layers // 3}–{2 * facts.layers // 3}, steers best)",
                    )
                )
