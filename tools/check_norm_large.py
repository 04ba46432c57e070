#!/usr/bin/python3
"""torch.norm(x, 2.0) against mygpt_norm2 on large float32 tensors (development check; PyTorch
1.13 is the oracle): the sizes of GPT-2 small's tensors up to its token table (50257 x 768,
38.6M floats), each with 1 and 2 PyTorch threads, whose reductions must give the same bits
as mygpt's single 8-lane sum (lib/learn/clip.c); those of whole rows of 768 also as the
2-D tensors clip_grad_norm_ takes the norm of. PyTorch's own result does not depend on its
thread count. tests/test_learn.c holds small sizes from tools/gen_learn_goldens.py; these
are too large for a golden file.

    /usr/bin/python3 tools/check_norm_large.py build/lib/libmygpt.so

Prints one line per case and exits 1 if any differs.
"""
import ctypes
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch


def main():
    lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/lib/libmygpt.so")
    lib.mygpt_norm2.restype = ctypes.c_float
    lib.mygpt_norm2.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    torch.manual_seed(0)
    bad = cases = 0
    sizes = [1000, 32768, 32769, 768 * 768, 2304 * 768, 3072 * 768, 1 << 20, 5_000_001, 50257 * 768]
    for n in sizes:
        for scale in (1e-3, 1.0):
            x = (torch.randn(n) * scale).float()
            for shape in [(n,)] + ([(n // 768, 768)] if n % 768 == 0 else []):
                for threads in (1, 2):
                    torch.set_num_threads(threads)
                    want = torch.norm(x.view(shape), 2.0).item()
                    got = lib.mygpt_norm2(x.data_ptr(), n)
                    same = want == got
                    bad += not same
                    cases += 1
                    print("shape %s scale %g threads %d: torch %r mygpt %r %s" % (
                        "x".join(map(str, shape)), scale, threads, want, got, "same" if same else "DIFFERENT"))
    print("%d of %d differ" % (bad, cases))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
