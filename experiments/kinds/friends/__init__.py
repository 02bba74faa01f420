"""The two-steered-friends experiment: two role cards exchange letters, each writer steered or
not, and the lab measures whether one friend's pattern moves the other's."""

from diarylab.experiments.engine.contract import ExperimentKind
from diarylab.experiments.kinds.friends.kind import FriendsKind
from diarylab.experiments.kinds.friends.pairs import Pair

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["KIND"]

KIND: ExperimentKind[Pair] = FriendsKind()  # mypy holds the kind to the contract
