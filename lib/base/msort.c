/*
 * msort.c - the stable merge sort of base/msort.h.
 */
#include <string.h>

#include "base/msort.h"

typedef struct sort_ctx {
    size_t size;
    int (*cmp)(const void *, const void *, void *);
    void *arg;
    char *tmp;
} sort_ctx;

/* Sorts b[0..n) through c->tmp: each half sorted, then merged, the left element first
 * on a tie (stable). */
static void msort_rec(const sort_ctx *c, char *b, size_t n)
{
    if (n <= 1)
        return;
    const size_t n1 = n / 2, n2 = n - n1, s = c->size;
    char *b1 = b, *b2 = b + n1 * s, *out = c->tmp;
    msort_rec(c, b1, n1);
    msort_rec(c, b2, n2);
    size_t i1 = n1, i2 = n2;
    while (i1 > 0 && i2 > 0) {
        if (c->cmp(b1, b2, c->arg) <= 0) {
            memcpy(out, b1, s);
            b1 += s;
            i1--;
        } else {
            memcpy(out, b2, s);
            b2 += s;
            i2--;
        }
        out += s;
    }
    // what is left of the left half goes last; the right half's rest is in place already
    if (i1 > 0)
        memcpy(out, b1, i1 * s);
    memcpy(b, c->tmp, (n - i2) * s);
}

void mygpt_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *arg,
                 void *scratch)
{
    const sort_ctx c = {size, cmp, arg, scratch};
    msort_rec(&c, base, n);
}
