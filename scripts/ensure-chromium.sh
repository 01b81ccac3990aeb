#!/usr/bin/env bash
# The end-to-end tests drive Debian's Chromium (Playwright must never download
# a browser). Install it when missing and we are allowed to; otherwise say how.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Chromium from Debian's packages (once)..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi

echo "The end-to-end tests need Chromium at $CHROMIUM." >&2
echo "Install it with: sudo apt-get install chromium   (or set CHROMIUM_PATH)" >&2
exit 1
