#!/usr/bin/env bash
# check_fetch_data.sh ROOT - scripts/fetch-data.sh repairs a data folder without writing
# through a link: in a folder where the-verdict.txt is a learner's link to a file of
# their own, sms_spam_train.csv a wrong file and instruction-data.json a
# dangling link, it leaves the learner's file byte-identical, removes each bad link with
# one line on stderr, writes every file whole and right (a regular file of the expected
# sha256, no temporary left) and keeps a link to the right contents as it is. No network:
# those files come from the repository's corpus/, and the GPT-2 vocabulary is linked from
# the data folder (skipped without it, a failure under CI=true).
set -uo pipefail
root=$(cd "${1:?usage: check_fetch_data.sh ROOT}" && pwd)
vocab=${MYGPT_DATA:-$root/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
complain() { echo "check_fetch_data: $*"; bad=1; }

for f in encoder.json vocab.bpe; do
    if [ ! -s "$vocab/$f" ]; then
        echo "check_fetch_data: no $vocab/$f (bash scripts/fetch-data.sh fetches it)"
        [ "${CI:-}" = true ] && exit 1
        exit 77
    fi
done

data=$work/data
mkdir -p "$data"
ln -s "$vocab/encoder.json" "$data/encoder.json"
ln -s "$vocab/vocab.bpe" "$data/vocab.bpe"
printf 'my own text, not the verdict\n' >"$work/mine.txt"
cp "$work/mine.txt" "$work/mine.orig"
ln -s "$work/mine.txt" "$data/the-verdict.txt"
printf 'Label,Text\n1,not the book'"'"'s\n' >"$data/sms_spam_train.csv"
ln -s "$work/nowhere.json" "$data/instruction-data.json"

(umask 022 && MYGPT_DATA=$data bash "$root/scripts/fetch-data.sh") >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] || complain "exit status $status: $(cat "$work/err")"
cmp -s "$work/mine.txt" "$work/mine.orig" || complain "the learner's file behind the link was changed"
[ -L "$work/mine.txt" ] && complain "the learner's file became a link"
for f in the-verdict.txt sms_spam_train.csv sms_spam_validation.csv sms_spam_test.csv instruction-data.json \
    tinyshakespeare.txt llama/stories260K.bin llama/tok512.bin; do
    if [ -L "$data/$f" ] || [ ! -f "$data/$f" ]; then
        complain "$f is not a regular file"
    elif ! cmp -s "$data/$f" "$root/corpus/$f"; then
        complain "$f is not corpus/$f"
    elif [ "$(stat -c %a "$data/$f")" != 644 ]; then
        complain "$f has mode $(stat -c %a "$data/$f"), not 644 (umask 022)"
    fi
done
for f in encoder.json vocab.bpe; do
    [ "$(readlink "$data/$f")" = "$vocab/$f" ] || complain "the link $f (to the right contents) was not kept"
done
leftover=$(ls -A "$data" | grep -v -x -e encoder.json -e vocab.bpe -e the-verdict.txt -e sms_spam_train.csv \
    -e sms_spam_validation.csv -e sms_spam_test.csv -e instruction-data.json -e tinyshakespeare.txt -e llama)
leftover="$leftover$(ls -A "$data/llama" | grep -v -x -e stories260K.bin -e tok512.bin)"
[ -z "$leftover" ] || complain "left in the data folder: $leftover"
# one line for each link removed, naming it
[ "$(wc -l <"$work/err")" -eq 2 ] || complain "stderr is not one line per removed link: $(cat "$work/err")"
for f in the-verdict.txt instruction-data.json; do
    grep -q "$data/$f is a link" "$work/err" || complain "stderr does not say $f was a link"
done

[ "$bad" -eq 0 ] || exit 1
echo "check_fetch_data: links kept out of, files written whole"
