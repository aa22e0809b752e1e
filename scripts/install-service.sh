#!/usr/bin/env bash
# Install Memory Cortex as a systemd service, running from this checkout (run as root).
#
#   sudo scripts/install-service.sh [--user NAME] [--no-start]
#
#   --user NAME   the system user the daemon runs as (default: memory-cortex; created when missing)
#   --no-start    install and enable, but do not start it now
#
# What it does, each step skipped when already done:
#   1. scripts/install.sh: the virtual environment in .venv, with bin/memory-cortex;
#   2. the system user (no login shell, home /var/lib/memory-cortex);
#   3. /etc/memory-cortex/config.yaml, a copy of memory_cortex/config_example.yaml (an existing one is never touched);
#   4. /etc/systemd/system/memory-cortex.service from systemd/memory-cortex.service, with this
#      checkout's path in place of /opt/memory-cortex and the user filled in;
#   5. systemctl daemon-reload, enable --now; then it waits for /health.
# The checkout must be readable by that user and outside /home, /root and /run/user (the unit's
# ProtectHome=yes hides those), with a path of plain characters. A unit it replaces is kept as .bak.
#
# Environment (for tests and packagers): MEMORY_CORTEX_SYSTEM_ROOT writes every system file under
# that folder instead of /, and skips the user, the venv and systemctl.
set -euo pipefail

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

service_user=memory-cortex
start=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --user)
            service_user="${2:?--user needs a name}"
            shift 2
            ;;
        --no-start)
            start=0
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            echo "install-service.sh: unknown option: $1 (see --help)" >&2
            exit 2
            ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
checkout="$(pwd -P)"
root="${MEMORY_CORTEX_SYSTEM_ROOT:-}"
staged=0
[[ -n "$root" ]] && staged=1

if [[ "$staged" == 0 && "$(id -u)" != 0 ]]; then
    echo "install-service.sh: run it as root: sudo $0 $*" >&2
    exit 1
fi
if [[ "$staged" == 0 ]] && ! command -v systemctl >/dev/null 2>&1; then
    echo "install-service.sh: systemctl not found: this machine does not run systemd (on WSL2, set systemd=true in /etc/wsl.conf and restart WSL)" >&2
    exit 1
fi
# The path goes into a sed expression and a unit file (where % starts a specifier): plain characters only.
if [[ ! "$checkout" =~ ^[A-Za-z0-9._/-]+$ ]]; then
    echo "install-service.sh: the checkout's path ($checkout) has characters a unit file would misread: move it (e.g. to /opt/memory-cortex)" >&2
    exit 1
fi
# ProtectHome=yes hides these from the service: it would not find its own code.
case "$checkout/" in
    /home/* | /root/* | /run/user/*)
        echo "install-service.sh: the service cannot see $checkout (ProtectHome=yes hides home folders): clone it to /opt/memory-cortex and run this from there" >&2
        exit 1
        ;;
esac
if [[ ! "$service_user" =~ ^[a-z_][a-z0-9_-]{0,31}$ || "$service_user" == root ]]; then
    echo "install-service.sh: --user must be a plain system user name, not root (got: $service_user)" >&2
    exit 2
fi

if [[ "$staged" == 0 ]]; then
    echo "1/5 virtual environment"
    scripts/install.sh
    echo "2/5 user $service_user"
    if ! id -u "$service_user" >/dev/null 2>&1; then
        useradd --system --home-dir /var/lib/memory-cortex --shell /usr/sbin/nologin "$service_user"
    fi
    if ! runuser -u "$service_user" -- test -r "$checkout/memory_cortex/__init__.py"; then
        echo "install-service.sh: $service_user cannot read $checkout: move the checkout (e.g. to /opt/memory-cortex) or open its folders" >&2
        exit 1
    fi
fi

config="$root/etc/memory-cortex/config.yaml"
echo "3/5 $config"
if [[ -e "$config" ]]; then
    echo "    kept: it exists"
else
    install -D -m 0640 memory_cortex/config_example.yaml "$config"
    if [[ "$staged" == 0 ]]; then
        chgrp "$service_user" "$config"
    fi
fi

unit="$root/etc/systemd/system/memory-cortex.service"
echo "4/5 $unit"
mkdir -p "$(dirname "$unit")"
rendered="$(mktemp "$unit.XXXXXX")"
trap 'rm -f "$rendered"' EXIT
sed -e "s|/opt/memory-cortex|$checkout|g" \
    -e "s|^User=.*|User=$service_user|" \
    -e "s|^Group=.*|Group=$service_user|" \
    systemd/memory-cortex.service >"$rendered"
chmod 0644 "$rendered"
if [[ -e "$unit" ]] && ! cmp -s "$rendered" "$unit"; then
    cp -p "$unit" "$unit.bak"
    echo "    the unit it replaces is kept as $unit.bak"
fi
mv "$rendered" "$unit"
trap - EXIT

if [[ "$staged" == 1 ]]; then
    echo "5/5 skipped (MEMORY_CORTEX_SYSTEM_ROOT=$root)"
    exit 0
fi
echo "5/5 systemctl"
systemctl daemon-reload
if [[ "$start" == 0 ]]; then
    systemctl enable memory-cortex
    echo "Installed and enabled; start it with: sudo systemctl start memory-cortex"
    exit 0
fi
systemctl enable --now memory-cortex
for _ in $(seq 60); do
    if "$checkout/.venv/bin/memory-cortex" --config /etc/memory-cortex/config.yaml status >/dev/null 2>&1; then
        "$checkout/.venv/bin/memory-cortex" --config /etc/memory-cortex/config.yaml status
        echo "Logs: journalctl -u memory-cortex -f"
        exit 0
    fi
    sleep 1
done
echo "install-service.sh: the service did not answer within 60 s; see: journalctl -u memory-cortex -n 50" >&2
exit 1
