"""Profiles and their vectors: resolving the profiles a design names (files, inline rules, the
unsteered twin), making an inline profile's vector and strength inside the run folder, and the
vector-making steps `diarylab steer` shares."""
