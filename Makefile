# The README's two commands. Each one sets up .venv by itself (scripts/setup-env.sh).
.PHONY: demo test setup setup-dev lint

demo: setup
	.venv/bin/diarylab demo

test: setup-dev
	.venv/bin/ruff check .
	.venv/bin/mypy
	./scripts/setup-browser.sh
	@start=$$(date +%s); ./scripts/setup-vllm.sh >/dev/null; \
	  echo "vLLM venv ready in $$(( $$(date +%s) - start )) s (scripts/setup-vllm.sh)"
	@start=$$(date +%s); ./scripts/setup-label-studio.sh >/dev/null; \
	  echo "Label Studio venv ready in $$(( $$(date +%s) - start )) s (scripts/setup-label-studio.sh)"
	.venv/bin/python -m pytest

setup:
	./scripts/setup-env.sh

setup-dev:
	./scripts/setup-env.sh dev
