"""The benchmark experiment: chatbots on MentalHealthBench / HealthBench conversations."""

from diarylab.experiments.kinds.benchmark.kind import BenchmarkKind

KIND = BenchmarkKind()
