#!/usr/bin/env bash
# chapters.sh - the README's main command: installs what is missing, builds, then
# runs every chapter program of chapters/index.tsv in index order and compares its
# output with chapters/expected/. One line per chapter (number, name, result), a
# unified diff for any mismatch, and a final count. Exit 0 only if none failed.
[ -n "${BASH_VERSION-}" ] || { echo "${0}: run it with bash (bash $0), not sh" >&2; exit 2; }
set -euo pipefail
case ${1-} in
'') ;;
-h | --help)
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
    echo "One chapter on its own: build/chapters/NAME (NAME --help for its flags)."
    exit 0 ;;
*)
    echo "chapters.sh: $1: it takes no arguments (one chapter on its own: build/chapters/NAME)" >&2
    exit 2 ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

export MYGPT_FIGURES="$MYGPT_BUILD/figures"   # where chapters write their SVG figures
mkdir -p "$MYGPT_FIGURES"
# the chapters whose log is shown as it comes: they train for minutes
streamed=" 38_book_training 40_book_train_model "
# fidelity exact-smoke: the full run trains for an hour or more and is the learner's to run
# (its float32 log parts from PyTorch's in the last digits, as two PyTorch versions' do:
# chapters/ERRATA.md); the same code's --smoke run is checked against PyTorch's log
total=$(grep -c -v -e '^number' -e '^$' "$MYGPT_ROOT/chapters/index.tsv")
echo "chapters: running the $total chapter programs of chapters/index.tsv, each output checked against"
echo "  chapters/expected/. Most take seconds; 38 trains the book's 162M-parameter model for"
echo "  5 to 15 minutes on 2 cores (the CPU decides), 40 a block of it (their logs and the time left"
echo "  shown as they come)."
echo "  The tool is already built: try build/cli/mygpt --help while this runs."
passed=0 failed=0 skipped=0
all_started=$SECONDS
while IFS=$'\t' read -r number program document section expected fidelity functions; do
    [ "$number" = "number" ] && continue
    [ -z "$number" ] && continue
    started=$SECONDS
    args=() label=$program
    if [ "$fidelity" = exact-smoke ]; then
        args=(--smoke) label="$program --smoke"
    fi
    stream=0
    if [[ $streamed == *" $program "* ]]; then
        stream=1
        printf '%-4s %-42s %-18s running:\n' "$number" "$label" "$fidelity"
    else
        printf '%-4s %-42s %-18s ' "$number" "$label" "$fidelity"
    fi
    result=$(CHECK_CHAPTER_STREAM=$stream bash "$MYGPT_ROOT/scripts/check-chapter.sh" \
        "$MYGPT_BUILD/chapters/$program" "$MYGPT_ROOT/chapters/expected/$expected" "${args[@]}") && status=0 || status=$?
    case $status in
        0) verdict=pass; passed=$((passed + 1)) ;;
        77) verdict=skipped; skipped=$((skipped + 1)) ;;
        *) verdict=FAIL; failed=$((failed + 1)) ;;
    esac
    [ "$stream" = 1 ] && printf '%-4s %-42s %-18s ' "$number" "$label" "$fidelity"
    printf '%s (%d s)\n' "$verdict" $((SECONDS - started))
    [ -n "$result" ] && printf '%s\n' "$result"
done < "$MYGPT_ROOT/chapters/index.tsv"
echo "figures written to $MYGPT_FIGURES"
echo "chapters: $passed passed, $failed failed, $skipped skipped, in $(((SECONDS - all_started) / 60)) min $(((SECONDS - all_started) % 60)) s"
[ "$failed" -eq 0 ]
