#!/usr/bin/env bash
# check_site.sh ROOT BUILD - the lessons' site (scripts/site.sh) builds from this build and
# works in a browser: the index links every lesson; every link and image of every page
# resolves to a file; the C a lesson quotes is on its page highlighted, with its text as
# the lesson has it; and headless Chromium (Debian's chromium) loads each page with every
# image decoded, the stylesheet applied, every C block's keywords coloured and no script
# error, and takes a phone-sized screenshot of it (kept in BUILD/site-shots/ to look at).
set -uo pipefail
root=$(cd "${1:?usage: check_site.sh ROOT BUILD}" && pwd)
build=$(cd "${2:?usage: check_site.sh ROOT BUILD}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
site=$build/site
shots=$build/site-shots
bad=0
complain() { echo "check_site: $*"; bad=1; }

# a site made here before site.sh marked its folders (.mygpt-site), which it would refuse,
# is this build's own output of this test
[ -d "$site" ] && [ ! -e "$site/.mygpt-site" ] && rm -rf "$site"
MYGPT_BUILD=$build bash "$root/scripts/site.sh" "$site" || { echo "check_site: the site did not build"; exit 1; }

# the index lists every lesson, and every lesson has its page
for md in "$root"/docs/lessons/*.md; do
    name=$(basename "$md" .md)
    [ "$name" = README ] && continue
    [ -f "$site/$name.html" ] || complain "no page for $name"
    grep -q "href=\"$name.html\"" "$site/index.html" || complain "the index does not link $name"
done

# the C blocks of each page: as many as its lesson quotes, highlighted, and with the
# highlighting's spans taken away the same text as cmark-gfm makes of the lesson
c_blocks() { # HTML on stdin -> the text of its language-c blocks, tags dropped, unescaped
    awk '/<pre><code class="language-c/ { inc = 1 } inc { print } /<\/code><\/pre>/ { inc = 0 }' |
        sed -E "s/<[^>]*>//g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/\"/g; s/&(apos|#39);/'/g; s/&#64;/@/g; s/&amp;/\&/g"
}
for md in "$root"/docs/lessons/*.md; do
    name=$(basename "$md" .md)
    [ "$name" = README ] && continue
    page=$site/$name.html
    [ -f "$page" ] || continue
    quoted=$(grep -c '^<!-- c: ' "$md")
    lit=$(grep -c '<pre><code class="language-c hl">' "$page")
    [ "$quoted" -eq "$lit" ] || complain "$name.html: $lit highlighted C blocks for the $quoted the lesson quotes"
    cmp -s <(grep -v '^<!-- checked\|^<!-- c: ' "$md" | cmark-gfm -e table -e autolink --unsafe | c_blocks) \
        <(c_blocks <"$page") || complain "$name.html: the highlighted C is not the lesson's text"
done

# every relative link and image resolves
pages=0
for page in "$site"/*.html; do
    pages=$((pages + 1))
    while IFS= read -r ref; do
        case $ref in http:* | https:* | mailto:* | \#*) continue ;; esac
        [ -e "$site/${ref%%#*}" ] || complain "$(basename "$page"): '$ref' does not resolve"
    done < <(grep -oE '(href|src)="[^"]*"' "$page" | sed -E 's/^(href|src)="//; s/"$//' | sort -u)
done

# each page in headless Chromium: a copy with a probe that, once the page has loaded,
# notes any image that did not decode, a stylesheet that did not apply, or a script
# error; the DOM it leaves says which. Then a phone-sized screenshot of the page itself.
probe='<script>
window.onerror = function (m) { document.body.setAttribute("data-check", "ERROR " + m); };
window.addEventListener("load", function () {
  var bad = [];
  for (var i = 0; i < document.images.length; i++) {
    var im = document.images[i];
    if (!im.complete || im.naturalWidth === 0) bad.push(im.getAttribute("src"));
  }
  if (getComputedStyle(document.body).maxWidth === "none") bad.push("style.css");
  var cs = document.querySelectorAll("pre code.language-c");
  for (var j = 0; j < cs.length; j++) {
    var kw = cs[j].querySelector("span.hl.kwa, span.hl.kwb");
    if (!cs[j].classList.contains("hl") || !kw) { bad.push("C-block-" + j + "-not-highlighted"); continue; }
    if (getComputedStyle(kw).color === getComputedStyle(cs[j]).color) bad.push("C-block-" + j + "-keywords-not-coloured");
  }
  if (!document.body.hasAttribute("data-check"))
    document.body.setAttribute("data-check", bad.length ? "BROKEN " + bad.join(" ") : "LOADED");
});
</script>'
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
    complain "chromium is missing (Debian's chromium: scripts/setup.sh installs it)"
else
    chrome=("$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
            --disable-background-networking --disable-component-update --disable-sync
            --user-data-dir="$work/profile" --hide-scrollbars)
    rm -rf "$shots" && mkdir -p "$shots"
    for page in "$site"/*.html; do
        name=$(basename "$page" .html)
        probed=$site/.probe-$name.html
        awk -v probe="$probe" '/<\/body>/ { print probe } { print }' "$page" >"$probed"
        timeout 60 "${chrome[@]}" --virtual-time-budget=3000 --dump-dom "file://$probed" >"$work/dom" 2>"$work/err"
        rm -f "$probed"
        verdict=$(grep -o 'data-check="[^"]*"' "$work/dom" | head -1)
        [ "$verdict" = 'data-check="LOADED"' ] ||
            complain "$name.html in Chromium: ${verdict:-the page did not load} $(tail -2 "$work/err" | tr '\n' ' ')"
        timeout 60 "${chrome[@]}" --window-size=412,2600 --screenshot="$shots/$name.png" "file://$page" \
            >/dev/null 2>&1 || complain "$name.html: chromium could not take a screenshot"
        [ -s "$shots/$name.png" ] || complain "$name.html: no screenshot"
    done
fi

[ "$bad" -eq 0 ] || exit 1
echo "check_site: $pages pages build, link, load whole in Chromium, and have screenshots in $shots"
