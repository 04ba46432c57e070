#!/usr/bin/env bash
# compare_builds.sh - two builds' speed side by side, in interleaved rounds (A, B, A, B,
# ...), so that a slow spell of the machine hits both: the GPT-2-small training step
# (gpt2-b4t64), the gpt2-b8 forward and KV-cache decoding, each on 2 threads, and the
# training step's peak RSS. Prints every round's figure and each build's median.
#
#   bash bench/compare_builds.sh BASE_BUILD NEW_BUILD [ROUNDS]      # default 3 rounds
#
# Measures only; nothing is asserted. Takes about 2 minutes a round on 2 cores.
set -euo pipefail
base=${1:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ROUNDS]}
new=${2:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ROUNDS]}
rounds=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME BUILD: one figure per line into $tmp/NAME-<base|new>
measure() {
    local tag=$1 build=$2 out
    out=$("$build/bench/mygpt-bench" --train --config gpt2-b4t64 --threads 2 --reps 4 2>&1)
    awk '$1 == "gpt2-b4t64" && $2 == 2 {print $3}' <<<"$out" >>"$tmp/train-$tag"
    # peak RSS: the process's own high-water mark, from /proc at its end
    /usr/bin/env time -f '%M' -o "$tmp/rss" "$build/bench/mygpt-bench" --train --config gpt2-b4t64 --threads 2 \
        --reps 1 --warmup 0 >/dev/null 2>&1
    echo $(($(cat "$tmp/rss") / 1024)) >>"$tmp/rss-$tag"
    out=$("$build/bench/mygpt-bench" --config gpt2-b8 --threads 2 --reps 5 2>&1)
    awk '$1 == "gpt2-b8" && $2 == 2 {print $3}' <<<"$out" >>"$tmp/forward-$tag"
    # (a build from before --weights prints one row without the weights column)
    out=$("$build/bench/mygpt-bench" --generate --weights fp32 --threads 2 --new 64 2>&1) ||
        out=$("$build/bench/mygpt-bench" --generate --threads 2 --new 64 2>&1)
    awk '$1 == "fp32" && $2 == 2 {print $6} $1 == "2" && NF == 5 {print $4}' <<<"$out" >>"$tmp/decode-$tag"
}

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for ((r = 1; r <= rounds; r++)); do
    measure base "$base"
    measure new "$new"
    echo "round $r done" >&2
done
printf '%-42s %-28s %-28s %s\n' "measurement (2 threads)" "base: rounds" "new: rounds" "medians base / new"
for m in "train:training step gpt2-b4t64 (ms)" "forward:forward gpt2-b8 (ms)" "decode:KV decoding gpt2, per token (ms)" \
    "rss:training step peak RSS (MiB)"; do
    key=${m%%:*} label=${m#*:}
    printf '%-42s %-28s %-28s %s / %s\n' "$label" "$(paste -sd' ' "$tmp/$key-base")" "$(paste -sd' ' "$tmp/$key-new")" \
        "$(median "$tmp/$key-base")" "$(median "$tmp/$key-new")"
done
