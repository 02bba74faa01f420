"""The diary experiment: steered diarists, chatbots answering, four entries per conversation."""

from diarylab.experiments.engine.contract import ExperimentKind
from diarylab.experiments.kinds.diary.cells import Cell
from diarylab.experiments.kinds.diary.kind import DiaryKind

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["KIND"]

KIND: ExperimentKind[Cell] = DiaryKind()  # mypy holds the kind to the contract
