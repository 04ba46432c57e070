#!/usr/bin/env bash
# check_lesson_chain.sh ROOT - the lessons' ← and → links walk docs/lessons/README.md's
# reading order, none skipped: the order is that of the README's list items linking a
# lesson (its first link to each); every lesson (docs/lessons/*.md but the README) is in
# it; each lesson has one navigation line (the line with "[all lessons](README.md)")
# whose ← names the lesson before it and whose → names the one after it (the first has
# no ←, the last no →), each labelled with its number (or its name when it has none).
# Prints each break of the chain and exits 1; else a summary line.
set -uo pipefail
root=$(cd "${1:?usage: check_lesson_chain.sh ROOT}" && pwd)
dir=$root/docs/lessons
bad=0
complain() { echo "$*"; bad=1; }

mapfile -t order < <(grep -oE '^[[:space:]]*- \[[^]]*\]\([A-Za-z0-9_]+\.md\)' "$dir/README.md" |
    sed -E 's/.*\(([A-Za-z0-9_]+)\.md\)$/\1/' | awk '!seen[$0]++')
declare -A at=()
for i in "${!order[@]}"; do
    at[${order[$i]}]=$i
    [ -f "$dir/${order[$i]}.md" ] || complain "README.md: lists ${order[$i]}, which has no page"
done
for md in "$dir"/*.md; do
    name=$(basename "$md" .md)
    [ "$name" = README ] && continue
    [ -n "${at[$name]:-}" ] || complain "$name: not in README.md's reading order"
done

label() { [[ $1 =~ ^([0-9]+)_ ]] && echo "${BASH_REMATCH[1]}" || echo "$1"; }
last=$((${#order[@]} - 1))
for i in "${!order[@]}"; do
    name=${order[$i]}
    [ -f "$dir/$name.md" ] || continue
    mapfile -t nav < <(grep -F '[all lessons](README.md)' "$dir/$name.md")
    if [ "${#nav[@]}" -ne 1 ]; then
        complain "$name: ${#nav[@]} navigation lines (one line with [all lessons](README.md) wanted)"
        continue
    fi
    want='[all lessons](README.md)'
    [ "$i" -gt 0 ] && want="[← $(label "${order[$((i - 1))]}")](${order[$((i - 1))]}.md) · $want"
    [ "$i" -lt "$last" ] && want="$want · [$(label "${order[$((i + 1))]}") →](${order[$((i + 1))]}.md)"
    [ "${nav[0]}" = "$want" ] || complain "$name: the navigation line is '${nav[0]}', the reading order wants '$want'"
done

[ "$bad" -eq 0 ] || exit 1
echo "check_lesson_chain: ${#order[@]} lessons linked ← and → in README.md's order, from ${order[0]} to ${order[$last]}"
