#!/usr/bin/env bash
# The strategy lab runs one of the designs it compares on Redis, and starts
# its own redis-server for it (scripts/lab-redis.mts): the tests need the
# binary, not a running service. It is a Debian package. Install it when
# missing and we are allowed to; otherwise say how.
set -euo pipefail
command -v redis-server >/dev/null && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing redis-server from Debian's packages (once)..."
  apt-get update -qq
  # The package would also start a system service; the lab needs only the binary.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  exit 0
fi

echo "The strategy lab's Redis design needs redis-server on PATH." >&2
echo "Install it with: sudo apt-get install redis-server" >&2
exit 1
