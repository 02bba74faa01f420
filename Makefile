# The README's two commands. Each one sets up .venv by itself (scripts/setup-env.sh).
.PHONY: demo test setup lint

demo: setup
	.venv/bin/diarylab demo

test: setup
	.venv/bin/ruff check .
	.venv/bin/python -m pytest

setup:
	./scripts/setup-env.sh
