#!/usr/bin/env bash
# targets.sh - the speed targets of issue 51 (AVX2 at the machine's limit) in one run: every
# figure beside this machine's limit measured in the same round (--peak's FMA rate, the read
# bandwidth), R interleaved rounds, each figure's median and its spread, and whether the
# median meets the target. Measures only; nothing is asserted, nothing here is a test.
#
#   bash bench/targets.sh [--build DIR] [--rounds R] [--ch5] [--busy]
#
# --ch5 also runs chapter 38 (the book's chapter 5, whole: minutes) once a round against its
# FLOP limit; --busy also times chapter 81 quiet and beside a busy loop pinned to the last
# CPU, the chapter choosing its own team (OMP_NUM_THREADS and OMP_WAIT_POLICY left out of
# its environment). MYGPT_MATMUL_KERNEL=avx2 MYGPT_ATTENTION_KERNEL=avx2 in the environment
# measure the AVX2 kernels on an AVX-512 CPU (the limits then use AVX2's peak). OpenBLAS's sgemm is
# measured beside the products when /usr/bin/python3 has torch (bench/openblas_sgemm.py).
# Name the CPU (its family and model, printed first) with every figure you quote.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build rounds=3 ch5=0 busy=0
while (($#)); do
    case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --ch5) ch5=1; shift ;;
    --busy) busy=1; shift ;;
    *) echo "targets.sh: unknown option '$1' (--build DIR, --rounds R, --ch5, --busy)" >&2; exit 2 ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "targets.sh: --rounds: '$rounds' is not a positive count" >&2; exit 2; }
bench=$build/bench/mygpt-bench
[[ -x $bench ]] || { echo "targets.sh: $bench: no such program (build first: bash scripts/setup.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# GPT-2 small's products at B T = 1024: qkv, the attention's projection, fc, proj, the tied head
shapes="1024,768,2304 1024,768,768 1024,768,3072 1024,3072,768 1024,768,50257"
attention_shapes="1,1024,768,12 2,256,768,12" # B,T,C,NH
openblas=0
/usr/bin/python3 -c 'import torch' 2>/dev/null && openblas=1

# put KEY VALUE: one more round's figure of KEY
put() { echo "$2" >>"$tmp/$1"; }
# field NAME TEXT: the value of NAME=value in TEXT's last line that has it
field() { grep -o "\b$1=[0-9.]*" <<<"$2" | tail -1 | cut -d= -f2; }

round() {
    local out t shape m k n flop
    for t in 1 2; do
        out=$("$bench" --peak --threads "$t" 2>&1)
        put "peak$t" "$(field gflops "$out")"
    done
    out=$("$bench" --bandwidth --threads 2 2>&1)
    put bandwidth "$(field gb_per_s "$out")"
    for shape in $shapes; do
        IFS=, read -r m k n <<<"$shape"
        flop=$((2 * m * k * n))
        for t in 1 2; do
            out=$("$bench" --matmul "$shape" --threads "$t" --reps 3 2>&1)
            put "fwd_pct.$shape.$t" "$(field pct_peak "$out")"
            put "fwd_cpu.$shape.$t" "$(awk -v f=$flop -v c="$(field cpu_ms "$out")" 'BEGIN {print f / c / 1e6}')"
            out=$("$bench" --matmul "$shape" --backward --threads "$t" --reps 3 2>&1)
            put "dinp_pct.$shape.$t" "$(field dinp_pct_peak "$out")"
            put "dweight_pct.$shape.$t" "$(field dweight_pct_peak "$out")"
            put "dinp_cpu.$shape.$t" "$(awk -v f=$flop -v c="$(field dinp_cpu_ms "$out")" 'BEGIN {print f / c / 1e6}')"
            put "dweight_cpu.$shape.$t" "$(awk -v f=$flop -v c="$(field dweight_cpu_ms "$out")" 'BEGIN {print f / c / 1e6}')"
        done
    done
    if ((openblas)); then
        for t in 1 2; do
            out=$(/usr/bin/python3 "$root/bench/openblas_sgemm.py" --threads "$t" --reps 3 2>&1)
            for shape in $shapes; do
                local line
                line=$(grep "matmul=$shape threads" <<<"$out")
                put "blas_fwd.$shape.$t" "$(field fwd_cpu_gflops "$line")"
                put "blas_dinp.$shape.$t" "$(field dinp_cpu_gflops "$line")"
                put "blas_dweight.$shape.$t" "$(field dweight_cpu_gflops "$line")"
            done
        done
    fi
    # the attention's forward alone (GPT-2 small at T = 1024, the book's chapter-5 batch): its
    # causal FLOPs' share of a thread's peak, beside the products' above
    for shape in $attention_shapes; do
        out=$("$bench" --attention "$shape" --threads 1 --reps 5 2>&1)
        put "attention.$shape" "$(field pct_peak "$out")"
    done
    for c in gpt2-b4t64 book-ch5; do
        out=$("$bench" --train --config "$c" --threads 2 --reps 3 2>&1)
        put "train.$c" "$(grep -o 'this step: [0-9.]*x the limit' <<<"$out" | grep -o '[0-9.]*')"
        # each part whose share of the time is over 10 % and over its share of the FLOPs
        awk -v c="$c" '/the step.s parts/ {on = 1; next} on && /\|/ {
                line = $0; gsub(/[(),]/, " ", line); n = split(line, w, " ")
                for (i = 5; i < n; i++) if (w[i] == "|") {
                    name = w[i - 4] == "forward" || w[i - 4] == "backward" ? w[1] " " w[i - 4] : "the rest"
                    if (w[i - 2] + 0 > 10 && w[i - 2] + 0 > w[i + 1] + 0)
                        print c ": " name " " w[i - 2] " % of the time, " w[i + 1] " % of the FLOPs"
                }
            }' <<<"$out" >>"$tmp/over_share"
    done
    out=$("$bench" --config gpt2 --threads 2 --reps 3 2>&1)
    put forward1024 "$(awk -v p="$(tail -1 "$tmp/peak2")" -v g="$(field gflops "$out")" 'BEGIN {print p / g}')"
    out=$("$bench" --classify --config book --threads 2 --reps 3 2>&1)
    put classify "$(grep -o 'this step: [0-9.]*x the limit' <<<"$out" | grep -o '[0-9.]*')"
    out=$("$bench" --generate --config gpt2 --threads 2 --new 64 --reps 3 2>&1)
    for w in fp32 bf16 int8; do
        put "decode.$w" "$(awk -v w=$w '$1 == w && $2 == 2 && $9 ~ /%$/ {sub(/%/, "", $9); print $9}' <<<"$out")"
    done
    if ((ch5)); then
        local s e
        s=$(date +%s.%N)
        (cd "$root" && "$build/chapters/38_book_training" >/dev/null)
        e=$(date +%s.%N)
        # ~49.8 TFLOP: 90 steps x 3 x 131.3 GFLOP, the evaluations and samples (bench/README.md)
        put ch5 "$(awk -v s="$s" -v e="$e" -v p="$(tail -1 "$tmp/peak2")" 'BEGIN {print (e - s) / (49.8e3 / p)}')"
    fi
    if ((busy)); then
        # the chapter sizes its own team (cli_cap_threads) unless the environment sets the team
        # or the waiting: run it without them, as a learner does, whatever this script was given
        local ch81=(env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY "$build/chapters/81_book_classifier")
        local last=$(($(nproc) - 1)) pid
        s=$(date +%s.%N); (cd "$root" && "${ch81[@]}" >/dev/null); e=$(date +%s.%N)
        put busy_quiet "$(awk -v s="$s" -v e="$e" 'BEGIN {print e - s}')"
        taskset -c "$last" sh -c 'while :; do :; done' &
        pid=$!
        s=$(date +%s.%N); (cd "$root" && "${ch81[@]}" >/dev/null); e=$(date +%s.%N)
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        put busy_ratio "$(awk -v s="$s" -v e="$e" -v q="$(tail -1 "$tmp/busy_quiet")" 'BEGIN {print (e - s) / q}')"
    fi
}

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
spread() { sort -g "$1" | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3g-%.3g", lo, hi}'; }
# row LABEL KEY [OP TARGET]: the median of KEY, against TARGET (OP: >= or <=) if given
row() {
    local med met
    [[ -s $tmp/$2 ]] || { printf '%-46s %10s\n' "$1" "(not measured)"; return; }
    med=$(median "$tmp/$2")
    [[ $# -eq 2 ]] && { printf '%-46s %10.4g  %s\n' "$1" "$med" "($(spread "$tmp/$2"))"; return; }
    met=$(awk -v m="$med" -v t="$4" -v op="$3" 'BEGIN {print (op == ">=" ? m >= t : m <= t) ? "met" : "NOT met"}')
    printf '%-46s %10.3g  %-17s %s %-6s %s\n' "$1" "$med" "($(spread "$tmp/$2"))" "$3" "$4" "$met"
}

model=$(awk -F': ' '/^cpu family/ {f = $2} /^model\t/ {m = $2} /^model name/ {n = $2} END {printf "cpu family %s, model %s (%s)", f, m, n}' /proc/cpuinfo 2>/dev/null || true)
echo "targets.sh: $model, $(nproc) CPUs; ${MYGPT_MATMUL_KERNEL:+MYGPT_MATMUL_KERNEL=$MYGPT_MATMUL_KERNEL }${MYGPT_ATTENTION_KERNEL:+MYGPT_ATTENTION_KERNEL=$MYGPT_ATTENTION_KERNEL }$rounds rounds"
for ((r = 1; r <= rounds; r++)); do
    round
    echo "round $r of $rounds done ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

printf '\n%-46s %10s  %-17s %s\n' "figure (median of $rounds rounds)" "median" "(spread)" "target"
row "FMA peak, 1 thread (GFLOP/s)" peak1
row "FMA peak, 2 threads (GFLOP/s)" peak2
row "read bandwidth, 2 threads (GB/s)" bandwidth
for t in 1 2; do
    want=$((t == 1 ? 85 : 80))
    for shape in $shapes; do
        for p in fwd dinp dweight; do
            row "$p $shape, $t thread(s): % of peak (CPU)" "${p}_pct.$shape.$t" ">=" "$want"
            if ((openblas)); then
                paste -d' ' "$tmp/${p}_cpu.$shape.$t" "$tmp/blas_$p.$shape.$t" | awk '{print $1 / $2}' >"$tmp/vs.$p.$shape.$t"
                row "  against OpenBLAS's sgemm (CPU GFLOP/s ratio)" "vs.$p.$shape.$t" ">=" 1
            fi
        done
    done
done
for shape in $attention_shapes; do
    row "attention forward $shape, 1 thread: % of peak" "attention.$shape"
done
row "training step gpt2-b4t64, x its limit" train.gpt2-b4t64 "<=" 1.3
row "forward GPT-2 small T = 1024, x its limit" forward1024 "<=" 1.2
row "book's chapter-5 step (book-ch5), x its limit" train.book-ch5 "<=" 1.5
((ch5)) && row "book's chapter 5 whole (chapter 38), x ~49.8 TFLOP" ch5 "<=" 1.5
row "book's chapter-6 step (--classify), x its limit" classify "<=" 1.3
for w in fp32 bf16 int8; do
    row "decoding GPT-2 $w, % of the read bandwidth" "decode.$w" ">=" 85
done
((busy)) && row "chapter 81 beside a busy loop, x its quiet time" busy_ratio "<=" 1.5
echo
if [[ -s $tmp/over_share ]]; then
    echo "parts of a step over 10 % of its time and over their FLOP share (any round):"
    sort -u "$tmp/over_share" | sed 's/^/  /'
else
    echo "no part of a step over 10 % of its time beyond its FLOP share, in any round"
fi
