#!/usr/bin/env bash
# Creates the Label Studio environment the rating tier tests against, once, and prints its
# `label-studio` command. Label Studio (a Django app, about 1 GB installed) lives in a venv of
# its own: the lab never imports it, it talks to the server over HTTP as a study team would
# (tests/experiments/rating/test_rating_label_studio.py starts and stops it on loopback).
#
# Re-running is instant: a stamp keyed by this file's sha256 skips the install when nothing
# changed. DIARYLAB_LABEL_STUDIO_VENV moves the venv (default: ~/.cache/diarylab/
# label-studio-venv, outside the clone, so every worktree and CI job on a machine shares it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=side-venv.sh
source "$here/side-venv.sh"
VENV=${DIARYLAB_LABEL_STUDIO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/diarylab/label-studio-venv}
stamp="$VENV/.diarylab-label-studio-installed"
want=$(side_venv_want "$here/setup-label-studio.sh")
side_venv_open "$VENV" "$stamp" "$want" "$VENV/bin/label-studio"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
echo "setup-label-studio: installing Label Studio into $VENV (once; about 1 GB)" >&2
pip install -q --upgrade pip >&2
# --no-compile: the server compiles what it imports on first start; byte-compiling all of
# Django and its packages up front would double the install time.
pip install -q --no-compile "label-studio==1.23.2" >&2
echo "$want" > "$stamp"
echo "$VENV/bin/label-studio"
