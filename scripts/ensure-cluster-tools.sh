#!/usr/bin/env bash
# The cluster (npm run cluster, its tests and benchmark) runs HAProxy in front
# of the app instances and PgBouncer in front of PostgreSQL; its replicated
# shape (CLUSTER_DATABASE=patroni, and the failover tests) runs PostgreSQL
# nodes under Patroni with one etcd member; HAProxy's HTTPS uses a
# certificate openssl makes at start. All are Debian packages; the
# cluster starts its own processes, so only the binaries are needed. Install
# them when missing and we are allowed to; otherwise say how.
set -euo pipefail
missing=()
command -v haproxy >/dev/null || missing+=(haproxy)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
command -v patroni >/dev/null || missing+=(patroni)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v openssl >/dev/null || missing+=(openssl)
# Patroni keeps its keys in etcd's v2 store (lib/cluster/patroni-node.ts
# says why), through this client module. Asked of Debian's Python, the one
# Patroni runs on: another python3 on the PATH would not see the package.
/usr/bin/python3 -c "import etcd" 2>/dev/null || missing+=(python3-etcd)
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing ${missing[*]} from Debian's packages (once)..."
  apt-get update -qq
  # Whatever service the packages may start uses its default port; the
  # cluster runs its own processes on free ones.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi

echo "The cluster needs ${missing[*]} installed." >&2
echo "Install with: sudo apt-get install ${missing[*]}" >&2
exit 1
