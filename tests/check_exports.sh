#!/usr/bin/env bash
# check_exports.sh LIBRARY EXPORTS - the shared library exports exactly the symbols
# listed in EXPORTS (lib/exports.txt), no internal helper more and no API function less.
set -uo pipefail
lib=$1 list=$2
got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort)
want=$(grep -v '^#' "$list" | sort)
if [ "$got" != "$want" ]; then
    echo "exports of $lib differ from $list (< exported, > listed):"
    diff <(echo "$got") <(echo "$want")
    exit 1
fi
echo "$(echo "$got" | wc -l) symbols exported, as listed"
