"""The two-steered-friends experiment: two role cards exchange letters, each writer steered or
not, and the lab measures whether one friend's pattern moves the other's."""

from diarylab.experiments.kinds.friends.kind import FriendsKind

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["KIND"]

KIND = FriendsKind()
