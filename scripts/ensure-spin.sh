#!/usr/bin/env bash
# The model check (lib/idempotency/model) needs SPIN, and gcc to compile the
# verifier SPIN writes (SPIN also runs the model through gcc's preprocessor).
# Both are Debian packages. Install them when missing and we are allowed to;
# otherwise say how.
set -euo pipefail
command -v spin >/dev/null && command -v gcc >/dev/null && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing SPIN and gcc from Debian's packages (once)..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin gcc >/dev/null
  exit 0
fi

echo "The model check needs SPIN and gcc on PATH." >&2
echo "Install them with: sudo apt-get install spin gcc" >&2
exit 1
