#!/usr/bin/env bash
# check_unchanged.sh - shows that a change moved no number a user sees: runs every
# chapter and a set of `mygpt` commands at GPT-2 width (forward logits, gradients, a
# 12-step AdamW checkpoint, sampled and greedy generation, naive kernels too) with the
# binaries of two builds, and compares the md5 of each output: the commands on 1, 2 and
# 3 threads, the chapters on 1 and 2, the long chapters (the books' chapter 5 and
# appendix D, chapter 7: minutes to an hour each) as their --smoke runs on 1 and 2 threads
# and their full runs once, on 2 threads.
#
#   bash tools/check_unchanged.sh BASE_BUILD [NEW_BUILD]     # NEW_BUILD defaults to build/
#   bash tools/check_unchanged.sh --rev REV [NEW_BUILD]      # builds REV in a temporary worktree
#   bash tools/check_unchanged.sh --record FILE BUILD        # only BUILD's md5s, into FILE
#   bash tools/check_unchanged.sh --base-record FILE [NEW_BUILD]  # compares with a recorded base
#
# Prints one line per output ("same" or "DIFFERS") and exits 1 if any differs. Needs the
# data folder (the-verdict and GPT-2's vocabulary: scripts/fetch-data.sh). Takes about
# two hours on 2 cores, most of it the long chapters' full runs: CHECK_UNCHANGED_SKIP="38_book_training
# 40_book_train_model" leaves chapters out (their --smoke runs too) and says so;
# CHECK_UNCHANGED_FULL="38_book_training" names the long chapters whose full run is
# compared (all three by default; "" none). A record (FILE: one line
# "name threads md5" per output) lets the base be run once, while the machine is free.
# Development only: the test suite does not call it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
cleanup() {
    [ -n "${worktree:-}" ] && git -C "$root" worktree remove --force "$worktree" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

record= base_record=
if [ "${1:-}" = --rev ]; then
    worktree=$tmp/base-src
    git -C "$root" worktree add --detach "$worktree" "$2" >/dev/null
    meson setup "$tmp/base-build" "$worktree" -Dtests=disabled >/dev/null
    ninja -C "$tmp/base-build" >/dev/null
    base=$tmp/base-build
    shift 2
elif [ "${1:-}" = --record ]; then
    record=${2:?usage: check_unchanged.sh --record FILE BUILD}
    base=${3:?usage: check_unchanged.sh --record FILE BUILD}
    shift 3
elif [ "${1:-}" = --base-record ]; then
    base_record=${2:?usage: check_unchanged.sh --base-record FILE [NEW_BUILD]}
    [ -f "$base_record" ] || { echo "check_unchanged: no record $base_record" >&2; exit 2; }
    base=
    shift 2
else
    base=${1:?usage: check_unchanged.sh BASE_BUILD [NEW_BUILD] | --rev REV [NEW_BUILD] | --record FILE BUILD | --base-record FILE [NEW_BUILD]}
    shift
fi
new=${1:-$root/build}
[ -z "$record" ] || new= # one build only
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

# a chapter's output (and the figures it writes); lines that report how long something
# took (chapter 35's step times) are left out
chapter_output() { # build threads program [flags...]
    local build=$1 threads=$2 program=$3 figs=$tmp/figs
    shift 3
    rm -rf "$figs" && mkdir -p "$figs"
    { MYGPT_FIGURES=$figs OMP_NUM_THREADS=$threads "$build/chapters/$program" "$@" </dev/null 2>/dev/null ||
        echo "exit $?"; } | { grep -v -E 'time per step|tokens/s' || true; }
    cat "$figs"/* 2>/dev/null || true
}

differ=0
# check NAME THREADS BASE_MD5_COMMAND... : the base's md5 (run, or read from the base
# record) beside the new build's; in --record mode only the one build's, into the record
check() {
    local name=$1 threads=$2 b n
    shift 2
    if [ -n "$record" ]; then
        b=$("$@" "$base")
        printf '%s\t%s\t%s\n' "$name" "$threads" "$b" >>"$record"
        printf '%-40s %s threads  recorded  %s\n' "$name" "$threads" "$b"
        return
    fi
    if [ -n "$base_record" ]; then
        b=$(awk -F'\t' -v n="$name" -v t="$threads" '$1 == n && $2 == t { print $3 }' "$base_record")
        [ -n "$b" ] || b="(not in the record)"
    else
        b=$("$@" "$base")
    fi
    n=$("$@" "$new")
    if [ "$b" = "$n" ]; then printf '%-40s %s threads  same      %s\n' "$name" "$threads" "$b"
    else printf '%-40s %s threads  DIFFERS   %s %s\n' "$name" "$threads" "$b" "$n"; differ=1; fi
}
command_md5() { run "$4" "$1" "$2" "$3"; } # threads name line build
checkpoint_md5() { # threads name line build: generate-checkpoint reads that build's own train-adamw-12's
    local tag=base
    [ "$4" = "$new" ] && tag=new
    run "$4" "$1" "$2" "${3//\{ckpt\}/$tmp/train-adamw-12-$1-$tag.safetensors}"
}
chapter_md5() { # threads program flags build
    local -a flags
    read -r -a flags <<<"$3"
    chapter_output "$4" "$1" "$2" "${flags[@]}" | md5sum | cut -c1-32
}

[ -z "$record" ] || : >"$record"
for threads in 1 2 3; do
    for entry in "${commands[@]}"; do
        name=${entry%%|*} line=${entry#*|}
        if [ "$name" = generate-checkpoint ]; then
            check "$name" "$threads" checkpoint_md5 "$threads" "$name" "$line"
        else
            check "$name" "$threads" command_md5 "$threads" "$name" "$line"
        fi
    done
done

# every chapter, 1 and 2 threads; the long ones as --smoke on 1 and 2 threads, and their
# full runs once, on 2 threads
long=" 38_book_training 40_book_train_model 86_book_instruction_finetune "
full=" ${CHECK_UNCHANGED_FULL-${long}} "
while IFS=$'\t' read -r number program rest; do
    [ "$number" = number ] || [ -z "$number" ] && continue
    if [[ " ${CHECK_UNCHANGED_SKIP:-} " == *" $program "* ]]; then
        echo "chapter $program: left out (CHECK_UNCHANGED_SKIP)"
        continue
    fi
    if [[ $long == *" $program "* ]]; then
        for threads in 1 2; do
            check "chapter $program --smoke" "$threads" chapter_md5 "$threads" "$program" "--smoke"
        done
        if [[ $full != *" $program "* ]]; then
            echo "chapter $program (full run): left out (CHECK_UNCHANGED_FULL)"
        else
            check "chapter $program" 2 chapter_md5 2 "$program" ""
        fi
        continue
    fi
    for threads in 1 2; do
        check "chapter $program" "$threads" chapter_md5 "$threads" "$program" ""
    done
done <"$root/chapters/index.tsv"

if [ -n "$record" ]; then
    echo "check_unchanged: recorded $(wc -l <"$record") outputs in $record"
    exit 0
fi
[ "$differ" -eq 0 ] && echo "check_unchanged: every output is the same" || echo "check_unchanged: some outputs DIFFER"
exit "$differ"
