#!/usr/bin/env bash
# check-chapter.sh PROGRAM EXPECTED [ARGS...] - runs one chapter program and compares
# its stdout with the expected file. Lines of EXPECTED that begin with "~TOL=R "
# are compared numerically: every number on the line may differ from the expected
# one by a relative R (|got - want| <= R * max(1, |want|)); the rest byte for byte.
# Exit: 0 match, 1 mismatch (a unified diff is printed), 77 skipped (the program
# exited 77 because its input data is absent; its stderr says why).
set -uo pipefail
prog=$1 expected=$2
shift 2
[ -x "$prog" ] || { echo "check-chapter: $prog was not built" >&2; exit 1; }
[ -f "$expected" ] || { echo "check-chapter: no expected output $expected" >&2; exit 1; }
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$prog" "$@" >"$out" 2>"$err"
status=$?
if [ $status -eq 77 ]; then
    sed 's/^/  skipped: /' "$err"
    exit 77
fi
if [ $status -ne 0 ]; then
    echo "  exit status $status; stderr:"
    sed 's/^/    /' "$err"
    exit 1
fi
if awk -v gotfile="$out" '
    function abs(x) { return x < 0 ? -x : x }
    BEGIN { ok = 1 }
    {
        want = $0
        if ((getline got < gotfile) <= 0) { ok = 0; exit }
        if (substr(want, 1, 5) == "~TOL=") {
            split(want, head, " ")
            tol = substr(head[1], 6) + 0
            want = substr(want, length(head[1]) + 2)
            nw = split(want, ws, /[^-+0-9.eE]+/)
            ng = split(got, gs, /[^-+0-9.eE]+/)
            if (nw != ng) { ok = 0; exit }
            for (i = 1; i <= nw; i++) {
                if (ws[i] == gs[i]) continue
                if (ws[i] !~ /[0-9]/ || gs[i] !~ /[0-9]/) { ok = 0; exit }
                scale = abs(ws[i] + 0) > 1 ? abs(ws[i] + 0) : 1
                if (abs(ws[i] - gs[i]) > tol * scale) { ok = 0; exit }
            }
            # the words around the numbers must match exactly
            w2 = want; g2 = got
            gsub(/[-+0-9.eE]+/, "#", w2); gsub(/[-+0-9.eE]+/, "#", g2)
            if (w2 != g2) { ok = 0; exit }
        } else if (want != got) { ok = 0; exit }
    }
    END { if (ok && (getline extra < gotfile) > 0) ok = 0; exit ok ? 0 : 1 }
' "$expected"; then
    exit 0
fi
diff -u --label "expected: ${expected##*/}" --label "got: ${prog##*/}" <(sed -E 's/^~TOL=[^ ]+ //' "$expected") "$out" | sed 's/^/  /'
exit 1
