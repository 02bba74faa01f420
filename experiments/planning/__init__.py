"""`diarylab plan`: a design's texts, readings, requests, tokens and hours, counted before it
runs (plan.py), per judge from the reader a run uses (costs.py, simulated.py), as text
(render.py)."""
