# Sourced by setup-vllm.sh and setup-label-studio.sh: a tool the lab talks to but never imports
# gets a venv of its own, installed once. `side_venv_open VENV STAMP WANT PRINTED` ends the
# calling script, printing PRINTED, when STAMP already holds WANT (the caller's hash of itself and
# this file); else it takes the venv's lock (two CI jobs or worktrees starting together install
# once), looks again, and leaves a venv at VENV for the caller to install into.
side_venv_open() {
  local venv=$1 stamp=$2 want=$3 printed=$4
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "$printed"
    exit 0
  fi
  mkdir -p "$(dirname "$venv")"
  exec 9>"$venv.lock"
  flock 9
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "$printed"
    exit 0
  fi
  [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
}

# The caller's stamp: its own text and this file's, so a change to either installs again.
side_venv_want() {
  cat "$1" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1
}
