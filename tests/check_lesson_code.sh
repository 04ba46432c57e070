#!/usr/bin/env bash
# check_lesson_code.sh [--update] ROOT - the C a lesson shows is the C that runs.
#
# In a source file, a part a lesson quotes sits between two comment lines:
#
#     // lesson: NAME
#     ...the lines the page shows...
#     // end lesson: NAME
#
# and in a lesson (docs/lessons/*.md) the quote is a ```c block right after the line
#
#     <!-- c: lib/kernels/posenc.c#alibi_bias -->
#
# (the path from ROOT, then the marker's NAME). The block's body must be the lines
# between the two markers, less the indentation they all share (a preprocessor line stays
# as it is). Every lesson but the README quotes at least one part, and every marked part
# is quoted by a lesson. With --update the pages are rewritten from the sources (the
# blocks only; nothing else on a page changes), so that an author who changed a quoted
# loop updates every page in one command. Markers are comments: no code moves.
#
# Prints "LESSON: NAME ..." for each lesson whose quote and source part, and exits 1;
# else a summary line.
set -uo pipefail
update=0
if [ "${1:-}" = --update ]; then
    update=1
    shift
fi
root=$(cd "${1:?usage: check_lesson_code.sh [--update] ROOT}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
complain() { echo "$*"; bad=1; }

# part FILE NAME: the lines between FILE's markers for NAME, dedented, on stdout; status 1
# (and a reason on stderr) when FILE has no such pair, or more than one
part() {
    awk -v name="$2" '
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        trim($0) == "// lesson: " name { if (open || seen) { dup = 1 } open = 1; seen = 1; next }
        trim($0) == "// end lesson: " name { if (!open) { stray = 1 } open = 0; closed = 1; next }
        open { line[++n] = $0 }
        END {
            if (!seen) { print "no marker \"// lesson: " name "\"" > "/dev/stderr"; exit 1 }
            if (dup) { print "the marker \"// lesson: " name "\" is there twice" > "/dev/stderr"; exit 1 }
            if (open || !closed || stray) { print "no \"// end lesson: " name "\" after its start" > "/dev/stderr"; exit 1 }
            if (n == 0) { print "nothing between the markers of " name > "/dev/stderr"; exit 1 }
            indent = -1
            for (i = 1; i <= n; i++) {
                if (line[i] ~ /^[ \t]*$/ || line[i] ~ /^#/) continue
                match(line[i], /^ */)
                if (indent < 0 || RLENGTH < indent) indent = RLENGTH
            }
            for (i = 1; i <= n; i++) print (line[i] ~ /^[ \t]*$/ ? "" : line[i] ~ /^#/ ? line[i] : substr(line[i], indent + 1))
        }' "$1"
}

quotes=0
lessons=0
for md in "$root"/docs/lessons/*.md; do
    lesson=$(basename "$md" .md)
    [ "$lesson" = README ] && continue
    lessons=$((lessons + 1))
    out=$work/$lesson.md
    n=0 state=text ref= body=
    while IFS= read -r line || [ -n "$line" ]; do
        case $state in
        text)
            printf '%s\n' "$line" >>"$out"
            if [[ $line =~ ^\<!--\ c:\ ([^#[:space:]]+)#([A-Za-z0-9_]+)\ --\>$ ]]; then
                file=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} ref=${BASH_REMATCH[1]}#${BASH_REMATCH[2]}
                n=$((n + 1))
                state=open
            fi
            ;;
        open)
            if [ "$line" = '```c' ]; then
                state=body body=
            else
                complain "$lesson: $ref: the marker is not followed by a \`\`\`c block"
                printf '%s\n' "$line" >>"$out"
                state=text
            fi
            ;;
        body)
            if [ "$line" != '```' ]; then
                body+=$line$'\n'
                continue
            fi
            state=text
            if [ ! -f "$root/$file" ]; then
                complain "$lesson: $ref: no file $file"
                printf '```c\n%s```\n' "$body" >>"$out"
                continue
            fi
            if ! src=$(part "$root/$file" "$name" 2>"$work/why"); then
                complain "$lesson: $ref: $(cat "$work/why")"
                printf '```c\n%s```\n' "$body" >>"$out"
                continue
            fi
            printf '```c\n%s\n```\n' "$src" >>"$out"
            quotes=$((quotes + 1))
            if [ "$body" != "$src"$'\n' ] && [ "$update" -eq 0 ]; then
                complain "$lesson: $ref: the page's C is not the source's (bash tests/check_lesson_code.sh --update . rewrites it):"
                diff <(printf '%s' "$body") <(printf '%s\n' "$src") | sed 's/^/    /'
            fi
            ;;
        esac
    done <"$md"
    [ "$state" = body ] && complain "$lesson: $ref: the \`\`\`c block is not closed"
    [ "$n" -eq 0 ] && complain "$lesson: quotes no C (a line <!-- c: FILE#NAME --> and a \`\`\`c block)"
    if [ "$update" -eq 1 ] && [ "$state" = text ] && ! cmp -s "$out" "$md"; then
        cat "$out" >"$md" && echo "check_lesson_code: updated $lesson"
    fi
done

# every part marked in the sources is quoted somewhere (a marker nothing reads is stale)
while IFS=: read -r file _ name; do
    name=${name#*lesson: }
    name=${name%%[[:space:]]*}
    grep -qxF "<!-- c: $file#$name -->" "$root"/docs/lessons/*.md ||
        complain "$file: the part \"$name\" is marked but no lesson quotes it"
done < <(cd "$root" && grep -rnE '^[[:space:]]*// lesson: [A-Za-z0-9_]+[[:space:]]*$' lib chapters/src trainer cli 2>/dev/null)

[ "$bad" -eq 0 ] || exit 1
echo "check_lesson_code: $lessons lessons quote $quotes parts of the C, each as the source has it"
