"""Derived runs: a design that reuses a finished run's texts and judges, scores or analyses them
anew — what it reuses, and every check that the reuse is sound."""
