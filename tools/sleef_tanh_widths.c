/*
 * sleef_tanh_widths.c - checks that SLEEF's deterministic 16-lane tanhf (AVX-512) gives
 * the 8-lane AVX2 one's bits on every float32 input (NaNs aside: their payloads may
 * differ), which lets the GELU use the wider one (lib/kernels/sleef_rows.c). A one-off check
 * for an AVX-512 machine, not part of the build (~26 s on 2 cores):
 *
 *   gcc -O2 -fopenmp -mavx512f -mavx512dq -mavx2 -mfma tools/sleef_tanh_widths.c -lsleef \
 *       -o /tmp/sleef_tanh_widths && /tmp/sleef_tanh_widths
 */
#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    uint64_t differ = 0;
#pragma omp parallel for reduction(+ : differ) schedule(static)
    for (uint64_t b = 0; b < (UINT64_C(1) << 32); b += 16) {
        uint32_t in[16], wide[16], narrow[16];
        for (int l = 0; l < 16; l++)
            in[l] = (uint32_t)(b + (uint64_t)l);
        __m512 x;
        memcpy(&x, in, sizeof x);
        const __m512 y = Sleef_finz_tanhf16_u10avx512f(x);
        const __m256 lo = Sleef_finz_tanhf8_u10avx2(_mm512_castps512_ps256(x));
        const __m256 hi = Sleef_finz_tanhf8_u10avx2(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(x), 1)));
        memcpy(wide, &y, sizeof wide);
        memcpy(narrow, &lo, 32);
        memcpy(narrow + 8, &hi, 32);
        for (int l = 0; l < 16; l++) {
            float f;
            memcpy(&f, &in[l], sizeof f);
            differ += wide[l] != narrow[l] && f == f;
        }
    }
    printf("%llu of the non-NaN float32 inputs differ\n", (unsigned long long)differ);
    return differ != 0;
}
