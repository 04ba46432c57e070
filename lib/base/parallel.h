/*
 * parallel.h - private: the sizes below which a loop stays on one thread (entering an
 * OpenMP region costs about a microsecond, more than the work of the chapters' tiny
 * GPT). Shared with the tests, which check their thread-count configurations clear
 * every one of them, so every parallel loop really runs with 2, 3 and 8 threads.
 *
 * And the work queue the matmul and the attention share their items out with: each
 * thread owns an equal run of the items (the tokens it also handles in the static loops
 * before and after, so their rows stay in its core's cache) and steals from the others'
 * runs once its own is done (on a shared virtual machine one core is often slower).
 */
#ifndef MYGPT_PARALLEL_H
#define MYGPT_PARALLEL_H

/* embedding (B T C), LayerNorm (N C), residual and GELU (n), plain attention (B T T C) */
#define MYGPT_PARALLEL_MIN 32768
/* fast matmul (M K N) and fast attention (B T T C; also needs B * NH > 1) */
#define MYGPT_KERNEL_SMALL 65536
/* fills, copies and sums of whole arrays (n floats): bound by one core's write bandwidth,
 * so the gradients' 475 MB at GPT-2 size go faster shared out */
#define MYGPT_STREAM_MIN 65536

#include <omp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where thread t's run of n items starts, the items cut into team equal runs: thread t
 * owns [start(t), start(t + 1)), start(team) being n. */
static inline size_t mygpt_run_start(size_t n, int t, int team)
{
    return n * (size_t)t / (size_t)team;
}

/* The calling thread's run of n items, [*i0, *i1), in its team (all n when called outside
 * a parallel region): for a region whose body calls a MYGPT_CLONES function on its run
 * (base/simd.h says why the region cannot be inside the clone). */
static inline void mygpt_thread_run(size_t n, size_t *i0, size_t *i1)
{
    const int me = omp_get_thread_num(), nt = omp_get_num_threads();
    *i0 = mygpt_run_start(n, me, nt);
    *i1 = mygpt_run_start(n, me + 1, nt);
}

/* dst = src (or 0 when src is NULL), n floats, each thread filling its static run (as
 * the loops around it share rows) */
static inline void mygpt_fill_floats(float *dst, const float *src, size_t n)
{
    if (n <= MYGPT_STREAM_MIN) {
        if (src)
            memcpy(dst, src, n * sizeof *dst);
        else
            memset(dst, 0, n * sizeof *dst);
        return;
    }
#pragma omp parallel
    {
        size_t i0, i1;
        mygpt_thread_run(n, &i0, &i1);
        if (src)
            memcpy(dst + i0, src + i0, (i1 - i0) * sizeof *dst);
        else
            memset(dst + i0, 0, (i1 - i0) * sizeof *dst);
    }
}

/* One thread's items not yet taken, [front, back) in the high and low 32 bits of one
 * word: the owner takes from the front, a thread that has run out steals from the back,
 * each with one compare-and-swap. A cache line each, so threads only meet at the end. */
typedef struct mygpt_queue {
    _Alignas(64) _Atomic uint64_t range;
} mygpt_queue;

/* Fills q with items [0, n) (n < 2^32); every thread must see it (a barrier) before
 * anyone takes. */
static inline void mygpt_queue_fill(mygpt_queue *q, uint32_t n)
{
    atomic_store_explicit(&q->range, (uint64_t)n, memory_order_relaxed);
}

/* Takes the next item into *item (from the front when own, else the back); 0 once empty. */
static inline int mygpt_queue_take(mygpt_queue *q, int own, size_t *item)
{
    uint64_t r = atomic_load_explicit(&q->range, memory_order_relaxed);
    for (;;) {
        const uint32_t front = (uint32_t)(r >> 32), back = (uint32_t)r;
        if (front >= back)
            return 0;
        const uint64_t next = own ? r + ((uint64_t)1 << 32) : r - 1;
        if (atomic_compare_exchange_weak_explicit(&q->range, &r, next, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *item = own ? front : back - 1u;
            return 1;
        }
    }
}

/* A thread's walk over the team's queues, each filled with its owner's share of the
 * items: its own share first (from the front), then each other thread's in turn (from
 * the back). The queues stand `stride` bytes apart from `first`. */
typedef struct mygpt_steal {
    char *first;
    size_t stride;
    int me, team, step;
} mygpt_steal;

/* Fills thread me's queue with its `mine` items (n < 2^32) and starts its walk; every
 * thread must fill its queue (then a barrier) before anyone takes. */
static inline mygpt_steal mygpt_steal_start(mygpt_queue *first, size_t stride, int me, int team, uint32_t mine)
{
    const mygpt_steal s = {(char *)first, stride, me, team, 0};
    mygpt_queue_fill((mygpt_queue *)(s.first + (size_t)me * stride), mine);
    return s;
}

/* The next item, *item of thread *owner's run; 0 once every queue is empty. */
static inline int mygpt_steal_next(mygpt_steal *s, int *owner, size_t *item)
{
    for (; s->step < s->team; s->step++) {
        *owner = (s->me + s->step) % s->team;
        if (mygpt_queue_take((mygpt_queue *)(s->first + (size_t)*owner * s->stride), s->step == 0, item))
            return 1;
    }
    return 0;
}

#endif
