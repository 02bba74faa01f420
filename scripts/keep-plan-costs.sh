#!/usr/bin/env bash
# Works out the shipped studies' judge reading costs once, so the first `design check` or
# `plan` a researcher types reads them back instead of spending ~7 s on it (loading two
# 200k-token vocabularies and reading a stated judge: experiments/planning/cost_cache.py).
# scripts/setup-env.sh runs it after installing; a design whose judges differ from these works
# its own out on first use and keeps it. Where they are kept: DIARYLAB_PLAN_COSTS, else the
# lab's cache root.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${DIARYLAB_VENV:-.venv}
# The designs whose judges are served and read exactly by their own tokenizer; the others'
# judges are local or read by chat, and cost nothing to count.
for design in experiments/designs/diary-full.toml experiments/designs/friends.toml; do
  "$VENV/bin/diarylab" plan "$design" > /dev/null
done
