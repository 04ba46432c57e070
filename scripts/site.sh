#!/usr/bin/env bash
# site.sh [OUT] - the lessons (docs/lessons/*.md) as a static site a browser opens from
# disk: one page per chapter, the index in reading order, each chapter's figure inline
# (the SVG its program wrote into the build's figures folder), the outputs as <pre>,
# previous / next links, readable on a phone. OUT defaults to build/site.
#
# The pages are made from the same Markdown the test suite checks (every output block is
# re-run by tests/check_examples.sh), and the figures from the build's own chapter runs:
# `bash scripts/chapters.sh` first (it writes build/figures). Needs cmark-gfm and, for the
# C the lessons quote (their ```c blocks, shown highlighted), highlight (Debian's
# packages, installed when missing); nothing is fetched.
#
# OUT is a new or empty folder, or a site this script made (it holds the marker file
# .mygpt-site); any other folder is refused (status 2), nothing written. Every figure is
# checked first (there, not empty, an SVG from its first tag to </svg>), the site is made
# in a temporary folder beside OUT and then put in its place whole: on any failure the
# old site stays as it was.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MYGPT_BUILD:-$root/build}
out=$(realpath -m -- "${1:-$build/site}")
marker=.mygpt-site

if [ -e "$out" ] || [ -L "$out" ]; then
    if [ ! -d "$out" ]; then
        echo "site: $out is not a folder: not replaced" >&2
        exit 2
    fi
    if ! entries=$(ls -A -- "$out"); then
        echo "site: $out cannot be read" >&2
        exit 1
    fi
    if [ -n "$entries" ] && [ ! -f "$out/$marker" ]; then
        echo "site: $out holds files this script did not make (no $marker): nothing written; give a new or empty folder" >&2
        exit 2
    fi
fi

# svg_ok FILE: a whole figure as lib/io/svg.c writes it: not empty, text without NUL
# bytes, from "<?xml" or "<svg" to "</svg>" (a run cut short, or a file zeroed, is not)
svg_ok() {
    local first last
    [ -s "$1" ] && tr -d '\000' <"$1" | cmp -s - "$1" || return 1
    first=$(head -c 64 "$1" | tr -d ' \t\r\n')
    last=$(tail -c 64 "$1" | tr -d ' \t\r\n')
    [[ $first == '<?xml'* || $first == '<svg'* ]] && [[ $last == *'</svg>' ]]
}

# Each chapter's figure (the SVG it saves with chapter_save_figure, when it saves one),
# found and checked before anything is written: where the chapters drew it,
# chapters.sh's folder or the test suite's
declare -A figures=()
for md in "$root"/docs/lessons/*.md; do
    name=$(basename "$md" .md)
    [ "$name" != README ] && [ -f "$root/chapters/src/$name.c" ] || continue
    svg=$(sed -n 's/.*chapter_save_figure([^"]*"\([^"]*\.svg\)").*/\1/p' "$root/chapters/src/$name.c" | head -1)
    [ -n "$svg" ] || continue
    found=
    for dir in ${MYGPT_FIGURES:+"$MYGPT_FIGURES"} "$build/figures" "$build/chapters"; do
        [ -e "$dir/$svg" ] && { found=$dir/$svg; break; }
    done
    if [ -z "$found" ]; then
        echo "site: no $svg in the build (run bash scripts/chapters.sh first)" >&2
        exit 1
    fi
    if ! svg_ok "$found"; then
        echo "site: $found is not a whole SVG figure (empty, cut short or not an SVG): run bash scripts/chapters.sh again" >&2
        exit 1
    fi
    figures[$name]=$found
done

for tool in cmark-gfm highlight; do
    command -v "$tool" >/dev/null 2>&1 && continue
    echo "site: installing Debian's $tool"
    bash "$root/scripts/apt.sh" install --no-install-recommends "$tool"
done

# the new site, beside OUT (the same folder, so that a rename puts it in place); links
# are made relative to OUT, where it will be
mkdir -p "$(dirname "$out")"
if ! stage=$(mktemp -d "$(dirname "$out")/.$(basename "$out").XXXXXX"); then
    echo "site: cannot make a folder beside $out" >&2
    exit 1
fi
trap 'rm -rf "$stage"' EXIT
chmod "$(printf '%o' $((0777 & ~0$(umask))))" "$stage" # mktemp's 0700: the mode mkdir gives
echo "made by scripts/site.sh: the next run replaces this folder whole" >"$stage/$marker"
cat >"$stage/style.css" <<'EOF'
h1 { font-size: 1.7rem; line-height: 1.25; }
body { font: 17px/1.55 system-ui, sans-serif; max-width: 46rem; margin: 0 auto; padding: 1rem; color: #1b1b1b; }
pre, code { font: 14px/1.4 ui-monospace, monospace; }
pre { background: #f5f5f2; padding: 0.7rem; overflow-x: auto; border-radius: 4px; }
code { background: #f5f5f2; padding: 0 0.15rem; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
td, th { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
figure { margin: 1rem 0; }
figure img { width: 100%; height: auto; border: 1px solid #ddd; }
nav { margin: 1rem 0; }
a { color: #0b57a5; }
.hl.kwa, .hl.kwc { color: #7a1f6b; font-weight: bold; }
.hl.kwb { color: #0b57a5; }
.hl.kwd { color: #1d4d1d; }
.hl.num { color: #9a5b00; }
.hl.str, .hl.esc { color: #a3231d; }
.hl.com, .hl.slc { color: #6b6b6b; font-style: italic; }
.hl.ppc, .hl.pps { color: #5c4a00; }
EOF

# Links as the site needs them: a lesson's to another lesson go to its page; the others
# (the chapter sources, the library, docs/) to the repository's files, from where the
# site is.
relink() {
    local html href target
    html=$(cat)
    while IFS= read -r href; do
        case $href in
        http:* | https:* | mailto:* | \#*) continue ;;
        esac
        if [[ $href =~ ^([A-Za-z0-9_]+)\.md(#.*)?$ ]]; then
            target=${BASH_REMATCH[1]}.html${BASH_REMATCH[2]}
            [ "${BASH_REMATCH[1]}" = README ] && target=index.html${BASH_REMATCH[2]}
        else
            target=$(realpath -m --relative-to="$out" "$root/docs/lessons/${href%%#*}")
            [[ $href == *#* ]] && target+="#${href#*#}"
        fi
        html=${html//href=\"$href\"/href=\"$target\"}
    done < <(grep -o 'href="[^"]*"' <<<"$html" | sed 's/^href="//; s/"$//' | sort -u)
    printf '%s\n' "$html"
}

# C as an editor shows it: each <pre><code class="language-c"> block of cmark-gfm's HTML
# (its text escaped) through highlight, whose spans of classes "hl kwa" (keywords),
# "hl num", "hl str", "hl com" ... style.css colours. Only spans are added: the text is
# the same (a block highlight fails on is shown plain, and the run says so).
highlight_c() {
    awk -v tmp="$stage/.block.c" '
        function unescape(s) {
            gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&amp;/, "\\&", s)
            return s
        }
        !inc && /^<pre><code class="language-c">/ {
            first = substr($0, length("<pre><code class=\"language-c\">") + 1)
            if (first ~ /<\/code><\/pre>$/) { print; next } # one line: left as it is
            inc = 1; n = 0; body[++n] = first; next
        }
        inc && /^<\/code><\/pre>$/ {
            inc = 0
            printf "" > tmp
            for (i = 1; i <= n; i++) print unescape(body[i]) > tmp
            close(tmp)
            cmd = "highlight --syntax=c --out-format=html --fragment --input=\"" tmp "\" 2>/dev/null"
            m = 0
            while ((cmd | getline line) > 0) out[++m] = line
            ok = close(cmd) == 0 && m == n
            if (!ok) print "site: highlight failed on a C block; it is shown plain" > "/dev/stderr"
            printf "<pre><code class=\"language-c%s\">", ok ? " hl" : ""
            for (i = 1; i <= n; i++) print ok ? out[i] : body[i]
            print "</code></pre>"
            next
        }
        inc { body[++n] = $0; next }
        { print }'
}

# page MARKDOWN TITLE FIGURE: the HTML of one page (links to .md become .html)
page() {
    local md=$1 title=$2 figure=$3
    printf '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    printf '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    printf '<title>%s</title>\n<link rel="stylesheet" href="style.css">\n</head>\n<body>\n' "$title"
    # (the checked-example markers are for the tests, not the reader)
    # the figure goes right after the output that "What it prints" shows (or at the end)
    grep -v '^<!-- checked\|^<!-- c: ' "$md" | cmark-gfm -e table -e autolink --unsafe | highlight_c | relink |
        awk -v fig="$figure" '
            function put() { if (fig != "" && !done) { printf "<figure id=\"figure\"><img src=\"%s\" alt=\"the figure the chapter draws: %s\"><figcaption>%s, as this build drew it</figcaption></figure>\n", fig, fig, fig; done = 1 } }
            { print }
            /<h2>What it prints<\/h2>/ { want = 1 }
            want && /<\/pre>/ { put(); want = 0 }
            END { put() }'
    printf '</body>\n</html>\n'
}

pages=0
for md in "$root"/docs/lessons/*.md; do
    name=$(basename "$md" .md)
    title=$(sed -n '1s/^# //p' "$md")
    figure=
    if [ -n "${figures[$name]:-}" ]; then
        figure=$(basename "${figures[$name]}")
        cp "${figures[$name]}" "$stage/$figure"
        # (copied, then checked again: a figure rewritten since the check is not published)
        svg_ok "$stage/$figure" || { echo "site: ${figures[$name]} changed while the site was made" >&2; exit 1; }
    fi
    target=$name.html
    [ "$name" = README ] && target=index.html
    page "$md" "${title:-mygpt lessons}" "$figure" >"$stage/$target"
    pages=$((pages + 1))
done
rm -f "$stage/.block.c" # highlight_c's scratch file

# the old site (if any) out of the way, the new one in its place, then the old one
# removed; should the second rename fail, the old site goes back
if [ -d "$out" ]; then
    old=$stage.old
    if ! mv -T -- "$out" "$old"; then
        echo "site: $out could not be moved aside: the old site is kept" >&2
        exit 1
    fi
    if ! mv -T -- "$stage" "$out"; then
        where=kept
        mv -T -- "$old" "$out" || where="in $old"
        echo "site: $out could not be replaced: the old site is $where" >&2
        exit 1
    fi
    rm -rf -- "$old"
else
    mv -T -- "$stage" "$out"
fi
echo "site: $pages pages in $out (open $out/index.html)"
