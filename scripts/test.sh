#!/usr/bin/env bash
# test.sh - the README's test command: installs what is missing, builds, and runs
#   1. the whole test suite (Criterion suites + one check per chapter), then
#   2. the same suite built with -fsanitize=address,undefined (any report fails; malloc
#      returns NULL on impossible sizes, as without ASan, so out-of-memory paths run), then
#   3. every chapter program under valgrind --leak-check=full (any error or leak fails; those
#      with GPT-2's vocabulary run under the sanitizers instead, 40 in the learn suite), then
#   4. every libFuzzer target for 5 s (fuzz/run.sh: a target that stops building fails), then
#   5. a clang build (no warning) and the suites that hold its kernels to the same bits, and a
#      clang build without OpenMP (a Mac without libomp) and five of its chapters, then
#   6. an aarch64 cross build and a subset of its tests under qemu-user (scripts/cross.sh),
#      then clang's aarch64 build and its gpt suite.
# Ends with the line "N passed, N failed, N skipped". MYGPT_QUICK=1 runs stage 1 only;
# arguments name the meson tests stages 1 and 2 run (all without).
# Counts are Criterion tests (plus one per chapter check, per valgrind run and per fuzz
# target); a suite that dies before Criterion reports counts as one failure; tests that
# cannot run here (the GPT-2 vocabulary could not be fetched) count as skipped, never as
# passed.
[ -n "${BASH_VERSION-}" ] || { echo "${0}: run it with bash (bash $0), not sh" >&2; exit 2; }
set -euo pipefail
if [ "${1-}" = -h ] || [ "${1-}" = --help ]; then
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
    exit 0
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

passed=0
failed=0
skipped=0
status=0

# Adds the results of one meson test log (testlog.json) to the counts.
count_log() {
    local log=$1 line name result p f c without_skips
    local synth_re='Synthesis: Tested: ([0-9]+) \| Passing: ([0-9]+) \| Failing: ([0-9]+) \| Crashing: ([0-9]+)'
    while IFS= read -r line; do
        [[ $line =~ \"name\":\ \"([^\"]*)\" ]] && name=${BASH_REMATCH[1]} || name='?'
        [[ $line =~ \"result\":\ \"([^\"]*)\" ]] && result=${BASH_REMATCH[1]} || result='?'
        without_skips=${line//\[SKIP\] /}           # count "[SKIP] " (7 characters) in pure bash
        skipped=$((skipped + (${#line} - ${#without_skips}) / 7))
        if [[ $line =~ $synth_re ]]; then
            p=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]} c=${BASH_REMATCH[4]}
            passed=$((passed + p))
            failed=$((failed + f + c))
            # a suite that failed although Criterion counted no failure (e.g. a leak report)
            if [ "$result" != "OK" ] && [ $((f + c)) -eq 0 ]; then failed=$((failed + 1)); fi
        elif [ "$result" = "OK" ]; then
            passed=$((passed + 1))
        elif [ "$result" = "SKIP" ]; then
            skipped=$((skipped + 1))
        else
            echo "test.sh: suite '$name' ended with $result before reporting" >&2
            failed=$((failed + 1))
        fi
    done < "$log"
}

# Threads that wait sleep instead of spinning: on 2 cores the suites and chapters that run
# side by side would otherwise take each other's cores (results never depend on it).
export OMP_WAIT_POLICY=PASSIVE

# Stage 2's build (a first one keeps both cores busy for a while) runs during stage 1 at
# the lowest priority: it takes only the cycles the suite leaves idle (a test that runs
# alone on one core, the last tests of a run), and stage 2 waits for what is left of it.
# Then, the same way, stage 5's two clang builds (stage 5 waits for them, and builds again
# in its own time what they could not, saying why).
SAN_BUILD=${MYGPT_SAN_BUILD:-$MYGPT_ROOT/build-sanitize}
build_sanitized() {
    if [ ! -f "$SAN_BUILD/build.ninja" ]; then
        nice -n 19 meson setup "$SAN_BUILD" "$MYGPT_ROOT" -Db_sanitize=address,undefined -Db_lundef=false \
            -Dbuildtype=debugoptimized -Dc_args=-fno-sanitize-recover=all || return 1
    fi
    nice -n 19 ninja -C "$SAN_BUILD"
}
# stage 5's builds: clang with OpenMP, and without (a Mac without libomp); COMMAND... before
# clang.sh (nice -n 19 ahead of time)
build_clang() {
    MYGPT_BUILD=$MYGPT_ROOT/build-clang "$@" bash "$MYGPT_ROOT/scripts/clang.sh" --build
}
build_clang_serial() {
    MYGPT_BUILD=$MYGPT_ROOT/build-clang-serial MYGPT_MESON_ARGS="-Dopenmp=disabled -Dtests=disabled -Dmpi=disabled" \
        "$@" bash "$MYGPT_ROOT/scripts/clang.sh" --build
}
# the builds ahead, one after the other: the sanitizer build's status into $ahead/san
build_ahead() {
    local st=0
    build_sanitized >"$ahead/san.log" 2>&1 || st=$?
    echo "$st" >"$ahead/san"
    { build_clang nice -n 19 && build_clang_serial nice -n 19; } >"$ahead/clang.log" 2>&1 || true
}
ahead_pid=
if [ "${MYGPT_QUICK:-0}" != 1 ]; then
    ahead=$(mktemp -d)
    set -m # a process group of its own, which an early exit ends whole
    build_ahead </dev/null &
    ahead_pid=$!
    set +m
    trap '[ -z "$ahead_pid" ] || kill -- -"$ahead_pid" 2>/dev/null || true; rm -rf "$ahead"' EXIT
fi

# A stage's header, with the time since the start (CI's budget is the sum of the stages)
stage() { echo "== $* (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }

stage "1. test suite"
meson test -C "$MYGPT_BUILD" --no-rebuild --print-errorlogs "$@" || status=$?
count_log "$MYGPT_BUILD/meson-logs/testlog.json"

if [ "${MYGPT_QUICK:-0}" != 1 ]; then
    stage "2. test suite under AddressSanitizer + UndefinedBehaviorSanitizer"
    echo "built with -fsanitize=address,undefined in $SAN_BUILD (during stage 1, at the lowest priority)"
    while [ ! -s "$ahead/san" ]; do sleep 1; done
    if [ "$(cat "$ahead/san")" -ne 0 ]; then
        cat "$ahead/san.log"
        echo "test.sh: the sanitizer build in $SAN_BUILD failed" >&2
        exit 1
    fi
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        meson test -C "$SAN_BUILD" --no-rebuild --print-errorlogs "$@" || status=$?
    count_log "$SAN_BUILD/meson-logs/testlog.json"

    stage "3. every chapter under valgrind --leak-check=full"
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "test.sh: valgrind is missing" >&2
        failed=$((failed + 1))
    else
        figures=$(mktemp -d)
        # the chapters with GPT-2's 50257-token vocabulary run for minutes under valgrind
        # (~50x slower): they run under the sanitizers in stage 2 instead
        sanitizer_only=" 32_loss 33_training 34_generation 36_attention_maps 37_book_gptmodel 38_book_training 39_quantization 81_book_classifier 86_book_instruction_finetune 87_book_lora 401_book_dummy_gpt 409_book_generate "
        # appendix D's chapter outlasts valgrind even in --smoke: its schedule and clipping
        # run in the learn suite, under the sanitizers too
        learn_only=" 40_book_train_model "
        total=$(grep -c -v -e '^number' -e '^$' "$MYGPT_ROOT/chapters/index.tsv")
        # valgrind runs a program's threads one at a time, on one core: two chapters at a
        # time, each one's exit status and stderr into $figures/PROGRAM.status and .stderr
        run_valgrind() {
            local vstatus=0
            MYGPT_FIGURES=$figures valgrind --leak-check=full --error-exitcode=99 --quiet --suppressions="$MYGPT_ROOT/scripts/valgrind.supp" \
                "$MYGPT_BUILD/chapters/$1" </dev/null >/dev/null 2>"$figures/$1.stderr" || vstatus=$?
            echo "$vstatus" >"$figures/$1.status"
        }
        done_count=0
        ran=()
        while IFS=$'\t' read -r number program rest; do
            [ "$number" = "number" ] || [ -z "$number" ] && continue
            done_count=$((done_count + 1))
            if [[ $sanitizer_only == *" $program "* ]]; then
                printf 'valgrind %2d/%d %s: under the sanitizers in stage 2 instead\n' "$done_count" "$total" "$program"
                continue
            fi
            if [[ $learn_only == *" $program "* ]]; then
                printf 'valgrind %2d/%d %s: its library code in the learn suite instead\n' "$done_count" "$total" "$program"
                continue
            fi
            printf 'valgrind %2d/%d %s\n' "$done_count" "$total" "$program"
            while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
            run_valgrind "$program" </dev/null &
            ran+=("$program")
        done < "$MYGPT_ROOT/chapters/index.tsv"
        wait
        for program in "${ran[@]}"; do
            vstatus=$(cat "$figures/$program.status" 2>/dev/null || echo "no status")
            case $vstatus in
                0) passed=$((passed + 1)) ;;
                77) if [ "${CI:-}" = true ]; then
                        failed=$((failed + 1)); status=1; echo "valgrind: $program found no data under CI=true"
                    else
                        skipped=$((skipped + 1))
                    fi ;;
                *) failed=$((failed + 1)); status=1
                   echo "valgrind: $program exited $vstatus"; sed 's/^/  /' "$figures/$program.stderr" ;;
            esac
        done
        if [ "$done_count" -ne "$total" ]; then # something ate the index (a program reading stdin)
            echo "valgrind: only $done_count of the $total chapters ran"
            failed=$((failed + 1)); status=1
        else
            echo "valgrind: every chapter checked"
        fi
        rm -rf "$figures"
    fi
fi

if [ "${MYGPT_QUICK:-0}" != 1 ]; then
    stage "4. every fuzz target for 5 s (fuzz/run.sh)"
    # libFuzzer needs clang: fuzz/run.sh installs clang and libclang-rt-14-dev when
    # missing. Each target is one test: passed if it built and found nothing (its row ends
    # in 0 findings), failed otherwise, a target that did not build or did not run too.
    # fuzz_tokenizer needs the GPT-2 vocabulary: without it, skipped (failed under CI=true).
    fuzz_log=$(mktemp)
    run=()
    for src in "$MYGPT_ROOT"/fuzz/fuzz_*.c; do
        t=$(basename "$src" .c)
        if [ "$t" = fuzz_tokenizer ] && [ ! -s "$MYGPT_DATA/encoder.json" ] && [ "${CI:-}" != true ]; then
            echo "fuzz_tokenizer: no GPT-2 vocabulary in $MYGPT_DATA, skipped"
            skipped=$((skipped + 1))
            continue
        fi
        run+=("$t")
    done
    fuzz_status=0
    bash "$MYGPT_ROOT/fuzz/run.sh" 5 "${run[@]}" </dev/null | tee "$fuzz_log" || fuzz_status=$?
    fuzz_failed=0
    for t in "${run[@]}"; do
        if grep -qE "^$t +[0-9]+ +[0-9]+ +0\$" "$fuzz_log"; then
            passed=$((passed + 1))
        else
            fuzz_failed=$((fuzz_failed + 1))
        fi
    done
    # a failure the rows do not show (the script itself ended early) counts once
    [ "$fuzz_status" -ne 0 ] && [ "$fuzz_failed" -eq 0 ] && fuzz_failed=1
    [ "$fuzz_failed" -eq 0 ] || { failed=$((failed + fuzz_failed)); status=1; }
    rm -f "$fuzz_log"
fi

if [ "${MYGPT_QUICK:-0}" != 1 ]; then
    stage "5. the same bits from clang (scripts/clang.sh: clang 14 and LLVM's OpenMP)"
    # built, then the suites that hold every kernel's clone (avx512f, fma, default) and
    # the generator to PyTorch's bits, and a chapter, against the same goldens as gcc's
    wait "$ahead_pid" || true # the clang builds made ahead (below: what is left of them, if any)
    ahead_pid=
    echo "clang builds made ahead in the cycles stages 1 to 4 left: $(grep -c '^setup: built' "$ahead/clang.log") of 2"
    clang_status=0
    build_clang </dev/null || clang_status=$?
    if [ "$clang_status" -ne 0 ]; then
        echo "test.sh: the clang build failed"
        failed=$((failed + 1)); status=1
    else
        meson test -C "$MYGPT_ROOT/build-clang" --no-rebuild --print-errorlogs rng vecmath vecmath_accuracy gpt arch \
            learn sample llama "chapter 26_gpt_main" </dev/null || status=$?
        count_log "$MYGPT_ROOT/build-clang/meson-logs/testlog.json"
    fi
    # what a Mac without libomp builds: clang with no OpenMP (-Dopenmp=disabled), no warning;
    # its chapters that run the kernels print the same bits on their one thread
    serial_status=0
    build_clang_serial </dev/null || serial_status=$?
    if [ "$serial_status" -ne 0 ]; then
        echo "test.sh: the clang build without OpenMP failed"
        failed=$((failed + 1)); status=1
    else
        meson test -C "$MYGPT_ROOT/build-clang-serial" --no-rebuild --print-errorlogs "chapter 26_gpt_main" \
            "chapter 32_loss" "chapter 47_sinusoidal_encoding" "chapter 53_alibi" "chapter 54_rope" </dev/null || status=$?
        count_log "$MYGPT_ROOT/build-clang-serial/meson-logs/testlog.json"
    fi

    stage "6. the same bits on aarch64 (scripts/cross.sh aarch64 --ci, under qemu-user)"
    cross_status=0
    # a log of an earlier run is not counted
    rm -f "$MYGPT_ROOT/build-aarch64/meson-logs/testlog.json" "$MYGPT_ROOT/build-aarch64-clang/meson-logs/testlog.json"
    bash "$MYGPT_ROOT/scripts/cross.sh" aarch64 --ci </dev/null || cross_status=$?
    if [ -f "$MYGPT_ROOT/build-aarch64/meson-logs/testlog.json" ]; then
        count_log "$MYGPT_ROOT/build-aarch64/meson-logs/testlog.json"
        # and clang's aarch64 build (clang is here since stage 5), whose gpt suite follows gcc's
        if [ -f "$MYGPT_ROOT/build-aarch64-clang/meson-logs/testlog.json" ]; then
            count_log "$MYGPT_ROOT/build-aarch64-clang/meson-logs/testlog.json"
        else
            echo "test.sh: clang's aarch64 build did not get to its tests"
            failed=$((failed + 1)); status=1
        fi
        [ "$cross_status" -eq 0 ] || status=1
    else
        echo "test.sh: the aarch64 build did not get to its tests"
        failed=$((failed + 1)); status=1
    fi
fi

echo "== done in $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
