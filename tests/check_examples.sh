#!/usr/bin/env bash
# check_examples.sh ROOT BUILD - the console examples of the repository's Markdown cannot
# go stale: every ```console block right after a line `<!-- checked -->` is run, and what
# each command prints must be what the block shows.
#
#   <!-- checked -->            each line exactly as shown
#   <!-- checked: digits -->    numbers may differ by one unit in their last printed
#                               digit (the words around them exactly), as the chapters'
#                               ~DIGIT lines: for float text that other CPUs may round apart
#
# In a block, a line starting with "$ " is a command (a line ending in \ continues it);
# the lines after it, up to the next command, are its output. "..." stands for any text:
# a line that is only "..." for any number of lines, "..." inside a line for any part of
# it. The output compared is the command's stdout, then its stderr (where the tool puts
# its closing summary); the exit status is the last command's. A command shown without
# output must only succeed. Commands run in a scratch folder
# where build/ is BUILD and data/ the data folder (files they write stay there). A
# chapter run (with --flags at most) that check-chapter.sh matched earlier with the same
# program, expected output, flags and data (its stamp: runs of 20 s or more) is not run
# again: the block is held to that expected output, one unit of the last digit apart.
# Prints each mismatch with a diff and exits 1; else a summary line.
set -uo pipefail
root=${1:?usage: check_examples.sh ROOT BUILD}
build=${2:?usage: check_examples.sh ROOT BUILD}
build=$(cd "$build" && pwd)
root=$(cd "$root" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/run" "$work/blocks"
ln -s "$build" "$work/run/build"
ln -s "${MYGPT_DATA:-$root/data}" "$work/run/data"
for dir in chapters corpus; do ln -s "$root/$dir" "$work/run/$dir"; done
export MYGPT_DATA=${MYGPT_DATA:-$root/data} OMP_WAIT_POLICY=PASSIVE
source "$root/scripts/chapter-stamp.sh"

if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git -C "$root" ls-files --cached --others --exclude-standard '*.md')
else
    mapfile -t files < <(cd "$root" && find . -name '*.md' -not -path './build*' | sed 's|^\./||')
fi

# CHECK_EXAMPLES_ONLY=PATTERN checks only the Markdown files whose path matches it (grep -E)
if [ -n "${CHECK_EXAMPLES_ONLY:-}" ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -E -- "$CHECK_EXAMPLES_ONLY")
fi

# Each checked block's commands into $work/blocks/N.cmd, N.want, N.mode, N.where
n=0
for f in "${files[@]}"; do
    n=$(awk -v file="$f" -v out="$work/blocks" -v n="$n" '
        /^<!-- checked(: *digits)? -->[[:space:]]*$/ { mark = ($0 ~ /digits/) ? "digits" : "exact"; marked = NR; next }
        !inblock && /^```console/ && marked == NR - 1 { inblock = 1; mode = mark; cont = 0; next }
        !inblock { next }
        /^```/ { inblock = 0; next }
        cont { cont = $0 ~ /\\$/; print > cmd; next }
        /^\$ / {
            if (cmd) { close(cmd); close(want) }
            n++
            cmd = out "/" n ".cmd"; want = out "/" n ".want"
            printf "" > want
            print mode > (out "/" n ".mode"); close(out "/" n ".mode")
            print file ":" NR > (out "/" n ".where"); close(out "/" n ".where")
            cont = $0 ~ /\\$/
            print substr($0, 3) > cmd
            next
        }
        { print > want }
        END { print n }' "$root/$f")
done

# one line of output against one shown line
match_lines() { # want-file got-file mode -> exit 0 if they match
    awk -v gotfile="$2" -v mode="$3" -f "$root/scripts/digits.awk" -f <(cat <<'PROGRAM'
        # a shown line with "..." inside: its pieces in order, the first at the start,
        # the last at the end
        function glob(w, g,    k, parts, i, pos, p) {
            k = split(w, parts, /\.\.\./)
            if (substr(g, 1, length(parts[1])) != parts[1]) return 0
            pos = length(parts[1]) + 1
            for (i = 2; i < k; i++) {
                p = index(substr(g, pos), parts[i])
                if (!p) return 0
                pos += p - 1 + length(parts[i])
            }
            return length(g) - pos + 1 >= length(parts[k]) && substr(g, length(g) - length(parts[k]) + 1) == parts[k]
        }
        function same(w, g) {
            if (index(w, "...")) return glob(w, g)
            return mode == "digits" ? within_digit(w, g) : w == g
        }
        { W[++nw] = $0 }
        END {
            while ((getline line < gotfile) > 0) G[++ng] = line
            # ok[i, j]: shown lines i.. match output lines j.. ("..." alone: any run)
            ok[nw + 1, ng + 1] = 1
            for (j = 1; j <= ng; j++) ok[nw + 1, j] = 0
            for (i = nw; i >= 1; i--)
                for (j = ng + 1; j >= 1; j--) {
                    if (W[i] == "...") ok[i, j] = ok[i + 1, j] || (j <= ng && ok[i, j + 1])
                    else ok[i, j] = j <= ng && same(W[i], G[j]) && ok[i + 1, j + 1]
                }
            exit ok[1, 1] ? 0 : 1
        }
PROGRAM
) "$1"
}

bad=0
for ((i = 1; i <= n; i++)); do
    where=$(cat "$work/blocks/$i.where")
    if [ "${CHECK_EXAMPLES_NO_MPI:-0}" = 1 ] && grep -q mpirun "$work/blocks/$i.cmd"; then
        echo "check_examples: $where: not run (this build has no MPI)"
        continue
    fi
    # A chapter's run (with its --flags) that check-chapter.sh matched earlier with this
    # very program, expected output, arguments and data (its stamp, left by runs of 20 s
    # or more): the block is held to the expected output instead of running it once more
    cmdline=$(cat "$work/blocks/$i.cmd")
    if [[ $cmdline != *$'\n'* && $cmdline =~ ^build/chapters/([0-9A-Za-z_]+)((\ +--[a-z0-9-]+)*)\ *(#.*)?$ ]] &&
        [ "${CHECK_CHAPTER_RERUN:-0}" != 1 ]; then
        program=${BASH_REMATCH[1]}
        read -r -a args <<<"${BASH_REMATCH[2]}"
        stamp=$(chapter_stamp_path "$build/chapters/$program" "${args[@]}")
        expected=$(sed -n 2p "$stamp" 2>/dev/null)
        if [ -f "$expected" ] && [ "$(head -1 "$stamp")" = "$(chapter_stamp_key "$build/chapters/$program" "$expected" "${args[@]}")" ]; then
            sed -E 's/^~(DIGIT|MAX=[^ ]+) //' "$expected" >"$work/got"
            if ! match_lines "$work/blocks/$i.want" "$work/got" digits; then
                echo "check_examples: $where does not show what $program was verified to print (- shown, + verified):"
                diff -u "$work/blocks/$i.want" "$work/got" | tail -n +3 | head -40 | sed 's/^/  /'
                bad=1
            fi
            continue
        fi
    fi
    # what the command prints: its stdout, then its stderr (a tool's closing summary)
    started=$SECONDS
    if ! (cd "$work/run" && bash -c "$(cat "$work/blocks/$i.cmd")") >"$work/got" 2>"$work/err" </dev/null; then
        echo "check_examples: $where: the command failed:"
        sed 's/^/  /' "$work/blocks/$i.cmd" "$work/got" "$work/err" | head -20
        bad=1
        continue
    fi
    [ $((SECONDS - started)) -lt 10 ] || echo "check_examples: $where took $((SECONDS - started)) s"
    [ -s "$work/blocks/$i.want" ] || continue # shown without output: it must only succeed
    cat "$work/err" >>"$work/got"
    if ! match_lines "$work/blocks/$i.want" "$work/got" "$(cat "$work/blocks/$i.mode")"; then
        echo "check_examples: $where prints something else now (- shown, + printed):"
        diff -u "$work/blocks/$i.want" "$work/got" | tail -n +3 | head -40 | sed 's/^/  /'
        bad=1
    fi
done
[ "$n" -gt 0 ] || { echo "check_examples: no checked example found" >&2; exit 1; }
[ "$bad" -eq 0 ] || exit 1
echo "check_examples: $n commands in the Markdown's checked examples print what they show"
