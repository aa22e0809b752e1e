#!/usr/bin/env bash
# Type-check the OpenClaw plugin (integrations/openclaw) against the published OpenClaw SDK and run
# its node tests, which start real daemons with this repository's Python.
#
#   scripts/test-openclaw-plugin.sh [PYTHON]
#
# PYTHON runs the daemon under test (default: $MEMORY_CORTEX_VENV/bin/python, else .venv/bin/python).
# Node comes from scripts/node.sh (installed into a cache folder when missing). `npm ci` runs only
# when package-lock.json changed since the last install (OpenClaw with its dependencies is ~650 MB).
#
# Environment:
#   MEMORY_CORTEX_OPENCLAW_E2E=1   also run one real `openclaw agent --local` turn (minutes; see the
#                                  plugin's README)
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
    exit 0
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
python="${1:-${MEMORY_CORTEX_VENV:-$repo_root/.venv}/bin/python}"
[[ "$python" == /* ]] || python="$repo_root/$python"

node_binary="$(scripts/node.sh)"
export PATH="$(dirname "$node_binary"):$PATH"
echo "node $(node --version) ($node_binary)"

cd integrations/openclaw
stamp="node_modules/.memory-cortex-lock.sha256"
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1) $(node --version)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
    echo "npm ci (package-lock.json changed or first run)"
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
    echo "$lock_hash" >"$stamp"
fi

echo "== tsc --noEmit"
npm run --silent typecheck
echo "== node --test"
MEMORY_CORTEX_TEST_PYTHON="$python" npm test --silent
