#!/usr/bin/env bash
# OncePay supports Node.js 24 (package.json's engines; Node 20 is past its
# end of life, and Prism, axe and Prisma's tools want 22 or 24). Prints the
# folder whose `node` to put first on PATH: the one already there when it is
# new enough, otherwise Node.js ${NODE_VERSION} unpacked from its npm package
# (node-linux-<arch>, the official build) into a cache kept across runs.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION="$(tr -d '[:space:]' < .node-version)"
REQUIRED_MAJOR="${NODE_VERSION%%.*}"
# The oldest release of that major that package.json's engines accept.
MINIMUM_MINOR="$(sed -n 's/.*"node": *">=[0-9]*\.\([0-9]*\)".*/\1/p' package.json)"

if command -v node >/dev/null &&
  node -e 'const [major, minor] = process.versions.node.split(".").map(Number);
    process.exit(major === Number(process.argv[1]) && minor >= Number(process.argv[2]) ? 0 : 1)' \
    "${REQUIRED_MAJOR}" "${MINIMUM_MINOR}"; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "No Node.js ${NODE_VERSION} package for $(uname -m): install Node.js ${REQUIRED_MAJOR} yourself." >&2; exit 1 ;;
esac

target="${XDG_CACHE_HOME:-${HOME}/.cache}/oncepay/node-v${NODE_VERSION}-linux-${arch}"
if [ ! -x "${target}/bin/node" ]; then
  echo "Installing Node.js ${NODE_VERSION} from its npm package node-linux-${arch} (once)..." >&2
  scratch="$(mktemp -d)"
  trap 'rm -rf "${scratch}"' EXIT
  (cd "${scratch}" && npm pack --silent "node-linux-${arch}@${NODE_VERSION}" >/dev/null)
  mkdir -p "${scratch}/unpacked"
  tar -xzf "${scratch}"/node-linux-"${arch}"-*.tgz -C "${scratch}/unpacked" --strip-components=1
  mkdir -p "$(dirname "${target}")"
  rm -rf "${target}"
  mv "${scratch}/unpacked" "${target}"
fi
echo "${target}/bin"
