#!/usr/bin/env bash
# chapters.sh - the README's main command: installs what is missing, builds, then
# runs every chapter program of chapters/index.tsv in index order and compares its
# output with chapters/expected/. One line per chapter (number, name, result), a
# unified diff for any mismatch, and a final count. Exit 0 only if none failed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

export MYGPT_FIGURES="$MYGPT_BUILD/figures"   # where chapters write their SVG figures
mkdir -p "$MYGPT_FIGURES"
passed=0 failed=0 skipped=0
while IFS=$'\t' read -r number program document section expected fidelity functions; do
    [ "$number" = "number" ] && continue
    [ -z "$number" ] && continue
    result=$(bash "$MYGPT_ROOT/scripts/check-chapter.sh" "$MYGPT_BUILD/chapters/$program" \
        "$MYGPT_ROOT/chapters/expected/$expected" 2>&1) && status=0 || status=$?
    case $status in
        0) verdict=pass; passed=$((passed + 1)) ;;
        77) verdict=skipped; skipped=$((skipped + 1)) ;;
        *) verdict=FAIL; failed=$((failed + 1)) ;;
    esac
    printf '%-4s %-42s %-18s %s\n' "$number" "$program" "$fidelity" "$verdict"
    [ -n "$result" ] && printf '%s\n' "$result"
done < "$MYGPT_ROOT/chapters/index.tsv"
echo "figures written to $MYGPT_FIGURES"
echo "chapters: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
