"""`diarylab plan`: a design's texts, readings, requests, tokens and hours, counted before it
runs (plan.py), per judge from the reader a run uses (costs.py, simulated.py), as text
(render.py)."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "gpu_hours",
    "held_plan",
    "kept_measure",
    "measured",
    "plan",
    "render",
    "render_gpu",
    "serve_lines",
    "tokens",
]
