#!/usr/bin/env bash
# The test command's browser: the HTML report's browser tests drive Debian's Chromium through
# playwright, which never downloads a browser of its own (its CDN is not reachable from every
# machine). Installed where apt and root are at hand (CI); elsewhere those tests skip and say
# why (under CI=true they fail instead). The demo does not need it, so only `make test` calls this.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
    >/dev/null 2>&1 || echo "setup-browser: could not install chromium; browser tests will skip" >&2
else
  echo "setup-browser: no chromium and no apt as root; browser tests will skip" >&2
fi
