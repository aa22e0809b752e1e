#!/usr/bin/env bash
# Shared by start.sh and stop.sh (sourced, not run): is a PID file's process our daemon?

# True when $1 is a live process (a zombie, exited but not yet reaped, does not count).
is_alive() {
    local pid="$1" state
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    if [[ -r "/proc/$pid/stat" ]]; then
        # Gone between the two checks: the file vanishes with it.
        state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
        [[ -n "$state" && "$state" != Z ]] || return 1
    fi
    return 0
}

# True when $1 is a live process running the daemon (not a process that was given a recycled PID).
is_daemon_running() {
    is_alive "$1" || return 1
    if [[ -r "/proc/$1/cmdline" ]]; then
        tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qE -- '-m (memory_cortex|middleware)( |$)' || return 1
    fi
    return 0
}
