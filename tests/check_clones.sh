#!/usr/bin/env bash
# check_clones.sh SOURCE_ROOT - no function built per instruction set (MYGPT_CLONES,
# lib/base/simd.h), nor a helper inlined into them (MYGPT_IN_CLONES), holds an OpenMP
# region: clang compiles a region's body as a function of its own, without the clone's
# instruction set, so its fmaf are libm calls and its loops scalar (the same bits,
# several times slower). The region goes outside the clone and calls it on each thread's
# run. Skips (77) outside a git checkout.
set -uo pipefail
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
mapfile -t files < <(git ls-files 'lib/*.c' 'lib/*.h')
[ "${#files[@]}" -gt 0 ] || { echo "no sources under lib/"; exit 1; }
# a definition starts at a line opening with [static] MYGPT_CLONES or static MYGPT_IN_CLONES
# (a prototype, ending in ';' before any '{', is not one); its body ends where its braces
# balance
report=$(awk '
    FNR == 1 { depth = 0; inside = 0; wait = 0 }
    !inside && /^(static[[:space:]]+)?MYGPT_CLONES[[:space:]]|^static[[:space:]]+MYGPT_IN_CLONES[[:space:]]/ {
        name = $0; sub(/\(.*/, "", name); sub(/.*[[:space:]]/, "", name); start = FNR; wait = 1; defs++
    }
    {
        if (wait) {
            b = index($0, "{"); s = index($0, ";")
            if (s && (!b || s < b)) { wait = 0; defs-- } # a prototype
            else if (b) { wait = 0; inside = 1; depth = 0 }
        }
        if (inside) {
            if ($0 ~ /^[[:space:]]*#[[:space:]]*pragma[[:space:]]+omp[[:space:]]+(parallel|for|task|sections)/ ||
                $0 ~ /_Pragma[[:space:]]*\([[:space:]]*"omp[[:space:]]+(parallel|for|task|sections)/)
                printf "%s:%d: %s (from line %d) holds an OpenMP region\n", FILENAME, FNR, name, start
            n = split($0, ch, "")
            for (i = 1; i <= n; i++) {
                if (ch[i] == "{") depth++
                else if (ch[i] == "}") { depth--; if (depth == 0) { inside = 0; break } }
            }
        }
    }
    END { print "defs " defs + 0 }' "${files[@]}") || { echo "check_clones: awk failed"; exit 1; }
defs=$(sed -n 's/^defs //p' <<<"$report")
found=$(grep -v '^defs ' <<<"$report")
if [ -n "$found" ]; then
    echo "$found"
    echo "(call the clone from a region outside it, on each thread's run: mygpt_thread_run, lib/base/parallel.h)"
    exit 1
fi
[ "${defs:-0}" -gt 0 ] || { echo "check_clones: no function built per instruction set (a renamed macro?)"; exit 1; }
echo "none of the $defs functions built per instruction set (or inlined into them) holds an OpenMP region"
