"""The benchmark experiment: chatbots on MentalHealthBench / HealthBench conversations."""

from diarylab.experiments.engine.contract import ExperimentKind
from diarylab.experiments.kinds.benchmark.kind import BenchmarkKind
from diarylab.experiments.kinds.benchmark.replies import Cell

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["KIND"]

KIND: ExperimentKind[Cell] = BenchmarkKind()  # mypy holds the kind to the contract
