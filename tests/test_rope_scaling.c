/*
 * test_rope_scaling.c - mygpt_rope_scale_llama3, Llama 3.1's rescaling of RoPE's frequencies:
 * on head size 128 with base 500,000, the fast pairs (wavelength under 2048) keep their bits,
 * the slow ones (over 8192) are divided by the factor exactly, the band between lies between
 * the two and the frequencies still fall pair by pair; and its bad arguments. The values
 * themselves are checked against PyTorch by chapter 94 (tools/reference_book_llama.py).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "mygpt/posenc.h"

enum { HALF = 64 };

static const mygpt_rope_scaling LLAMA31 = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4,
                                           .original_context = 8192};

Test(rope_scaling, bands_of_llama31)
{
    mygpt_error err = {0};
    float base[HALF], scaled[HALF];
    cr_assert_eq(mygpt_rope_inv_freq(base, 2 * HALF, 500000.0, &err), MYGPT_OK);
    memcpy(scaled, base, sizeof scaled);
    cr_assert_eq(mygpt_rope_scale_llama3(scaled, HALF, &LLAMA31, &err), MYGPT_OK);
    int fast = 0, slow = 0, band = 0;
    for (int i = 0; i < HALF; i++) {
        const double wavelen = 2.0 * 3.141592653589793 / base[i];
        if (wavelen < 2047.0) {
            cr_assert_eq(scaled[i], base[i], "pair %d (wavelength %g) was changed", i, wavelen);
            fast++;
        } else if (wavelen > 8193.0) {
            cr_assert_eq(scaled[i], base[i] / 8.0f, "pair %d (wavelength %g) not divided by 8", i, wavelen);
            slow++;
        } else if (wavelen > 2049.0 && wavelen < 8191.0) {
            cr_assert(scaled[i] < base[i] && scaled[i] > base[i] / 8.0f, "pair %d of the band is out of it", i);
            band++;
        }
        if (i > 0)
            cr_assert(scaled[i] < scaled[i - 1], "pair %d turns faster than pair %d", i, i - 1);
    }
    cr_assert(fast > 0 && slow > 0 && band > 0, "fast %d, slow %d, band %d: a band is empty", fast, slow, band);
}

Test(rope_scaling, refuses_bad_arguments)
{
    mygpt_error err = {0};
    float f[HALF];
    cr_assert_eq(mygpt_rope_inv_freq(f, 2 * HALF, 500000.0, &err), MYGPT_OK);
    const mygpt_rope_scaling bad[4] = {
        {.factor = 0.5, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 8192},
        {.factor = 8, .low_freq_factor = 4, .high_freq_factor = 4, .original_context = 8192},
        {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 0},
        {.factor = NAN, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 8192}};
    for (int k = 0; k < 4; k++) {
        err = (mygpt_error){0};
        cr_assert_eq(mygpt_rope_scale_llama3(f, HALF, &bad[k], &err), MYGPT_EINVAL, "case %d accepted", k);
        cr_assert(err.message[0] != '\0', "case %d: no message", k);
    }
    cr_assert_eq(mygpt_rope_scale_llama3(f, 0, &LLAMA31, &err), MYGPT_EINVAL);
}
