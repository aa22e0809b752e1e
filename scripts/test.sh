#!/usr/bin/env bash
# Run the whole test suite the way CI does: install (or update) the venv with the dev tools, lint,
# then pytest. Extra arguments go to pytest (e.g. scripts/test.sh -k search -x).
#
# The first run on a new machine installs everything, including compiling llama-cpp-python from
# source (see README "Install"); later runs only check that nothing changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install.sh --dev
venv="${MEMORY_CORTEX_VENV:-.venv}"
python="$venv/bin/python"

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "== ruff"
"$python" -m ruff check middleware tests scripts bench
echo "== pytest"
set +e
"$python" -m pytest "$@"
status=$?
set -e
if [[ $status -eq 5 ]]; then
    echo "test.sh: pytest collected no tests; that is a failure here" >&2
    exit 1
fi
exit $status
