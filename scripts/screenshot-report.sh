#!/usr/bin/env bash
# Screenshots a reconciliation report in headless Chromium (Debian: apt-get install -y chromium),
# to check that the self-contained HTML page renders right in a real browser.
#
#   scripts/screenshot-report.sh [report.html] [out.png]
#
# Defaults: the newest report under ./.stagecoach/reports, written to docs/demo-report.png.
# The browser runs with networking off so a page that tried to load anything would show it.
set -euo pipefail
here="$(pwd)"
cd "$(dirname "$0")/.."
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }

report="${1:+$(abspath "$1")}"
if [[ -z "$report" ]]; then
  report="$(ls -t .stagecoach/reports/*/report.html 2>/dev/null | head -1 || true)"
  [[ -n "$report" ]] || { echo "no report found under .stagecoach/reports; run: npx stagecoach demo" >&2; exit 2; }
fi
out="${2:+$(abspath "$2")}"
out="${out:-docs/demo-report.png}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[[ -n "$browser" ]] || { echo "chromium not found; install it with: apt-get install -y chromium" >&2; exit 2; }

abs="$(cd "$(dirname "$report")" && pwd)/$(basename "$report")"
mkdir -p "$(dirname "$out")"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --hide-scrollbars --window-size="${WINDOW_SIZE:-1300,900}" --virtual-time-budget=3000 \
  --screenshot="$out" "file://$abs" 2>/dev/null >/dev/null
[[ -s "$out" ]] || { echo "chromium wrote no screenshot" >&2; exit 1; }
echo "$out"
