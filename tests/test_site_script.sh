#!/usr/bin/env bash
# test_site_script.sh ROOT - scripts/site.sh writes only a site of its own, and whole, on
# a fake build whose figures are small SVGs: a folder of someone's own files, or a file,
# is refused with one line and status 2, untouched; a figure empty, cut short or missing
# fails with one line, and the site already there stays byte for byte, nothing left beside it; a site it made (its marker) is replaced
# whole, a stale page gone.
set -uo pipefail
root=$(cd "${1:?usage: test_site_script.sh ROOT}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
complain() { echo "test_site_script: $*"; bad=1; }

# the figures the chapters save (as site.sh finds them), small and whole
figs=$work/figures
mkdir -p "$figs" "$work/build"
svgs=$(sed -n 's/.*chapter_save_figure([^"]*"\([^"]*\.svg\)").*/\1/p' "$root"/chapters/src/*.c | sort -u)
[ -n "$svgs" ] || { complain "no chapter saves a figure: the test has nothing to check"; exit 1; }
for svg in $svgs; do
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="4" height="4"/></svg>\n' >"$figs/$svg"
done
first=$(head -1 <<<"$svgs")
cp "$figs/$first" "$work/good.svg"

# site [OUT]: site.sh on the fake build, its status in $status, its stderr in $work/err
site() {
    MYGPT_BUILD=$work/build MYGPT_FIGURES=$figs bash "$root/scripts/site.sh" "$@" >"$work/out" 2>"$work/err"
    status=$?
}
# refused WHAT STATUS DIR: site.sh failed with STATUS (any non-zero: "fail"), one line on
# stderr, and DIR is byte for byte its copy DIR.ref, with nothing new beside it
refused() {
    local what=$1 want=$2 dir=$3
    if [ "$status" -eq 0 ] || { [ "$want" != fail ] && [ "$status" -ne "$want" ]; }; then
        complain "$what: exit status $status, wanted $want"
    fi
    [ "$(wc -l <"$work/err")" -eq 1 ] || complain "$what: stderr is not one line: $(cat "$work/err")"
    diff -r "$dir.ref" "$dir" >/dev/null 2>&1 || complain "$what: $dir was changed"
    [ -z "$(ls -A "$(dirname "$dir")" | grep '^\.')" ] || complain "$what: left beside $dir: $(ls -A "$(dirname "$dir")" | grep '^\.')"
}

# item 13: someone's own folder, and a file, are not a site of site.sh's
mkdir -p "$work/mine/own"
printf '<p>my page</p>\n' >"$work/mine/own/index.html"
printf 'body { color: red; }\n' >"$work/mine/own/style.css"
cp -a "$work/mine/own" "$work/mine/own.ref"
site "$work/mine/own"
refused "a folder of one's own" 2 "$work/mine/own"
grep -q "$work/mine/own" "$work/err" || complain "the refusal does not name the folder: $(cat "$work/err")"
printf 'notes\n' >"$work/mine/file"
cp -a "$work/mine/file" "$work/mine/file.ref"
site "$work/mine/file"
refused "a file" 2 "$work/mine/file"
rm -rf "$work/mine"

# a site of its own is replaced whole: a stale page goes, the marker stays, every figure is there
mkdir -p "$work/pub/site"
echo "made by scripts/site.sh" >"$work/pub/site/.mygpt-site"
echo stale >"$work/pub/site/stale.html"
site "$work/pub/site"
[ "$status" -eq 0 ] || complain "the site did not build over its own: $(cat "$work/err")"
[ -f "$work/pub/site/.mygpt-site" ] || complain "no marker in the site made"
[ -e "$work/pub/site/stale.html" ] && complain "a page of the old site is left in the new one"
[ -f "$work/pub/site/index.html" ] || complain "no index.html"
for svg in $svgs; do cmp -s "$figs/$svg" "$work/pub/site/$svg" || complain "the site's $svg is not the build's"; done
cp -a "$work/pub/site" "$work/pub/site.ref"

# item 14: a figure empty, cut short, zeroed or missing: the site stays as it was
for broken in empty cut zeroed missing; do
    case $broken in
    empty) : >"$figs/$first" ;;
    cut) head -c 60 "$work/good.svg" >"$figs/$first" ;;
    zeroed) head -c 200 /dev/zero >"$figs/$first" ;;
    missing) rm -f "$figs/$first" ;;
    esac
    site "$work/pub/site"
    refused "a figure $broken" fail "$work/pub/site"
    grep -q "$first" "$work/err" || complain "a figure $broken: the message does not name $first: $(cat "$work/err")"
    cp "$work/good.svg" "$figs/$first"
done

[ "$bad" -eq 0 ] || exit 1
echo "test_site_script: folders not its own refused, figures checked, a site replaced whole"
