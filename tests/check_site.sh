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

# Every page in one headless Chromium, driven over its DevTools pipe (--remote-debugging-pipe:
# JSON commands in on fd 3, replies and events out on fd 4, each ended by a NUL). A browser
# per page took ~2.5 s each on our VMs; one browser takes a fraction of that per page.
# For each page: load it, then ask it (the probe below) for any image that did not decode,
# a stylesheet that did not apply or a C block not coloured; any uncaught script error
# counts; then a screenshot of the page at a phone's width.
probe="(function () {
  var bad = [];
  for (var i = 0; i < document.images.length; i++) {
    var im = document.images[i];
    if (!im.complete || im.naturalWidth === 0) bad.push(im.getAttribute('src'));
  }
  if (getComputedStyle(document.body).maxWidth === 'none') bad.push('style.css');
  var cs = document.querySelectorAll('pre code.language-c');
  for (var j = 0; j < cs.length; j++) {
    var kw = cs[j].querySelector('span.hl.kwa, span.hl.kwb');
    if (!cs[j].classList.contains('hl') || !kw) { bad.push('C-block-' + j + '-not-highlighted'); continue; }
    if (getComputedStyle(kw).color === getComputedStyle(cs[j]).color) bad.push('C-block-' + j + '-keywords-not-coloured');
  }
  return bad.length ? 'BROKEN ' + bad.join(' ') : 'LOADED';
})()"
probe=$(tr '\n' ' ' <<<"$probe") # one line: a JSON string holds no raw newline

# The browser's messages go to a file, which bash reads in blocks (from a pipe it would read
# a byte at a time, and a screenshot is ~300 kB of base64).
next_message() { # -> msg: the browser's next message; fails after 60 s without one
    local part deadline=$((SECONDS + 60))
    msg=
    while :; do
        if IFS= read -r -d '' part <&6; then msg+=$part; return 0; fi
        msg+=$part
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.01
    done
}
call=0
send() { # METHOD PARAMS [SESSION] -> reply: its answer; the events on the way are added to events
    call=$((call + 1))
    printf '{"id":%d,"method":"%s","params":%s%s}\0' "$call" "$1" "$2" "${3:+,\"sessionId\":\"$3\"}" >&5 2>/dev/null ||
        return 1
    while next_message; do
        case $msg in "{\"id\":$call,"*) reply=$msg; return 0 ;; *) events+=$msg$'\n' ;; esac
    done
    return 1
}
field() { # NAME: the first string field NAME of reply
    local v=${reply#*\"$1\":\"}
    [ "$v" != "$reply" ] && echo "${v%%\"*}"
}
check_in_chromium() {
    local session page name verdict
    mkfifo "$work/commands" && : >"$work/messages" || return 1
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile" \
        --remote-debugging-pipe 3<"$work/commands" 4>>"$work/messages" >/dev/null 2>"$work/err" &
    chromium_pid=$!
    exec 5>"$work/commands" 6<"$work/messages"
    events=
    send Target.createTarget '{"url":"about:blank"}' &&
        send Target.attachToTarget "{\"targetId\":\"$(field targetId)\",\"flatten\":true}" &&
        session=$(field sessionId) && send Page.enable '{}' "$session" && send Runtime.enable '{}' "$session" &&
        send Emulation.setDeviceMetricsOverride '{"width":412,"height":2600,"deviceScaleFactor":1,"mobile":false}' \
            "$session" || { complain "Chromium did not start over its DevTools pipe: $(tail -2 "$work/err" | tr '\n' ' ')"; return 1; }
    rm -rf "$shots" && mkdir -p "$shots"
    for page in "$site"/*.html; do
        name=$(basename "$page" .html)
        events=
        send Page.navigate "{\"url\":\"file://$page\"}" "$session" || { complain "$name.html: Chromium stopped answering"; return 1; }
        until [[ $events == *'"method":"Page.loadEventFired"'* ]]; do
            next_message || { complain "$name.html did not load in Chromium"; return 1; }
            events+=$msg$'\n'
        done
        send Runtime.evaluate "{\"expression\":\"$probe\",\"returnByValue\":true}" "$session" || return 1
        verdict=$(field value)
        if [[ $events == *'"method":"Runtime.exceptionThrown"'* ]]; then
            reply=${events#*\"method\":\"Runtime.exceptionThrown\"}
            verdict="script error: $(field description || field text)"
        fi
        [ "$verdict" = LOADED ] || complain "$name.html in Chromium: ${verdict:-no answer from the probe}"
        send Page.captureScreenshot '{"format":"png"}' "$session" || return 1
        printf '%s' "$reply" | sed 's/.*"data":"\([^"]*\)".*/\1/' | base64 -d >"$shots/$name.png" 2>/dev/null
        [ -s "$shots/$name.png" ] || complain "$name.html: Chromium took no screenshot"
    done
    send Browser.close '{}'
}
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
    complain "chromium is missing (Debian's chromium: scripts/setup.sh installs it)"
else
    trap '' PIPE # a browser that died makes send fail, not this script
    chromium_pid=
    check_in_chromium || bad=1
    exec 5>&- 6<&-
    for _ in $(seq 50); do kill -0 "$chromium_pid" 2>/dev/null || break; sleep 0.2; done
    kill "$chromium_pid" 2>/dev/null
    wait
fi

[ "$bad" -eq 0 ] || exit 1
echo "check_site: $pages pages build, link, load whole in Chromium, and have screenshots in $shots"
