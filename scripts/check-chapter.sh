#!/usr/bin/env bash
# check-chapter.sh PROGRAM EXPECTED [ARGS...] - runs one chapter program and compares
# its stdout with the expected file, line by line. Two kinds of line are compared by
# their numbers (the words around the numbers must match exactly):
#   "~DIGIT <text>"  each number may differ from the expected one by one unit in the
#                    expected number's last printed digit (142.1164: 0.0001;
#                    1.7314e+03: 0.1; integers must be equal): float32
#                    summation order, nothing more;
#   "~MAX=B <text>"  each number's absolute value is at most B: a line whose digits no
#                    two runs share but whose size matters (a time per step).
# Every other line is compared byte for byte.
# Exit: 0 match, 1 mismatch (a unified diff is printed), 77 skipped (the program
# exited 77 because its input data is absent; its stderr says why; under CI=true that
# is a failure).
# CHECK_CHAPTER_STREAM=1 shows the program's output (|) and progress (!) on stderr as
# they come, besides checking them: a long chapter then talks while it runs.
# A run of 20 seconds or more that matched (with no arguments but --flags) leaves a
# stamp beside the program (.verified/PROGRAM[FLAGS]: the sha256 of the program, the
# expected file, the flags and the data files: scripts/chapter-stamp.sh); the same check
# with all of them unchanged is then not run again, so the two README commands train the
# book's model once per build (and tests/check_examples.sh holds a lesson's example of
# that run to the expected file). CHECK_CHAPTER_RERUN=1 runs it anyway.
set -uo pipefail
prog=$1 expected=$2
shift 2
[ -x "$prog" ] || { echo "check-chapter: $prog was not built" >&2; exit 1; }
[ -f "$expected" ] || { echo "check-chapter: no expected output $expected" >&2; exit 1; }
# what a run's result depends on: the program, the expected output, the arguments, the data
source "$(dirname "${BASH_SOURCE[0]}")/chapter-stamp.sh"
key=$(chapter_stamp_key "$prog" "$expected" "$@")
stamp=$(chapter_stamp_path "$prog" "$@")
if [ "${CHECK_CHAPTER_RERUN:-0}" != 1 ] && chapter_stamp_args "$@" && [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$key" ]; then
    echo "  matched earlier with this same program, expected output, arguments and data (CHECK_CHAPTER_RERUN=1 runs it again)"
    exit 0
fi
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
started=$SECONDS
stream=${CHECK_CHAPTER_STREAM:-0}
# the live view needs GNU's stdbuf, tail --pid and sed -u (macOS without Homebrew's
# coreutils and gnu-sed first in PATH has none): without them the chapter runs unseen
if [ "$stream" = 1 ] && ! { command -v stdbuf >/dev/null && tail --pid=$$ -n 0 /dev/null >/dev/null 2>&1 &&
    echo | sed -u p >/dev/null 2>&1; }; then
    stream=0
fi
if [ "$stream" = 1 ]; then
    # line-buffered into the files, each followed as it grows
    stdbuf -oL -eL "$prog" "$@" >"$out" 2>"$err" </dev/null &
    pid=$!
    tail -n +1 -s 0.5 -f --pid=$pid "$out" | sed -u 's/^/     | /' >&2 &
    tail -n +1 -s 0.5 -f --pid=$pid "$err" | sed -u 's/^/     ! /' >&2 &
    wait $pid
    status=$?
    wait
else
    "$prog" "$@" >"$out" 2>"$err" </dev/null # a program must not read the caller's stdin
    status=$?
fi
if [ $status -eq 77 ]; then
    if [ "${CI:-}" = true ]; then # under CI missing data is a failure, never a skip
        sed 's/^/  missing data under CI=true: /' "$err"
        exit 1
    fi
    sed 's/^/  skipped: /' "$err"
    exit 77
fi
if [ $status -ne 0 ]; then
    echo "  exit status $status; stderr:"
    sed 's/^/    /' "$err"
    exit 1
fi
# the float comparison (abs, unit, numbers) is scripts/digits.awk's, the chapters' and
# the Markdown examples' alike
if awk -v gotfile="$out" -f "$(dirname "${BASH_SOURCE[0]}")/digits.awk" -f <(cat <<'PROGRAM'
    BEGIN { ok = 1 }
    {
        want = $0
        if ((getline got < gotfile) <= 0) { ok = 0; exit }
        mode = ""
        if (substr(want, 1, 7) == "~DIGIT ") { mode = "digit"; want = substr(want, 8) }
        else if (substr(want, 1, 5) == "~MAX=") {
            mode = "max"
            split(want, head, " ")
            bound = substr(head[1], 6) + 0
            want = substr(want, length(head[1]) + 2)
        }
        if (mode == "") { if (want != got) { ok = 0; exit } ; next }
        delete ws; delete gs
        if (numbers(want, ws) != numbers(got, gs) || ws[0] != gs[0]) { ok = 0; exit }
        for (i = 1; i <= ws[0]; i++) {
            if (mode == "digit" && ws[i] !~ /[.eE]/ && ws[i] != gs[i]) { ok = 0; exit } # integers: equal
            if (mode == "digit" && abs(ws[i] - gs[i]) > unit(ws[i]) * (1 + 1e-9)) { ok = 0; exit }
            if (mode == "max" && abs(gs[i] + 0) > bound) { ok = 0; exit }
        }
    }
    END { if (ok && (getline extra < gotfile) > 0) ok = 0; exit ok ? 0 : 1 }
PROGRAM
) "$expected"; then
    if [ $((SECONDS - started)) -ge 20 ] && chapter_stamp_args "$@"; then
        mkdir -p "$(dirname "$stamp")" && printf '%s\n%s\n' "$key" "$(cd "$(dirname "$expected")" && pwd)/$(basename "$expected")" >"$stamp"
    fi
    exit 0
fi
diff -u --label "expected: ${expected##*/}" --label "got: ${prog##*/}" <(sed -E 's/^~(DIGIT|MAX=[^ ]+) //' "$expected") "$out" | sed 's/^/  /'
exit 1
