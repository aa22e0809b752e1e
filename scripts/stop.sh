#!/usr/bin/env bash
# Stop the Memory Cortex daemon started by scripts/start.sh: SIGTERM, then wait for a graceful exit.
#
#   scripts/stop.sh [--force]
#
#   --force   if it is still running after the wait, SIGKILL it
#
# Environment:
#   MEMORY_CORTEX_PID_FILE       PID file (default: run/memory-cortex.pid)
#   MEMORY_CORTEX_STOP_TIMEOUT   seconds to wait after SIGTERM (default: 30)
#
# Exit status: 0 when the daemon is stopped (or was not running), 1 when it is still running.
set -euo pipefail

usage() {
    # The comment block at the top of this file.
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            echo "stop.sh: unknown option: $arg (see --help)" >&2
            exit 2
            ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
pid_file="${MEMORY_CORTEX_PID_FILE:-run/memory-cortex.pid}"
# Beside the PID file, the address the daemon answers at: `memory-cortex status` and `doctor` ask it.
address_file="${pid_file%.pid}.url"
stop_timeout="${MEMORY_CORTEX_STOP_TIMEOUT:-30}"
if ! [[ "$stop_timeout" =~ ^[0-9]+$ ]]; then
    echo "stop.sh: MEMORY_CORTEX_STOP_TIMEOUT must be a whole number of seconds, not '$stop_timeout'" >&2
    exit 2
fi

# shellcheck source=scripts/pidfile.sh
source scripts/pidfile.sh

# Microseconds since the epoch (bash 5), else whole seconds scaled; for the "stopped in X s" report.
now_us() {
    if [[ -n "${EPOCHREALTIME:-}" ]]; then
        echo "${EPOCHREALTIME//[.,]/}"
    else
        echo "$(($(date +%s) * 1000000))"
    fi
}

elapsed_since() {
    local tenths=$((($(now_us) - $1) / 100000))
    echo "$((tenths / 10)).$((tenths % 10))"
}

# Waits until $1 has exited or $2 seconds have passed; true when it has exited.
wait_for_exit() {
    local pid="$1" deadline_us=$(($(now_us) + $2 * 1000000))
    while is_daemon_running "$pid"; do
        if (($(now_us) >= deadline_us)); then
            return 1
        fi
        sleep 0.2
    done
    return 0
}

if [[ ! -f "$pid_file" ]]; then
    echo "Memory Cortex is not running (no PID file $pid_file)."
    exit 0
fi
pid="$(tr -d '[:space:]' <"$pid_file")"
if ! is_daemon_running "$pid"; then
    rm -f "$pid_file" "$address_file"
    echo "Memory Cortex is not running (pid '$pid' is gone; removed stale PID file $pid_file)."
    exit 0
fi

echo "Stopping Memory Cortex (pid $pid): SIGTERM, waiting up to ${stop_timeout} s"
started_us="$(now_us)"
kill -TERM "$pid" 2>/dev/null || true
if wait_for_exit "$pid" "$stop_timeout"; then
    rm -f "$pid_file" "$address_file"
    echo "Memory Cortex stopped (pid $pid) in $(elapsed_since "$started_us") s."
    exit 0
fi

if [[ "$force" == 0 ]]; then
    echo "Memory Cortex (pid $pid) is still running after ${stop_timeout} s." >&2
    echo "Run scripts/stop.sh --force to SIGKILL it." >&2
    exit 1
fi

echo "Memory Cortex (pid $pid) is still running after ${stop_timeout} s: sending SIGKILL."
kill -KILL "$pid" 2>/dev/null || true
if wait_for_exit "$pid" 10; then
    rm -f "$pid_file" "$address_file"
    echo "Memory Cortex killed (pid $pid) after $(elapsed_since "$started_us") s."
    exit 0
fi
echo "Memory Cortex (pid $pid) survived SIGKILL (stuck in the kernel?); PID file kept." >&2
exit 1
