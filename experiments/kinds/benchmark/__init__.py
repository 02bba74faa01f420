"""The benchmark experiment: chatbots on MentalHealthBench / HealthBench conversations."""

from experiments.kinds.benchmark.kind import BenchmarkKind

KIND = BenchmarkKind()
