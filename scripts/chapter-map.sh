#!/usr/bin/env bash
# chapter-map.sh [ROOT] - prints the reader's map of the chapters (markdown) from
# chapters/documents.tsv (the documents) and chapters/index.tsv (one row per
# chapter, its last column the library functions it calls). chapters/README.md holds
# this output between its "map" markers; tests/check_chapter_map.sh regenerates it and
# fails on any difference, so the map cannot drift from the index.
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
docs=$root/chapters/documents.tsv index=$root/chapters/index.tsv
echo "| document | title | about | chapters |"
echo "|---|---|---|---|"
awk -F'\t' 'NR == FNR { if (FNR > 1) { n[$3] = n[$3] (n[$3] ? ", " : "") $1 } ; next }
            FNR > 1 { printf "| `%s` | %s | %s | %s |\n", $1, $2, $3, n[$1] }' "$index" "$docs"
echo
echo "Per chapter, in reading order: what it shows (and where in its document), the"
echo "library functions it calls, and how to run it on its own (\`--seed N\` where what it"
echo "prints depends on the random numbers it draws; every program has \`--help\`)."
echo
prev=
while IFS=$'\t' read -r number program document section expected fidelity functions; do
    [ "$number" = number ] && continue
    if [ "$document" != "$prev" ]; then
        [ -n "$prev" ] && echo
        echo "**\`${document%%_*}\`**"
        echo
        prev=$document
    fi
    run="build/chapters/$program"
    # --seed 7 where another seed prints other numbers (CH_SEED_UNSEEN: every seed prints the same)
    grep -q CH_SEED "$root/chapters/src/$program.c" && ! grep -q CH_SEED_UNSEEN "$root/chapters/src/$program.c" &&
        run="$run --seed 7"
    fl=$(for f in $functions; do printf '`%s`, ' "$f"; done)
    echo "- **$number** \`$program\` ($fidelity): $section. Calls ${fl%, }. Run: \`$run\`"
done < "$index"
