#!/bin/sh
# Installs what ppscope needs to build and test on Debian/Ubuntu, and nothing when all is there.
# Uses sudo when not root. Set PPS_DEPS_EXTRA to add packages.
set -eu

need="cmake make gcc pkg-config libsqlite3-dev sqlite3 libncurses-dev tmux jq openmpi-bin libopenmpi-dev libopenblas-dev"
missing=""
for pkg in $need ${PPS_DEPS_EXTRA:-}; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: missing packages:$missing (run as root or install sudo)" >&2
    exit 2
fi
echo "install-deps: installing$missing" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
