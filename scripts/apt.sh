#!/usr/bin/env bash
# apt.sh ARGS... - Debian's apt-get as every script here runs it (setup.sh, cross.sh,
# site.sh, fetch-data.sh, fuzz/run.sh): `apt-get ARGS`, as root or through sudo, asking
# nothing (DEBIAN_FRONTEND=noninteractive, -y for install), its progress not shown; and
# while another apt-get or dpkg holds apt's locks, as a new machine's unattended-upgrades
# does in its first minutes, it waits (up to MYGPT_APT_WAIT seconds, 600 by default) and
# tries again, where apt-get alone stops at once ("Could not get lock"). Any other failure
# is apt-get's, said on stderr, and its status.
#
#   bash scripts/apt.sh update
#   bash scripts/apt.sh install --no-install-recommends PACKAGE...
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: apt.sh update | install [OPTION...] PACKAGE..." >&2; exit 2; }
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
yes=()
[ "$1" = install ] && yes=(-y)
deadline=$((SECONDS + ${MYGPT_APT_WAIT:-600}))
err=$(mktemp)
trap 'rm -f "$err"' EXIT
said=
while :; do
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -qq "${yes[@]}" "$@" >/dev/null 2>"$err"
    status=$?
    [ "$status" -eq 0 ] && exit 0
    if grep -q -e 'Could not get lock' -e 'Unable to lock' -e 'Unable to acquire the dpkg frontend lock' "$err" &&
        [ "$SECONDS" -lt "$deadline" ]; then
        [ -n "$said" ] || echo "apt: another apt-get or dpkg is running (a new machine's updates?): waiting for it" >&2
        said=1
        sleep 5
        continue
    fi
    cat "$err" >&2
    exit "$status"
done
