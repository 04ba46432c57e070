#!/usr/bin/env bash
# test_mpi.sh MYGPT MPI_CHECK CHAPTER35 - data-parallel training over MPI, under
# mpirun (with --allow-run-as-root as root, --oversubscribe on small machines):
#   1. the hooks (mpi_check) with 1, 2 and 3 processes;
#   2. 30 AdamW steps on the-verdict by 1 and by 2 processes, the same global batch:
#      every step's training loss and the validation losses within 1e-6 relative,
#      the parameters compared across ranks after every step (--check-replicas);
#   3. a rank that cannot read its data ends the whole job with its error (no hang), status 2;
#   4. ranks that disagree (flags, model sizes, weights) or fail before training end the
#      job with one message naming the rank, status 2 (bad input, as without MPI), and
#      leave no empty run folder behind;
#   5. more processes than batch rows is refused with a clear message;
#   6. appendix D's schedule and clipping: 1 process under mpirun as without
#      MPI, bit for bit, 2 processes within 1e-6;
#   7. chapter 35, which starts mpirun itself, from a folder whose name holds a quote
#      and a command: one word to mpirun, never a command run; its worker's mode takes
#      no other flag and says when its lines cannot be written.
# Skipped (77) when mpirun is absent; under CI=true that is a failure.
set -uo pipefail
mygpt=$(realpath "$1") check=$(realpath "$2") chapter35=$(realpath "$3") # (absolute: the jobs run in $tmp)
if ! command -v mpirun >/dev/null 2>&1; then
    echo "test_mpi: mpirun is absent (Debian: openmpi-bin)"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
data=${MYGPT_DATA:?MYGPT_DATA must name the data folder}
if [ ! -f "$data/the-verdict.txt" ] || [ ! -f "$data/encoder.json" ]; then
    echo "test_mpi: $data lacks the-verdict.txt or encoder.json"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMP_NUM_THREADS=1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" # the runs without --out make their runs/ folders here, not in the build
say() { echo "$1"; }

for P in 1 2 3; do
    if timeout 120 "${mpi[@]}" -np $P "$check" </dev/null >"$tmp/check" 2>&1; then
        say "ok: the hooks with $P processes ($(grep -c '^ok' "$tmp/check") checks)"
    else
        say "FAIL: the hooks with $P processes"; sed 's/^/  /' "$tmp/check"; fail=1
    fi
done

train_args() { # TEXT BATCH: sets the array args
    args=(train --seed 123 --vocab 50257 --embed 64 --heads 4 --layers 2 --max-seq 32
          --text "$1" --context 32 --batch "$2" --steps 30 --optimizer adamw
          --lr 1e-2 --eval-every 1 --data-parallel --check-replicas)
}
train_args "$data/the-verdict.txt" 8
for P in 1 2; do # (--save: rank 0 alone names and writes it)
    if ! timeout 300 "${mpi[@]}" -np $P "$mygpt" "${args[@]}" --save "$tmp/m$P.safetensors" </dev/null >"$tmp/p$P" \
        2>"$tmp/e$P"; then
        say "FAIL: training with $P processes"; sed 's/^/  /' "$tmp/e$P"; fail=1
    fi
done
if [ -s "$tmp/p1" ] && [ -s "$tmp/p2" ]; then
    if awk 'NR == FNR { t[$2] = $4; v[$2] = $6; n++; next }
            { if (!($2 in t)) bad++
              else for (k = 0; k < 2; k++) {
                  a = k ? v[$2] : t[$2]; b = k ? $6 : $4
                  d = (a - b) / a; if (d < 0) d = -d
                  if (d > 1e-6) { print "step " $2 ": " a " vs " b; bad++ } }
              m++ }
            END { exit (n == 30 && m == 30 && !bad) ? 0 : 1 }' "$tmp/p1" "$tmp/p2"; then
        say "ok: 30 steps by 2 processes within 1e-6 of 1 process, replicas identical after every step"
    else
        say "FAIL: the 2-process losses differ from the 1-process ones"; paste "$tmp/p1" "$tmp/p2" | sed 's/^/  /'; fail=1
    fi
fi

# A data-parallel run's folder is made by rank 0 alone (another rank found rank 0's files
# in --out DIR, or made a second folder): its model, state and log, every time
dp_ok=0
for k in 1 2 3 4 5; do
    if timeout 120 "${mpi[@]}" -np 2 "$mygpt" train --seed 123 --vocab 50257 --embed 16 --heads 2 --layers 1 \
        --max-seq 16 --text "$data/the-verdict.txt" --context 16 --batch 4 --steps 2 --data-parallel \
        --out "$tmp/dp_run$k" </dev/null >/dev/null 2>"$tmp/dp_err" &&
        [ -f "$tmp/dp_run$k/model.safetensors" ] && [ -f "$tmp/dp_run$k/state.safetensors" ]; then
        dp_ok=$((dp_ok + 1))
    else
        ls "$tmp/dp_run$k" 2>&1 | sed 's/^/  /'; sed 's/^/  /' "$tmp/dp_err"; break
    fi
done
if [ $dp_ok = 5 ]; then
    say "ok: 5 data-parallel runs into --out DIR, each folder made by rank 0 alone"
else
    say "FAIL: a data-parallel run into --out DIR (run $((dp_ok + 1)) of 5)"; fail=1
fi

# Appendix D's schedule and clipping under --data-parallel. One process under
# mpirun prints what the tool prints without MPI, bit for bit; two processes within 1e-6
# of it (the norm clipped is the averaged gradient's, the same on every rank), and their
# log's learning rates are the same; the clipping changes the run.
sched=(train --seed 5 --vocab 50257 --embed 32 --heads 4 --layers 1 --max-seq 16 --text "$data/the-verdict.txt"
       --context 16 --batch 4 --steps 12 --optimizer adamw --lr 1e-2 --eval-every 1 --warmup 3 --cosine
       --lr-min 1e-4)
"$mygpt" "${sched[@]}" --log "$tmp/s0.csv" >"$tmp/u0" 2>"$tmp/e0" || { say "FAIL: unclipped"; fail=1; }
"$mygpt" "${sched[@]}" --clip-grad 0.05 --log "$tmp/s0.csv" >"$tmp/s0" 2>"$tmp/e0" ||
    { say "FAIL: the schedule without MPI"; sed 's/^/  /' "$tmp/e0"; fail=1; }
for P in 1 2; do
    timeout 300 "${mpi[@]}" -np $P "$mygpt" "${sched[@]}" --clip-grad 0.05 --data-parallel --check-replicas \
        --log "$tmp/s$P.csv" </dev/null >"$tmp/s$P" 2>"$tmp/e$P" ||
        { say "FAIL: the schedule with $P processes"; sed 's/^/  /' "$tmp/e$P"; fail=1; }
done
if [ -s "$tmp/s0" ] && cmp -s "$tmp/s0" "$tmp/s1" && ! cmp -s "$tmp/s0" "$tmp/u0" &&
    awk 'NR == FNR { t[$2] = $4; v[$2] = $6; n++; next }
         { for (k = 0; k < 2; k++) { a = k ? v[$2] : t[$2]; b = k ? $6 : $4
               d = (a - b) / a; if (d < 0) d = -d; if (!($2 in t) || d > 1e-6) bad++ } m++ }
         END { exit (n == 12 && m == 12 && !bad) ? 0 : 1 }' "$tmp/s0" "$tmp/s2" &&
    [ "$(cut -d, -f1,4 "$tmp/s0.csv")" = "$(cut -d, -f1,4 "$tmp/s2.csv")" ]; then
    say "ok: --warmup --cosine --clip-grad: 1 process under mpirun as without MPI, 2 within 1e-6, the same rates"
else
    say "FAIL: the schedule and clipping with --data-parallel"; paste "$tmp/s0" "$tmp/s1" "$tmp/s2" | sed 's/^/  /'
    fail=1
fi

# rank 1 alone is given a file it cannot read (mpirun's MPMD form): the job must end
status=0
good=("${args[@]}")
train_args "$tmp/absent.txt" 8
timeout 120 "${mpi[@]}" -np 1 "$mygpt" "${good[@]}" : -np 1 "$mygpt" "${args[@]}" \
    </dev/null >"$tmp/out" 2>"$tmp/err" || status=$?
if [ $status -eq 2 ] && grep -q "rank 1: .*absent.txt" "$tmp/err"; then
    say "ok: a rank that cannot read its data ends the job (exit $status) with its error"
else
    say "FAIL: a rank without its data: exit $status (124: it hung)"; sed 's/^/  /' "$tmp/err"; fail=1
fi

# Ranks that disagree (flags, a stale --init-from of another
# size, other weights) or that fail before training (no vocabulary on that node, --context
# above its checkpoint's length) end the whole job with one message naming the rank and
# what differs; never a hang (the timeout), a corruption or a silent exit 0
# Each job runs in a folder of its own, which it must leave empty: the run's folder that
# rank 0 made (runs/NAME/, or --out's) goes too, though another rank's abort ends rank 0.
jobs=0
mpmd() { # NAME PATTERN: rank 0 runs a0, rank 1 runs a1; the job must fail, as bad input (2), with PATTERN on stderr
    local st=0 cwd="$tmp/job$((++jobs))"
    mkdir "$cwd"
    (cd "$cwd" && timeout 60 "${mpi[@]}" -np 1 "${a0[@]}" : -np 1 "${a1[@]}" </dev/null >"$tmp/out" 2>"$tmp/err") ||
        st=$?
    if [ $st -eq 2 ] && grep -q -- "$2" "$tmp/err" && [ -z "$(ls -A "$cwd")" ]; then
        say "ok: $1 ends the job (exit $st), no folder left: $(grep -m1 -- "$2" "$tmp/err")"
    else
        say "FAIL: $1: exit $st (124: it hung), stderr lacks '$2', or it left: $(ls -A "$cwd")"
        sed 's/^/  /' "$tmp/err"; fail=1
    fi
}
small() { # SEED EMBED MAXSEQ FILE: a checkpoint, trained one step without MPI
    "$mygpt" train --seed "$1" --vocab 50257 --embed "$2" --heads 4 --layers 1 --max-seq "$3" \
        --text "$data/the-verdict.txt" --context 8 --batch 2 --steps 1 --optimizer sgd --lr 0.1 --save "$4" \
        >/dev/null 2>&1 || { say "FAIL: cannot make $4"; fail=1; }
}
rest=(--context 16 --batch 4 --optimizer sgd --lr 0.1 --data-parallel)
flags=(--text "$data/the-verdict.txt" --steps 3 "${rest[@]}")
model=(--vocab 50257 --heads 4 --layers 1 --max-seq 32)
a0=("$mygpt" train --seed 1 --embed 64 "${model[@]}" "${flags[@]}")
a1=("$mygpt" train --seed 1 --embed 32 "${model[@]}" "${flags[@]}")
mpmd "a rank given another --embed" "rank 1: --embed is 32 here, 64 on rank 0"
a0+=(--out here); a1+=(--out here)
mpmd "a rank given another --embed, --out DIR" "rank 1: --embed is 32 here, 64 on rank 0"
a1=("$mygpt" train --seed 1 --embed 64 "${model[@]}" --text "$data/the-verdict.txt" --steps 5 "${rest[@]}")
mpmd "a rank given other --steps" "rank 1: --steps is 5 here, 3 on rank 0"
a1=("$mygpt" train --seed 7 --embed 64 "${model[@]}" "${flags[@]}")
mpmd "a rank given another --seed" "rank 1: --seed is 7 here, 1 on rank 0"
a1=("$mygpt" train --seed 1 --embed 64 "${model[@]}" "${flags[@]}" --clip-grad 0.5)
mpmd "a rank given --clip-grad alone" "rank 1: --clip-grad is 0.5 here, 0 on rank 0"
small 1 64 32 "$tmp/a.st"; small 1 32 32 "$tmp/b.st"; small 2 64 32 "$tmp/c.st"; small 1 64 8 "$tmp/d.st"
a0=("$mygpt" train --seed 1 --init-from "$tmp/a.st" "${flags[@]}")
a1=("$mygpt" train --seed 1 --init-from "$tmp/b.st" "${flags[@]}")
mpmd "a rank whose --init-from is a model of another size" "rank 1: the model's parameter count is"
a1=("$mygpt" train --seed 1 --init-from "$tmp/c.st" "${flags[@]}")
mpmd "a rank whose --init-from holds other weights" "rank 1: the initial weights is checksum"
a1=("$mygpt" train --seed 1 --init-from "$tmp/d.st" "${flags[@]}")
mpmd "a rank whose checkpoint is shorter than --context" "rank 1: this rank failed"
mkdir -p "$tmp/novocab"
a0=("$mygpt" train --seed 1 --embed 64 "${model[@]}" "${flags[@]}")
a1=(env MYGPT_DATA="$tmp/novocab" "$mygpt" train --seed 1 --embed 64 "${model[@]}" "${flags[@]}")
mpmd "a rank without its vocabulary" "rank 1: this rank failed"
a1=("$mygpt" train --seed 1 --embed 64 "${model[@]}" --text "$tmp/novocab" --steps 3 "${rest[@]}")
mpmd "a rank whose --text is a directory" "rank 1: "
a0=("$mygpt" train --seed 1 --embed 64 "${model[@]}" --text "$tmp/novocab" --steps 3 "${rest[@]}")
a1=("$mygpt" train --seed 1 --embed 64 "${model[@]}" "${flags[@]}")
mpmd "rank 0, whose --text is a directory" "rank 0: "

status=0
train_args "$data/the-verdict.txt" 1
timeout 120 "${mpi[@]}" -np 2 "$mygpt" "${args[@]}" </dev/null >"$tmp/out" 2>"$tmp/err" || status=$?
if [ $status -eq 2 ] && grep -q "2 processes for a batch of 1 rows" "$tmp/err"; then
    say "ok: more processes than batch rows is refused"
else
    say "FAIL: 2 processes for 1 row: exit $status"; sed 's/^/  /' "$tmp/err"; fail=1
fi

odd="$tmp/it's a;touch PWNED;'x"
mkdir -p "$odd" && cp "$chapter35" "$odd/"
status=0
(cd "$tmp" && timeout 300 "$odd/35_data_parallel" --smoke </dev/null >"$tmp/out" 2>"$tmp/err") || status=$?
if [ $status -eq 0 ] && [ ! -e "$tmp/PWNED" ] && grep -q "identical" "$tmp/out"; then
    say "ok: chapter 35 from a folder named with a quote and a command"
else
    say "FAIL: chapter 35 from $odd: exit $status$([ -e "$tmp/PWNED" ] && echo ', and the command in its name ran')"
    sed 's/^/  /' "$tmp/err"; fail=1
fi
# The worker's mode takes the words run_team gives mpirun and no others, and says when its
# lines could not be written: another flag was ignored, /dev/full was a silent exit 0
status=0
"$chapter35" --worker --smoke --seed=7 </dev/null >"$tmp/out" 2>"$tmp/err" || status=$?
if [ $status -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "takes no other flag (--seed=7)" "$tmp/err"; then
    say "ok: chapter 35's --worker refuses another flag"
else
    say "FAIL: chapter 35 --worker --smoke --seed=7: exit $status"; sed 's/^/  /' "$tmp/err"; fail=1
fi
status=0
timeout 120 "$chapter35" --worker --smoke </dev/null >/dev/full 2>"$tmp/err" || status=$?
if [ $status -eq 1 ] && grep -q "error writing output" "$tmp/err"; then
    say "ok: chapter 35's --worker says its lines could not be written"
else
    say "FAIL: chapter 35 --worker --smoke >/dev/full: exit $status"; sed 's/^/  /' "$tmp/err"; fail=1
fi
exit $fail
