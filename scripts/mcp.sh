#!/usr/bin/env bash
# Serve the memory over MCP on stdin/stdout, for clients that start the server themselves
# (Claude Desktop, Claude Code, Cursor): `python -m memory_cortex mcp` from the repository's venv.
#
#   scripts/mcp.sh [--user USER] [--config PATH] [--db PATH]
#
#   --user     whose memories the client reads and writes (default: mcp.user_id, else
#              users.default_user_id); the model never chooses it
#   --config   YAML config (default: ~/.config/memory-cortex/config.yaml); --db overrides database.path
#
# Environment:
#   MEMORY_CORTEX_VENV             venv to run from (default: .venv in the repository)
#   MEMORY_CORTEX_<SECTION>__<KEY> settings, e.g. MEMORY_CORTEX_MCP__USER_ID=alice
#
# Relative paths are taken from the repository root (as in scripts/start.sh), so a client may start
# this from any directory and still open the daemon's database. stdout is the protocol; logs go to
# stderr. The daemon serves the same tools over HTTP at /mcp.
set -euo pipefail

for arg in "$@"; do
    if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
        exit 0
    fi
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="${MEMORY_CORTEX_VENV:-.venv}"
for candidate in "$venv/bin/python" "$venv/bin/python3"; do
    if [[ -x "$candidate" ]]; then
        exec "$candidate" -m memory_cortex mcp "$@"
    fi
done
echo "mcp.sh: no Python in $venv/bin; run scripts/install.sh first" >&2
exit 1
