#!/usr/bin/env bash
# test.sh - the README's test command: installs what is missing, builds, runs the
# whole test suite (meson test), and ends with the line "N passed, N failed".
# Counts are Criterion tests (plus one per chapter check); a suite that dies before
# Criterion reports counts as one failure; tests that cannot run here (the GPT-2
# vocabulary could not be fetched) count as skipped, never as passed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

status=0
meson test -C "$MYGPT_BUILD" --no-rebuild --print-errorlogs "$@" || status=$?

log="$MYGPT_BUILD/meson-logs/testlog.json"
passed=0
failed=0
skipped=0
synth_re='Synthesis: Tested: ([0-9]+) \| Passing: ([0-9]+) \| Failing: ([0-9]+) \| Crashing: ([0-9]+)'
while IFS= read -r line; do
    [[ $line =~ \"name\":\ \"([^\"]*)\" ]] && name=${BASH_REMATCH[1]} || name='?'
    [[ $line =~ \"result\":\ \"([^\"]*)\" ]] && result=${BASH_REMATCH[1]} || result='?'
    without_skips=${line//\[SKIP\] /}           # count "[SKIP] " (7 characters) in pure bash
    skipped=$((skipped + (${#line} - ${#without_skips}) / 7))
    if [[ $line =~ $synth_re ]]; then
        p=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]} c=${BASH_REMATCH[4]}
        passed=$((passed + p))
        failed=$((failed + f + c))
        # a suite that failed although Criterion counted no failure (e.g. a leak check)
        if [ "$result" != "OK" ] && [ $((f + c)) -eq 0 ]; then failed=$((failed + 1)); fi
    elif [ "$result" = "OK" ]; then
        passed=$((passed + 1))
    elif [ "$result" = "SKIP" ]; then
        skipped=$((skipped + 1))
    else
        echo "test.sh: suite '$name' ended with $result before reporting" >&2
        failed=$((failed + 1))
    fi
done < "$log"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
