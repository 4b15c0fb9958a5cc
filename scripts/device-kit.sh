#!/bin/sh
# device-kit.sh - what tests/gpu/device-check.sh needs on a GPU machine that this one has and it
# may lack, into .device-kit/ (ignored by git; the device tool's `carry` takes it along):
# SQLite's headers, which the build requires and the device's image may lack (its list of
# packages names no -dev package), and this machine's libsqlite3 for one without any. Run it
# here, once, before calling device-check.sh there; docs/gpu.md says how.
#
# usage: scripts/device-kit.sh
set -eu
cd "$(dirname "$0")/.."
case ${1:-} in
'') ;;
-h | --help)
    sed -n '2,/^# usage/{s/^# \{0,1\}//;p}' "$0"
    exit 0
    ;;
*)
    echo "device-kit: unknown argument '$1' (usage: scripts/device-kit.sh)" >&2
    exit 2
    ;;
esac
inc=$(echo '#include <sqlite3.h>' | cc -M -xc - 2>/dev/null | tr ' \\' '\n\n' |
    grep '/sqlite3\.h$' | head -1) || true
lib=$(ldconfig -p | sed -n 's/.*libsqlite3\.so\.0 (libc6,x86-64) => //p' | head -1)
if [ -z "$inc" ] || [ -z "$lib" ]; then
    echo "device-kit: this machine lacks SQLite's headers or library (make deps installs them)" >&2
    exit 2
fi
rm -rf .device-kit
mkdir -p .device-kit/include .device-kit/lib
cp "$inc" "$(dirname "$inc")/sqlite3ext.h" .device-kit/include/
cp -L "$lib" .device-kit/lib/libsqlite3.so.0
echo "device-kit: .device-kit holds $(ls .device-kit/include | tr '\n' ' ')and libsqlite3.so.0" \
    "($(du -sh .device-kit | cut -f1)); carry it: run(..., carry=[\".device-kit\"])"
