#!/usr/bin/env bash
# check_serial_omp.sh SOURCE_ROOT - every OpenMP function the C sources call is one that
# lib/base/serial/omp.h answers, so a build without OpenMP (-Dopenmp=disabled, as on a Mac
# without libomp) compiles: a call it lacks is an implicit declaration there, an error for
# clang and at -O0 an undefined symbol. Skips (77) outside a git checkout.
set -uo pipefail
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
serial=lib/base/serial/omp.h
[ -f "$serial" ] || { echo "$serial: missing"; exit 1; }
answered=$(grep -oE '\bomp_[a-z_]+\(void\)|\bomp_[a-z_]+\(int [a-z]+\)' "$serial" | sed 's/(.*//' | sort -u)
called=$(git ls-files -z '*.c' '*.h' | xargs -0 grep -ohE '\bomp_[a-z_]+[[:space:]]*\(' -- | sed 's/[[:space:]]*($//' | sort -u)
missing=$(comm -23 <(echo "$called") <(echo "$answered"))
if [ -n "$missing" ]; then
    echo "called in the sources but not answered by $serial (a build with -Dopenmp=disabled breaks):"
    for f in $missing; do
        echo "  $f: $(git ls-files -z '*.c' '*.h' | xargs -0 grep -lE "\\b$f[[:space:]]*\\(" -- | grep -v "^$serial$" | tr '\n' ' ')"
    done
    exit 1
fi
echo "the $(echo "$called" | wc -l) OpenMP functions the sources call are all in $serial"
