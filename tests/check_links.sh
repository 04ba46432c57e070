#!/usr/bin/env bash
# check_links.sh ROOT - every relative link in every Markdown file of the repository
# resolves: for each *.md file git tracks under ROOT (every *.md outside build*/ and
# .git/ when ROOT is not a git checkout), each link [text](target), image ![alt](target)
# and reference definition [label]: target must name a file or folder that exists,
# relative to the Markdown file (a target starting with / is relative to ROOT). A
# #fragment or ?query is dropped first. Not checked: URLs (http:, https:, mailto: and
# any other scheme), bare #anchors, and anything inside code spans or fenced code
# blocks. Prints "FILE: target" for each broken link and exits 1; otherwise prints how
# many links resolve and exits 0.
set -uo pipefail

ROOT=${1:?usage: check_links.sh ROOT}
cd "$ROOT" || { echo "check_links: cannot enter $ROOT" >&2; exit 2; }

files=()
if git rev-parse --git-dir >/dev/null 2>&1; then
    while IFS= read -r -d '' f; do
        case $f in build*/*) continue ;; esac
        [ -f "$f" ] && files+=("$f")   # a file deleted in the work tree is not checked
    done < <(git ls-files -z --cached --others --exclude-standard -- '*.md')
else
    while IFS= read -r -d '' f; do
        files+=("${f#./}")
    done < <(find . \( -name '.git' -o -path './build*' \) -prune -o -type f -name '*.md' -print0 | sort -z)
fi

# The text of a Markdown file without its fenced code blocks (``` or ~~~, up to three
# spaces of indent, closed by a fence of the same character at least as long) and
# without its code spans.
prose() {
    local line fence='' marker
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ $line =~ ^\ {0,3}(\`{3,}|~{3,}) ]]; then
            marker=${BASH_REMATCH[1]}
            if [ -z "$fence" ]; then
                fence=$marker
                continue
            elif [ "${marker:0:1}" = "${fence:0:1}" ] && [ ${#marker} -ge ${#fence} ] &&
                [[ $line =~ ^\ {0,3}[\`~]+[[:space:]]*$ ]]; then
                fence=''
                continue
            fi
        fi
        [ -n "$fence" ] && continue
        printf '%s\n' "$line"
    done <"$1" | sed -E 's/``[^`]+``//g; s/`[^`]*`//g'
}

# The targets of one file's links, one a line, as written between the parentheses (or
# after a reference label).
targets() {
    local text
    text=$(prose "$1")
    # inline links and images: "](...)"; the text before may wrap onto earlier lines
    grep -oE '\]\([^)]*\)' <<<"$text" | sed -E 's/^\]\((.*)\)$/\1/'
    # reference definitions: [label]: target
    grep -oE '^ {0,3}\[[^]]+\]:[[:space:]]*[^[:space:]]+' <<<"$text" |
        sed -E 's/^ {0,3}\[[^]]+\]:[[:space:]]*//'
}

# The path a raw target names: <...> unwrapped, a "title" dropped, %20 decoded, the
# #fragment and ?query dropped. Empty for a target that is not a relative path.
TITLED='^([^[:space:]]+)[[:space:]]+("[^"]*"|'"'"'[^'"'"']*'"'"'|\([^)]*\))$'
path_of() {
    local t=$1
    t=${t#"${t%%[![:space:]]*}"}       # leading and trailing blanks
    t=${t%"${t##*[![:space:]]}"}
    if [[ $t =~ ^\<([^>]*)\> ]]; then
        t=${BASH_REMATCH[1]}
    elif [[ $t =~ $TITLED ]]; then
        t=${BASH_REMATCH[1]}
    fi
    [ -z "$t" ] && return
    [[ $t =~ ^[A-Za-z][A-Za-z0-9+.-]*: ]] && return   # http:, https:, mailto:, ...
    [[ $t == \#* ]] && return                           # an anchor in this file
    t=${t%%#*}
    t=${t%%\?*}
    t=${t//%20/ }
    printf '%s' "$t"
}

nlinks=0
nbroken=0
for f in "${files[@]}"; do
    dir=$(dirname "$f")
    while IFS= read -r raw; do
        p=$(path_of "$raw")
        [ -z "$p" ] && continue
        nlinks=$((nlinks + 1))
        if [[ $p == /* ]]; then
            full=.$p
        else
            full=$dir/$p
        fi
        if [ ! -e "$full" ]; then
            echo "$f: $raw"
            nbroken=$((nbroken + 1))
        fi
    done < <(targets "$f")
done

if [ "$nbroken" -gt 0 ]; then
    echo "check_links: $nbroken of $nlinks links in ${#files[@]} files do not resolve"
    exit 1
fi
echo "check_links: $nlinks links in ${#files[@]} files resolve"
