#!/usr/bin/env bash
# Start the Memory Cortex daemon in the background and wait until GET /health answers.
#
#   scripts/start.sh [--no-install] [--with-llama] [DAEMON ARGS...]
#
#   --no-install   skip scripts/install.sh (the venv must already have the dependencies)
#   --with-llama   also install in-process llama.cpp (compiled from source: a C/C++ compiler, cmake and
#                  ~8 minutes the first time), for llm.backend: llama_cpp with a GGUF in llm.model_path
#   DAEMON ARGS    passed to `python -m memory_cortex`, e.g. --port 8400 --db /srv/memory.db --config my.yaml
#
# Environment:
#   MEMORY_CORTEX_VENV            venv to run from (default: .venv in the repository)
#   MEMORY_CORTEX_PID_FILE        PID file (default: run/memory-cortex.pid)
#   MEMORY_CORTEX_LOG_FILE        log file, appended to (default: logs/memory-cortex.log)
#   MEMORY_CORTEX_START_TIMEOUT   seconds to wait for /health (default: 120)
#   MEMORY_CORTEX_<SECTION>__<KEY> daemon settings, e.g. MEMORY_CORTEX_SERVER__PORT=8400
#
# Relative paths are taken from the repository root. Stop the daemon with scripts/stop.sh.
#
# Exit status: 0 the daemon is up (or was already running); 2 a problem to fix, said on stderr (the
# configuration, a port in use, a problem the daemon named at start-up); 1 anything else.
set -euo pipefail

usage() {
    # The comment block at the top of this file.
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

install=1
install_args=()
daemon_args=()
for arg in "$@"; do
    case "$arg" in
        --no-install) install=0 ;;
        --with-llama) install_args+=(--with-llama) ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) daemon_args+=("$arg") ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="${MEMORY_CORTEX_VENV:-.venv}"
pid_file="${MEMORY_CORTEX_PID_FILE:-run/memory-cortex.pid}"
# Beside the PID file, the address the daemon answers at: `memory-cortex status` and `doctor` ask it.
address_file="${pid_file%.pid}.url"
log_file="${MEMORY_CORTEX_LOG_FILE:-logs/memory-cortex.log}"
start_timeout="${MEMORY_CORTEX_START_TIMEOUT:-120}"
if ! [[ "$start_timeout" =~ ^[0-9]+$ ]]; then
    echo "start.sh: MEMORY_CORTEX_START_TIMEOUT must be a whole number of seconds, not '$start_timeout'" >&2
    exit 2
fi

# shellcheck source=scripts/pidfile.sh
source scripts/pidfile.sh

# How to stop it, naming the PID file when it is not the default one.
stop_command="scripts/stop.sh"
if [[ -n "${MEMORY_CORTEX_PID_FILE:-}" ]]; then
    stop_command="MEMORY_CORTEX_PID_FILE=$(printf '%q' "$pid_file") scripts/stop.sh"
fi

if [[ -f "$pid_file" ]]; then
    old_pid="$(tr -d '[:space:]' <"$pid_file")"
    if is_daemon_running "$old_pid"; then
        echo "Memory Cortex is already running (pid $old_pid, PID file $pid_file)."
        echo "Stop it with: $stop_command"
        exit 0
    fi
    echo "Removing stale PID file $pid_file (pid '${old_pid}' is not running)."
    rm -f "$pid_file" "$address_file"
fi

if [[ "$install" == 1 ]]; then
    bash scripts/install.sh ${install_args[@]+"${install_args[@]}"}
fi

python=""
for candidate in "$venv/bin/python" "$venv/bin/python3"; do
    if [[ -x "$candidate" ]]; then
        python="$candidate"
        break
    fi
done
if [[ -z "$python" ]]; then
    echo "start.sh: no Python in $venv/bin; run scripts/install.sh (or start without --no-install)" >&2
    exit 1
fi

# Where /health will answer, by the daemon's own resolution (flags > env > config file). A broken
# configuration (a typo, a bad flag) is said here, in the daemon's own words, before any port check.
resolve_address() {
    "$python" - ${daemon_args[@]+"${daemon_args[@]}"} <<'PY'
import sys

from memory_cortex.__main__ import build_parser, loaded_config
from memory_cortex.config import config_file, user_config_path

args = build_parser().parse_args(sys.argv[1:])
config = loaded_config(args)
if config is None:
    sys.exit(2)
print(config.server.host, config.server.port, config_file(args.config) or user_config_path())
PY
}

if ! address="$(resolve_address)" || [[ -z "$address" ]]; then
    echo "start.sh: not starting: fix the configuration above (see docs/troubleshooting.md)." >&2
    exit 2
fi
read -r host port config_path <<<"$address"

# A wildcard bind is reached on loopback; an IPv6 literal needs brackets in a URL.
case "$host" in
    "" | 0.0.0.0) probe_host=127.0.0.1 ;;
    "::" | "[::]") probe_host="[::1]" ;;
    *:*) probe_host="[${host#[}" && probe_host="${probe_host%]}]" ;;
    *) probe_host="$host" ;;
esac
url="http://$probe_host:$port"

# Prints the status from $url/health; fails while nothing answers there.
probe_health() {
    "$python" -I -S - "$url/health" 2>/dev/null <<'PY'
import json
import sys
import urllib.error
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
        body = response.read()
except urllib.error.HTTPError as exc:  # answering at all means it is up
    body = exc.read()
except Exception:  # refused, reset, timed out, not HTTP yet: not up
    sys.exit(1)
try:
    print(json.loads(body).get("status", "unknown"))
except (ValueError, AttributeError):
    print("unknown")
PY
}

# Who holds a TCP port, as `ss` names it ("python3 (pid 4242)"); empty when it cannot tell.
port_holder() {
    command -v ss >/dev/null 2>&1 || return 0
    ss -Hltnp "sport = :$port" 2>/dev/null |
        sed -nE 's/.*users:\(\("([^"]+)",pid=([0-9]+).*/\1 (pid \2)/p' | head -n 1
}

# Whether the daemon could listen there: a port held by any program (another Memory Cortex, another
# web server, anything) is said now, with who holds it and how to choose another, not after a start.
port_is_free() {
    "$python" -I -S - "$host" "$port" <<'PY'
import socket
import sys

host, port = sys.argv[1], int(sys.argv[2])
try:
    family, kind, proto, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
except socket.gaierror:
    sys.exit(0)  # not an address of this machine: the daemon says so itself
with socket.socket(family, kind, proto) as sock:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except PermissionError:
        sys.exit(0)  # a privileged port: the daemon says so itself
    except OSError:
        sys.exit(1)
PY
}

if [[ "$port" != 0 ]] && ! port_is_free; then
    holder="$(port_holder)"
    what="another program"
    if status="$(probe_health)"; then
        what="a server that answers /health (status: $status): another Memory Cortex started by hand or with another PID file?"
    fi
    echo "start.sh: port $port on $host is in use${holder:+ by $holder}; $what" >&2
    echo "Start on another port: scripts/start.sh --port $((port + 1)), or set server.port in $config_path" >&2
    echo "(or MEMORY_CORTEX_SERVER__PORT). Who holds it: ss -ltnp 'sport = :$port'" >&2
    exit 2
fi

# What the daemon writes (database, Markdown mirror, exports, log) is for this account alone, as
# under systemd (UMask=0077); the daemon also makes its database 0600 itself.
umask 077
mkdir -p "$(dirname "$pid_file")" "$(dirname "$log_file")"
echo "Starting Memory Cortex: $python -m memory_cortex ${daemon_args[*]+"${daemon_args[*]}"}"
echo "Log: $log_file"
{
    echo
    echo "=== $(date '+%Y-%m-%d %H:%M:%S %z') scripts/start.sh: python -m memory_cortex ${daemon_args[*]+"${daemon_args[*]}"}"
} >>"$log_file"
# Where this start's lines begin in the log (the lines before are earlier runs').
log_start=$(wc -l <"$log_file")

# setsid (where there is one) puts the daemon in a session of its own, so a Ctrl-C in this terminal
# while waiting below does not reach it. Without job control, bash runs `setsid` without forking, so $!
# is the daemon's own PID.
launcher=(nohup)
if command -v setsid >/dev/null 2>&1; then
    launcher=(setsid nohup)
fi
"${launcher[@]}" "$python" -m memory_cortex ${daemon_args[@]+"${daemon_args[@]}"} >>"$log_file" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pid_file"
if [[ "$port" != 0 ]]; then
    echo "$url" >"$address_file"
fi

if [[ "$port" == 0 ]]; then
    echo "Started (pid $pid) on a port picked by the system (port 0): /health is not checked; see $log_file."
    exit 0
fi

echo -n "Waiting for $url/health (up to ${start_timeout} s)"
started_at=$SECONDS
while true; do
    # Not is_daemon_running: just after the fork the child may not have exec'd python yet.
    if ! is_alive "$pid"; then
        wait "$pid" 2>/dev/null && exit_code=0 || exit_code=$?
        echo
        # This start's lines only: the daemon's one-line problems ("memory-cortex: …") first, then
        # at most the last 5 lines of what else it wrote.
        this_start="$(tail -n "+$((log_start + 1))" "$log_file")"
        problems="$(grep -E '^memory-cortex: ' <<<"$this_start" || true)"
        if [[ -n "$problems" ]]; then
            echo "$problems" >&2
        fi
        rest="$(grep -vE '^memory-cortex: ' <<<"$this_start" | grep -v '^$' | tail -n 5 || true)"
        if [[ -n "$rest" ]]; then
            echo "Memory Cortex exited during start-up (exit code $exit_code). The end of this start's log ($log_file):" >&2
            echo "$rest" >&2
        else
            echo "Memory Cortex exited during start-up (exit code $exit_code); log: $log_file" >&2
        fi
        rm -f "$pid_file" "$address_file"
        if [[ "$exit_code" == 2 ]]; then
            exit 2 # a problem it named: see above
        fi
        exit 1
    fi
    if status="$(probe_health)"; then
        echo
        echo "Memory Cortex is up at $url (status: $status, pid $pid, $((SECONDS - started_at)) s)."
        echo "Stop it with: $stop_command"
        exit 0
    fi
    if ((SECONDS - started_at >= start_timeout)); then
        echo
        echo "Memory Cortex (pid $pid) did not answer $url/health within ${start_timeout} s." >&2
        echo "It is still running; see $log_file, or stop it with: $stop_command. Last 30 lines:" >&2
        tail -n 30 "$log_file" >&2
        exit 1
    fi
    echo -n "."
    sleep 1
done
