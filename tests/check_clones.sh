#!/usr/bin/env bash
# check_clones.sh SOURCE_ROOT - no function built per instruction set (MYGPT_CLONES,
# lib/base/simd.h) holds an OpenMP region: clang compiles a region's body as a function of
# its own, without the clone's instruction set, so its fmaf are libm calls and its loops
# scalar (the same bits, several times slower). The region goes outside the clone and calls
# it on each thread's run. Skips (77) outside a git checkout.
set -uo pipefail
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
found=$(git ls-files -z 'lib/*.c' | xargs -0 awk '
    FNR == 1 { depth = 0; inside = 0; name = "" }
    /^MYGPT_CLONES[[:space:]]/ && !inside { name = $0; sub(/\(.*/, "", name); sub(/.* /, "", name); start = FNR; wait = 1 }
    {
        if (wait && index($0, "{")) { wait = 0; inside = 1; depth = 0 }
        if (inside) {
            if ($0 ~ /^[[:space:]]*#pragma[[:space:]]+omp[[:space:]]+(parallel|for|task|sections)/)
                printf "%s:%d: %s (from line %d) holds an OpenMP region\n", FILENAME, FNR, name, start
            n = split($0, ch, "")
            for (i = 1; i <= n; i++) {
                if (ch[i] == "{") depth++
                else if (ch[i] == "}") { depth--; if (depth == 0) { inside = 0; break } }
            }
        }
    }')
count=$(git ls-files -z 'lib/*.c' | xargs -0 grep -c '^MYGPT_CLONES[[:space:]]' | awk -F: '{s += $2} END {print s}')
if [ -n "$found" ]; then
    echo "$found"
    echo "(call the clone from a region outside it, on each thread's run: mygpt_thread_run, lib/base/parallel.h)"
    exit 1
fi
echo "none of the $count functions built per instruction set holds an OpenMP region"
