#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...] - builds the libFuzzer targets (every fuzz/fuzz_*.c
# unless named) with clang (ASan + UBSan) and runs each for SECONDS (default 60), as
# many at a time as there are cores, starting from the committed seeds in
# fuzz/corpus/TARGET. Prints executions and findings per target, one row each in the
# targets' order; a target that does not build prints
# "TARGET: build failed", and a finding (crash-*, leak-*, timeout-*, oom-* file) is kept
# in build-fuzz/findings/TARGET: either makes the script exit 1. Needs clang and
# libclang-rt-14-dev (installed when missing), and the GPT-2 vocabulary in data/ for
# fuzz_tokenizer. scripts/test.sh runs it for 5 s a target (its stage 4); fixed findings
# become regression tests in tests/.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    for src in "$ROOT"/fuzz/fuzz_*.c; do TARGETS+=("$(basename "$src" .c)"); done
fi
OUT=$ROOT/build-fuzz
mkdir -p "$OUT"

for p in clang libclang-rt-14-dev libpcre2-dev libsleef-dev libcurl4-openssl-dev libssl-dev; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then # held ones too
        bash "$ROOT/scripts/apt.sh" install "$p"
    fi
done

CFLAGS=(-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -ffp-contract=off
        -D_DEFAULT_SOURCE -fopenmp=libgomp -I"$ROOT/lib/include" -I"$ROOT/lib" -I"$ROOT/cli" -I"$ROOT/args")
# every subcommand (mygpt.c's main renamed below; the version meson.build's project()
# gives, as cli/meson.build passes it) and the trainer's loops, data-parallel training
# in its one-process build (no MPI)
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -1)
CLI=("$ROOT"/cli/*.c "$ROOT"/args/*.c "$ROOT"/trainer/*.c
     -I"$ROOT/trainer" -DMYGPT_CLI_MAIN=mygpt_cli_main -DTOOL_MAX_NUMEL=4096 "-DMYGPT_VERSION=\"$version\"")
export MYGPT_DATA=${MYGPT_DATA:-$ROOT/data}

# The library once for all targets (instrumented for coverage, libFuzzer's main left to
# each target), a file at a time per core
rm -rf "$OUT/lib" && mkdir -p "$OUT/lib" && : >"$OUT/lib.build.log"
LIB=()
for src in "$ROOT"/lib/*/*.c; do
    obj=$OUT/lib/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
    LIB+=("$obj")
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
    clang "${CFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" 2>>"$OUT/lib.build.log" &
done
wait
lib_ok=1
for obj in "${LIB[@]}"; do [ -f "$obj" ] || lib_ok=0; done

# fuzz_args's dictionary: the tool's commands and every flag of theirs, each a word
{
    sed -n 's/^ *{"\([a-z]*\)", cmd_.*/\1/p' "$ROOT/cli/mygpt.c"
    grep -ho '{"[a-z0-9-]*", [01], [01]}' "$ROOT"/cli/*.c "$ROOT"/cli/*.h | sed 's/{"\([^"]*\)".*/--\1/'
} | sort -u | sed 's/.*/"&\\x0A"/' >"$OUT/fuzz_args.dict"

status=0
# One target: built, then run for SECONDS_EACH; its row (and the first lines of what it
# found) into $OUT/$t.row, its status into $OUT/$t.status
fuzz_target() {
    local t=$1 extra=() options=() data=$MYGPT_DATA
    # fuzz_args: the tool's flags, then a command that gets past them stops at its first
    # file: an empty data folder (no vocabulary to load, no fine-tuning on the book's
    # data); every target's stdin is at its end (chat reads it)
    [ "$t" = fuzz_args ] && extra=("${CLI[@]}") options=(-dict="$OUT/fuzz_args.dict") data=$OUT/empty-data
    if [ "$lib_ok" != 1 ] || ! clang "${CFLAGS[@]}" -fsanitize=fuzzer "$ROOT/fuzz/$t.c" "${LIB[@]}" "${extra[@]}" \
        -lpcre2-8 -lsleef -lcurl -lcrypto -lm -o "$OUT/$t" 2>"$OUT/$t.build.log"; then
        [ "$lib_ok" = 1 ] || cp "$OUT/lib.build.log" "$OUT/$t.build.log"
        echo "$t: build failed (see $OUT/$t.build.log)" >"$OUT/$t.row"
        echo 1 >"$OUT/$t.status"
        return
    fi
    local corpus=$OUT/corpus/$t findings=$OUT/findings/$t execs found
    mkdir -p "$corpus" "$findings"
    cp -n "$ROOT/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null
    mkdir -p "$data"
    (cd "$findings" && MYGPT_DATA=$data "$OUT/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "${options[@]}" "$corpus" </dev/null >"$OUT/$t.log" 2>&1)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$t.log" | grep -o '[0-9]*$')
    found=$(ls "$findings" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
    printf '%-15s %12s %9s  %s\n' "$t" "${execs:-?}" "$SECONDS_EACH" "$found" >"$OUT/$t.row"
    if [ "$found" != 0 ] || [ -z "$execs" ]; then
        grep -m5 -E 'ERROR|SUMMARY|runtime error' "$OUT/$t.log" | sed 's/^/    /' >>"$OUT/$t.row"
        echo 1 >"$OUT/$t.status"
    else
        echo 0 >"$OUT/$t.status"
    fi
}

# A target runs on one core: as many at a time as there are cores, the rows in order
printf '%-15s %12s %9s  %s\n' target executions seconds findings
for t in "${TARGETS[@]}"; do
    rm -f "$OUT/$t.row" "$OUT/$t.status"
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
    fuzz_target "$t" &
done
wait
for t in "${TARGETS[@]}"; do
    cat "$OUT/$t.row" 2>/dev/null || echo "$t: did not report"
    [ "$(cat "$OUT/$t.status" 2>/dev/null)" = 0 ] || status=1
done
exit $status
