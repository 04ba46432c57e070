#!/usr/bin/env bash
# test_lesson_scripts.sh ROOT - the lessons' checkers catch what they are for, on a small
# fake repository (two lessons, one source file): check_lesson_code.sh passes a page whose
# C is the source's part, fails naming the lesson and the marker when one character
# differs, when a marker is missing or unclosed, when a lesson quotes nothing and when a
# marked part is quoted nowhere, and --update rewrites only the blocks; check_lesson_chain.sh
# passes the chain in the README's order and fails on a skipped link, a wrong label and a
# lesson the README leaves out.
set -uo pipefail
root=$(cd "${1:?usage: test_lesson_scripts.sh ROOT}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }

# expect NAME STATUS PATTERN -- COMMAND...: COMMAND exits STATUS and prints a line matching PATTERN
expect() {
    local name=$1 want=$2 pattern=$3
    shift 4
    local out status
    out=$("$@" 2>&1)
    status=$?
    if [ "$status" -ne "$want" ]; then
        bad "$name: status $status, not $want: $out"
    elif ! grep -qE -- "$pattern" <<<"$out"; then
        bad "$name: no line like '$pattern' in: $out"
    else
        ok "$name"
    fi
}

# a fresh fake repository in $work/repo
fake() {
    rm -rf "$work/repo"
    mkdir -p "$work/repo/lib" "$work/repo/docs/lessons"
    cat >"$work/repo/lib/k.c" <<'EOF'
void f(float *o, const float *x, int n)
{
    // lesson: scale
    for (int i = 0; i < n; i++)
        o[i] = 2.0f * x[i]; // twice
    // end lesson: scale
}
EOF
    cat >"$work/repo/docs/lessons/README.md" <<'EOF'
# Lessons

- [01](01_a.md): first
- [02](02_b.md): second
EOF
    cat >"$work/repo/docs/lessons/01_a.md" <<'EOF'
# 01

[all lessons](README.md) · [02 →](02_b.md)

<!-- c: lib/k.c#scale -->
```c
for (int i = 0; i < n; i++)
    o[i] = 2.0f * x[i]; // twice
```
EOF
    cat >"$work/repo/docs/lessons/02_b.md" <<'EOF'
# 02

[← 01](01_a.md) · [all lessons](README.md)

Text before.

<!-- c: lib/k.c#scale -->
```c
for (int i = 0; i < n; i++)
    o[i] = 2.0f * x[i]; // twice
```

Text after.
EOF
}

code=("$root/tests/check_lesson_code.sh")
chain=("$root/tests/check_lesson_chain.sh")

fake
expect "the pages quote the source" 0 '^check_lesson_code: 2 lessons quote 2 parts' -- bash "${code[@]}" "$work/repo"
expect "the chain in the README's order" 0 '^check_lesson_chain: 2 lessons' -- bash "${chain[@]}" "$work/repo"

fake
sed -i 's/2\.0f \* x/3.0f * x/' "$work/repo/lib/k.c"
expect "a changed source line fails, naming lesson and marker" 1 '^01_a: lib/k.c#scale: the page.s C is not the source.s' \
    -- bash "${code[@]}" "$work/repo"
cp "$work/repo/docs/lessons/02_b.md" "$work/before.md"
expect "--update rewrites the pages" 0 'updated 02_b' -- bash "${code[@]}" --update "$work/repo"
if grep -q '3.0f \* x' "$work/repo/docs/lessons/02_b.md" &&
    diff <(grep -v '3.0f\|2.0f' "$work/before.md") <(grep -v '3.0f\|2.0f' "$work/repo/docs/lessons/02_b.md") >/dev/null; then
    ok "--update changes the block and nothing else"
else
    bad "--update changed more than the block, or not the block"
fi
expect "after --update the pages pass" 0 '^check_lesson_code: 2 lessons' -- bash "${code[@]}" "$work/repo"

# broken NAME STATUS PATTERN CHECKER EDIT: a fresh fake repository changed by the shell
# command EDIT (run in it), then CHECKER on it exits STATUS with a line like PATTERN
broken() {
    fake
    (cd "$work/repo" && eval "$5")
    expect "$1" "$2" "$3" -- bash "$4" "$work/repo"
}
l=docs/lessons
broken "an unclosed marker fails" 1 '^01_a: lib/k.c#scale: no "// end lesson: scale"' "${code[0]}" \
    "sed -i '/end lesson: scale/d' lib/k.c"
broken "a marker missing from the source fails" 1 '^02_b: lib/k.c#double: no marker' "${code[0]}" \
    "sed -i 's/#scale -->/#double -->/' $l/02_b.md"
broken "a lesson that quotes no C fails" 1 '^01_a: quotes no C' "${code[0]}" \
    "sed -i 5,9d $l/01_a.md" # the marker and its block
broken "a marked part no lesson quotes fails" 1 'lib/k.c: the part "stale" is marked but no lesson quotes it' \
    "${code[0]}" "printf '// lesson: stale\\nint g;\\n// end lesson: stale\\n' >>lib/k.c"
broken "an unclosed block fails" 1 '^02_b: lib/k.c#scale: the ```c block is not closed' "${code[0]}" \
    "sed -i 11d $l/02_b.md" # the closing fence
broken "a missing next link fails" 1 "^01_a: the navigation line is '\\[all lessons\\]\\(README.md\\)'" "${chain[0]}" \
    "sed -i 's/ · \\[02 →\\](02_b.md)\$//' $l/01_a.md"
broken "a wrong label fails" 1 '^01_a: the navigation line' "${chain[0]}" "sed -i 's/\\[02 →\\]/[2 →]/' $l/01_a.md"
broken "a lesson the README leaves out fails" 1 "^02_b: not in README.md's reading order" "${chain[0]}" \
    "sed -i '/02_b.md/d' $l/README.md"

[ "$fails" -eq 0 ] || { echo "test_lesson_scripts: $fails failed"; exit 1; }
echo "test_lesson_scripts: the lessons' checkers pass what is right and name what is wrong"
