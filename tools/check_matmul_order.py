#!/usr/bin/python3
"""How many of a product's elements mygpt_matmul and PyTorch 1.13's F.linear compute to the
same bits (development check; PyTorch is the oracle, pinned to the AVX2 machine's kernels
and one thread as every golden is), at GPT-2's shapes: decoding's one row, the book's
batches of 6 and 8 tokens, training's 64 and 256, the head's 50257 outputs, and chapter 93's Llama of
width 16.

    /usr/bin/python3 tools/check_matmul_order.py build/lib/libmygpt.so

Both sum each element's K products with fused multiply-adds, k in order, but group them
otherwise (docs/model-spec.md, "Which sums are PyTorch's"): mygpt in blocks of 256, every
element one running sum; OpenBLAS's Haswell sgemm in blocks cut by its level-3 driver
(320, then the rest halved: 320 + 224 + 224 at K = 768), and some of its register tiles
(8 x 4, 8 x 6) keep even and odd k in two running sums added at the end. The second
column shows the first part alone: F.linear equals the sum of its products over
OpenBLAS's blocks, each computed by F.linear itself. Prints one line per shape; the
answer is a measurement, not a pass or fail.
"""
import ctypes
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch
import torch.nn.functional as F

SHAPES = [  # (M tokens, K inputs, N outputs)
    (6, 16, 24), (8, 16, 16), (1, 768, 2304), (6, 64, 768), (6, 768, 768), (8, 768, 50257), (8, 200, 2304),
    (64, 256, 768), (64, 768, 2304), (256, 64, 256), (256, 768, 3072), (256, 3072, 768),
]


class Error(ctypes.Structure):  # mygpt/error.h
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 8448)]


def openblas_blocks(k):
    """level3.c's cut of K for the Haswell kernel: GEMM_Q 320, GEMM_UNROLL_M 8"""
    blocks = []
    while k > 0:
        n = 320 if k >= 640 else ((k // 2 + 7) // 8 * 8 if k > 320 else k)
        blocks.append(n)
        k -= n
    return blocks


def main():
    lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/lib/libmygpt.so")
    lib.mygpt_matmul.restype = ctypes.c_int
    lib.mygpt_matmul.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.POINTER(Error)]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print("M x K x N: mygpt's elements equal to F.linear's; F.linear equal to its OpenBLAS blocks summed")
    for m, k, n in SHAPES:
        x, w, b = torch.randn(m, k), torch.randn(n, k) * 0.02, torch.randn(n) * 0.02
        want = F.linear(x, w, b)
        got = torch.empty(m, n)
        err = Error()
        if lib.mygpt_matmul(got.data_ptr(), x.data_ptr(), w.data_ptr(), b.data_ptr(), m, k, n, ctypes.byref(err)):
            print("mygpt_matmul failed: %s" % err.message.decode(), file=sys.stderr)
            return 1
        blocks, k0, summed = openblas_blocks(k), 0, b.expand(m, n)
        for kb in blocks:
            summed = summed + F.linear(x[:, k0:k0 + kb], w[:, k0:k0 + kb])
            k0 += kb
        print("%4d x %4d x %5d: %6.2f %% equal (largest difference %.2g of the largest value); "
              "blocks %s: %s" % (m, k, n, 100.0 * (got == want).double().mean().item(),
                                 ((got - want).abs().max() / want.abs().max()).item(),
                                 "+".join(map(str, blocks)), "equal" if torch.equal(summed, want) else "NOT equal"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
