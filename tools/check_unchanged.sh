#!/usr/bin/env bash
# check_unchanged.sh - shows that a change moved no number a user sees: runs every
# chapter and a set of `mygpt` commands at GPT-2 width (forward logits, gradients, a
# 12-step AdamW checkpoint, sampled and greedy generation, naive kernels too) with the
# binaries of two builds, on 1, 2 and 3 threads, and compares the md5 of each output.
#
#   bash tools/check_unchanged.sh BASE_BUILD [NEW_BUILD]     # NEW_BUILD defaults to build/
#   bash tools/check_unchanged.sh --rev REV [NEW_BUILD]      # builds REV in a temporary worktree
#
# Prints one line per output ("same" or "DIFFERS") and exits 1 if any differs. Needs the
# data folder (the-verdict and GPT-2's vocabulary: scripts/fetch-data.sh). Takes a few
# minutes on 2 cores (the book's chapter 5, 38_book_training, most of them: four runs;
# CHECK_UNCHANGED_SKIP="38_book_training" leaves chapters out, and says so). Development
# only: the test suite does not call it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
cleanup() {
    [ -n "${worktree:-}" ] && git -C "$root" worktree remove --force "$worktree" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ "${1:-}" = --rev ]; then
    worktree=$tmp/base-src
    git -C "$root" worktree add --detach "$worktree" "$2" >/dev/null
    meson setup "$tmp/base-build" "$worktree" -Dtests=disabled >/dev/null
    ninja -C "$tmp/base-build" >/dev/null
    base=$tmp/base-build
    shift 2
else
    base=${1:?usage: check_unchanged.sh BASE_BUILD [NEW_BUILD] | --rev REV [NEW_BUILD]}
    shift
fi
new=${1:-$root/build}
export MYGPT_DATA=${MYGPT_DATA:-$root/data}
text=$MYGPT_DATA/the-verdict.txt
[ -f "$text" ] || { echo "check_unchanged: $text is missing (scripts/fetch-data.sh)" >&2; exit 2; }

gpt2_width="--vocab 50257 --embed 768 --heads 12 --layers 2 --max-seq 128"
ids="15496,11,314,716,257,1110,13,198,464,3290;40,367,2885,1464,1807,3619,402,271,10899,2138"
small="--seed 123 --vocab 50257 --embed 64 --heads 4 --layers 2 --max-seq 32"
# name | command line after the mygpt binary ({ckpt} is a per-run file name)
commands=(
    "forward-gpt2-width|forward --seed 7 $gpt2_width --ids $ids --format exact"
    "forward-naive|forward --seed 7 --vocab 3001 --embed 96 --heads 4 --layers 2 --ids $ids --format exact --naive"
    "grad-gpt2-width|grad --seed 5 $gpt2_width --ids $ids --targets ${ids//15496/11} --format exact"
    "train-adamw-12|train $small --text $text --context 32 --batch 8 --steps 12 --optimizer adamw --lr 1e-2 --eval-every 4 --save {ckpt}"
    "generate-sampled|generate --seed 7 $gpt2_width --ids 15496,11,314,716 --max-new 24 --temperature 1.3 --top-k 40 --top-p 0.95 --sample-seed 123"
    "generate-checkpoint|generate --checkpoint {ckpt} --prompt Every --max-new 40 --temperature 0.9 --sample-seed 9"
    "generate-window|generate $small --ids 1,2,3 --max-new 40 --temperature 1.0 --sample-seed 4"
    "generate-no-cache|generate $small --ids 1,2,3 --max-new 20 --no-kv-cache"
    "attention-gpt2-width|attention --seed 3 $gpt2_width --ids 15496,11,314,716,257,1110"
)

# run BUILD THREADS NAME ARGS... -> md5 of stdout (+ the checkpoint it wrote, if any)
run() {
    local build=$1 threads=$2 name=$3 line=$4
    local tag=base
    [ "$build" = "$new" ] && tag=new
    local ckpt=$tmp/$name-$threads-$tag.safetensors
    line=${line//\{ckpt\}/$ckpt}
    local -a argv
    read -r -a argv <<<"$line"
    {
        OMP_NUM_THREADS=$threads "$build/cli/mygpt" "${argv[@]}" 2>/dev/null || echo "exit $?"
        if [ -f "$ckpt" ]; then md5sum <"$ckpt"; fi
    } | md5sum | cut -c1-32
}

differ=0
report() { # name threads base-md5 new-md5
    if [ "$3" = "$4" ]; then printf '%-34s %s threads  same      %s\n' "$1" "$2" "$3"
    else printf '%-34s %s threads  DIFFERS   %s %s\n' "$1" "$2" "$3" "$4"; differ=1; fi
}

for threads in 1 2 3; do
    for entry in "${commands[@]}"; do
        name=${entry%%|*} line=${entry#*|}
        # the checkpoint that generate-checkpoint reads is each build's own train-adamw-12's
        if [ "$name" = generate-checkpoint ]; then
            b=$(run "$base" "$threads" "$name" "${line//\{ckpt\}/$tmp/train-adamw-12-$threads-base.safetensors}")
            n=$(run "$new" "$threads" "$name" "${line//\{ckpt\}/$tmp/train-adamw-12-$threads-new.safetensors}")
        else
            b=$(run "$base" "$threads" "$name" "$line")
            n=$(run "$new" "$threads" "$name" "$line")
        fi
        report "$name" "$threads" "$b" "$n"
    done
done

# every chapter's output (and the figures it writes), 1 and 2 threads; lines that report
# how long something took (chapter 35's step times) are left out
chapter_output() { # build threads program
    local figs=$tmp/figs
    rm -rf "$figs" && mkdir -p "$figs"
    { MYGPT_FIGURES=$figs OMP_NUM_THREADS=$2 "$1/chapters/$3" </dev/null 2>/dev/null || echo "exit $?"; } |
        { grep -v -E 'time per step|tokens/s' || true; }
    cat "$figs"/* 2>/dev/null || true
}
while IFS=$'\t' read -r number program rest; do
    [ "$number" = number ] || [ -z "$number" ] && continue
    if [[ " ${CHECK_UNCHANGED_SKIP:-} " == *" $program "* ]]; then
        echo "chapter $program: left out (CHECK_UNCHANGED_SKIP)"
        continue
    fi
    for threads in 1 2; do
        b=$(chapter_output "$base" "$threads" "$program" | md5sum | cut -c1-32)
        n=$(chapter_output "$new" "$threads" "$program" | md5sum | cut -c1-32)
        report "chapter $program" "$threads" "$b" "$n"
    done
done <"$root/chapters/index.tsv"

[ "$differ" -eq 0 ] && echo "check_unchanged: every output is the same" || echo "check_unchanged: some outputs DIFFER"
exit "$differ"
