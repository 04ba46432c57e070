#!/usr/bin/env bash
# check_chapter_map.sh ROOT - the reader's map in chapters/README.md is what
# scripts/chapter-map.sh makes of chapters/index.tsv and chapters/documents.tsv (so a
# chapter missing from it, or an old line, fails), every chapter names the library
# functions it calls, each of them is one the library exports (lib/exports.txt), and
# each is called in the chapter's source or in a helper it includes; and every chapter
# has a lesson in docs/lessons/ that the lessons' index lists.
set -uo pipefail
root=$1
fail=0
readme=$root/chapters/README.md
begin='<!-- map: made by scripts/chapter-map.sh from index.tsv and documents.tsv; do not edit -->'
end='<!-- end of map -->'
got=$(awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$readme")
want=$(bash "$root/scripts/chapter-map.sh" "$root")
if [ "$got" != "$want" ]; then
    echo "chapters/README.md's map differs from scripts/chapter-map.sh's (< README, > generated):"
    diff <(echo "$got") <(echo "$want") | head -20
    fail=1
fi
# every chapter has its lesson, and the lessons' index links it
lessons=$root/docs/lessons
while IFS=$'\t' read -r number program rest; do
    [ "$number" = number ] || [ -z "$number" ] && continue
    [ -f "$lessons/$program.md" ] || { echo "$program: no lesson docs/lessons/$program.md"; fail=1; }
    grep -q "]($program.md)" "$lessons/README.md" 2>/dev/null ||
        { echo "$program: not listed in docs/lessons/README.md"; fail=1; }
done < "$root/chapters/index.tsv"
chapters=0
while IFS=$'\t' read -r number program document section expected fidelity functions; do
    [ "$number" = number ] && continue
    chapters=$((chapters + 1))
    if [ -z "${functions// /}" ]; then
        echo "$program: no library functions listed in index.tsv"; fail=1; continue
    fi
    src=$root/chapters/src/$program.c
    # the chapter's source and the helpers whose headers it includes (chapters/src and
    # trainer/), and theirs
    sources=("$src")
    for ((i = 0; i < ${#sources[@]}; i++)); do
        for h in $(grep -o '#include "[a-z0-9_]*\.h"' "${sources[$i]}" | sed 's/#include "\(.*\)\.h"/\1/'); do
            for dir in "$root/chapters/src" "$root/trainer"; do
                c=$dir/$h.c
                if [ -f "$c" ] && [[ " ${sources[*]} " != *" $c "* ]]; then sources+=("$c"); fi
            done
        done
    done
    for f in $functions; do
        if ! grep -qx "$f" "$root/lib/exports.txt"; then
            echo "$program: $f is not a function of the library (lib/exports.txt)"; fail=1
        elif ! grep -qw "$f" "${sources[@]}"; then
            echo "$program: $f is listed but not called in ${src##*/} or its helpers"; fail=1
        fi
    done
done < "$root/chapters/index.tsv"
[ $fail -eq 0 ] && echo "the map lists all $chapters chapters; every function named exists and is called"
exit $fail
