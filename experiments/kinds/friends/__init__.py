"""The two-steered-friends experiment: two role cards exchange letters, each writer steered or
not, and the lab measures whether one friend's pattern moves the other's."""

from diarylab.experiments.kinds.friends.kind import FriendsKind

KIND = FriendsKind()
