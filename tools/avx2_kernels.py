"""Import before torch: PyTorch 1.13's CPU kernels as the AVX2 machine that made the
expected outputs and goldens picks them, on any x86 CPU.

PyTorch picks its own kernels by instruction set (ATEN_CPU_CAPABILITY), and its matrix
products are OpenBLAS's, which picks its sgemm kernel by CPU model (OPENBLAS_CORETYPE):
Haswell's on an AVX2 AMD CPU (Zen), SkylakeX's on an AVX-512 Intel CPU, and an
older one on a CPU it does not know. The kernels sum a product's terms in different
orders, so the same script prints other last digits: gpt_instruction_finetuning.py
--test_mode's first training loss is 10.912466049194336 with Haswell's sgemm and
10.912464141845703 with SkylakeX's. Both are read when the libraries load, so this
module sets them unless the caller has (to try another kernel on purpose).
"""
import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
