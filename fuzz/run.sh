#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...] - builds the libFuzzer targets with clang (ASan +
# UBSan) and runs each for SECONDS (default 60), starting from the committed seeds in
# fuzz/corpus/TARGET. Prints executions and findings per target; a finding (crash-*,
# leak-*, timeout-*, oom-* file) is kept in build-fuzz/findings/TARGET and the script
# exits 1. Needs clang and libclang-rt-14-dev (installed when missing), and the GPT-2
# vocabulary in data/ for fuzz_tokenizer. Not part of the test suite: fixed findings
# become regression tests in tests/.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_tokenizer fuzz_vocab fuzz_args fuzz_print fuzz_forward fuzz_checkpoint fuzz_json fuzz_csv fuzz_instruct)
OUT=$ROOT/build-fuzz
mkdir -p "$OUT"

for p in clang libclang-rt-14-dev libpcre2-dev libsleef-dev; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        sudo=(); [ "$(id -u)" -ne 0 ] && sudo=(sudo)
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$p" >/dev/null
    fi
done

CFLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -ffp-contract=off
        -D_DEFAULT_SOURCE -fopenmp=libgomp -I"$ROOT/lib/include" -I"$ROOT/lib" -I"$ROOT/cli" -I"$ROOT/args")
LIB=("$ROOT"/lib/*/*.c)
# every subcommand (mygpt.c's main renamed below) and data-parallel training's
# one-process build (no MPI)
CLI=("$ROOT"/cli/*.c "$ROOT"/args/args.c "$ROOT"/trainer/data_parallel.c "$ROOT"/trainer/train_step.c "$ROOT"/trainer/book_train.c -I"$ROOT/trainer" -I"$ROOT/args")
export MYGPT_DATA=${MYGPT_DATA:-$ROOT/data}
status=0
printf '%-15s %12s %9s  %s\n' target executions seconds findings
for t in "${TARGETS[@]}"; do
    extra=()
    [ "$t" = fuzz_args ] && extra=("${CLI[@]}" -DMYGPT_CLI_MAIN=mygpt_cli_main -DTOOL_MAX_NUMEL=4096
                                   "-DMYGPT_DEFAULT_DATA_DIR=\"$ROOT/data\"")
    if ! clang "${CFLAGS[@]}" "$ROOT/fuzz/$t.c" "${LIB[@]}" "${extra[@]}" -lpcre2-8 -lsleef -lm \
        -o "$OUT/$t" 2>"$OUT/$t.build.log"; then
        echo "$t: build failed (see $OUT/$t.build.log)"
        status=1
        continue
    fi
    corpus=$OUT/corpus/$t findings=$OUT/findings/$t
    mkdir -p "$corpus" "$findings"
    cp -n "$ROOT/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null
    (cd "$findings" && "$OUT/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$corpus" >"$OUT/$t.log" 2>&1)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$t.log" | grep -o '[0-9]*$')
    found=$(ls "$findings" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
    printf '%-15s %12s %9s  %s\n' "$t" "${execs:-?}" "$SECONDS_EACH" "$found"
    if [ "$found" != 0 ] || [ -z "$execs" ]; then
        status=1
        grep -m5 -E 'ERROR|SUMMARY|runtime error' "$OUT/$t.log" | sed 's/^/    /'
    fi
done
exit $status
