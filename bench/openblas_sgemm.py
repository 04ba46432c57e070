"""OpenBLAS's sgemm as PyTorch 1.13 calls it (torch.matmul), timed in CPU seconds beside
`mygpt-bench --matmul M,K,N --backward`: the forward a @ w^T and the backward's two
products (dinp = dout @ w, dweight = dout^T @ a) at GPT-2 small's shapes (B T = 1024),
with tools/avx2_kernels.py's choice of kernels (OpenBLAS's Haswell sgemm, as on an AVX2
machine). CPU time is the rate while the process ran: on a machine other jobs share, it
is steadier than the wall clock (mygpt-bench prints both). Measures only.

    /usr/bin/python3 bench/openblas_sgemm.py [--threads 1] [--reps 5]
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import avx2_kernels  # noqa: E402,F401  (before torch: OPENBLAS_CORETYPE, ATEN_CPU_CAPABILITY)
import torch  # noqa: E402

SHAPES = ["1024,768,2304", "1024,768,768", "1024,768,3072", "1024,3072,768", "1024,768,50257"]


def cpu_gflops(f, flop, reps):
    """The median over reps of the CPU time of a batch of calls lasting about 0.3 s, per call.
    Batched because the process's clock reads another running thread's time as of its last
    scheduler tick (milliseconds behind): over one call of a few ms at 2 threads that is
    10-15 % off either way, over 0.3 s about 1 % (mygpt-bench sums its threads' own clocks)."""
    f()
    t = time.perf_counter()
    f()
    calls = max(1, round(0.3 / max(time.perf_counter() - t, 1e-6)))
    times = []
    for _ in range(reps):
        t = time.process_time()
        for _ in range(calls):
            f()
        times.append((time.process_time() - t) / calls)
    times.sort()
    return flop / times[len(times) // 2] / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    for shape in SHAPES:
        M, K, N = map(int, shape.split(","))
        g = torch.Generator().manual_seed(0)
        a, w, o = torch.rand(M, K, generator=g), torch.rand(N, K, generator=g), torch.rand(M, N, generator=g)
        flop = 2.0 * M * K * N
        rates = [cpu_gflops(f, flop, args.reps) for f in (lambda: a @ w.t(), lambda: o @ w, lambda: o.t() @ a)]
        print("openblas matmul=%s threads=%d fwd_cpu_gflops=%.1f dinp_cpu_gflops=%.1f dweight_cpu_gflops=%.1f load=%.2f"
              % (shape, args.threads, *rates, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
