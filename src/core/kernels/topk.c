/*
 * topk.c: the k largest of a row as torch.topk picks them on the CPU (see
 * topk.h): the moves of GCC's std::nth_element, std::sort and
 * std::partial_sort over (value, index) pairs, written out, so that equal
 * values land where PyTorch's land.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>

#include "attnscope/kernels/topk.h"

struct pair {
    double v;
    double i; /* (the index, exact in a double; the pair two doubles as scratch holds them) */
};

/* ATen's order for the largest: a NaN before any number, else the larger first. */
static bool
before(const struct pair *a, const struct pair *b)
{
    return (isnan(a->v) && !isnan(b->v)) || a->v > b->v;
}

static void
swap(struct pair *a, struct pair *b)
{
    struct pair t = *a;
    *a = *b;
    *b = t;
}

/* floor(log2(n)), n > 0 (std::__lg). */
static long
lg(long n)
{
    long k = -1;
    while (n > 0) {
        n >>= 1;
        k++;
    }
    return k;
}

/* The hole at hole filled upwards with value (std::__push_heap). */
static void
push_heap(struct pair *first, long hole, long top, struct pair value)
{
    long parent = (hole - 1) / 2;

    while (hole > top && before(&first[parent], &value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

/* std::__adjust_heap: the hole moved down to a leaf, then value pushed up from it. */
static void
adjust_heap(struct pair *first, long hole, long len, struct pair value)
{
    const long top = hole;
    long child = hole;

    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (before(&first[child], &first[child - 1]))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    push_heap(first, hole, top, value);
}

static void
make_heap(struct pair *first, long len)
{
    if (len < 2)
        return;
    for (long parent = (len - 2) / 2;; parent--) {
        adjust_heap(first, parent, len, first[parent]);
        if (parent == 0)
            return;
    }
}

/* *result taken out, the heap's top put there, the heap of len remade (std::__pop_heap). */
static void
pop_heap(struct pair *first, long len, struct pair *result)
{
    struct pair value = *result;

    *result = first[0];
    adjust_heap(first, 0, len, value);
}

/* The middle - first best of first .. last into a heap at first (std::__heap_select). */
static void
heap_select(struct pair *first, long middle, long last)
{
    make_heap(first, middle);
    for (long i = middle; i < last; i++)
        if (before(&first[i], &first[0]))
            pop_heap(first, middle, &first[i]);
}

static void
sort_heap(struct pair *first, long len)
{
    while (len > 1) {
        len--;
        pop_heap(first, len, &first[len]);
    }
}

static void
linear_insert(struct pair *first, long last)
{
    struct pair value = first[last];
    long next = last - 1;

    while (before(&value, &first[next])) {
        first[last] = first[next];
        last = next;
        next--;
    }
    first[last] = value;
}

static void
insertion_sort(struct pair *first, long len)
{
    for (long i = 1; i < len; i++) {
        if (before(&first[i], &first[0])) {
            struct pair value = first[i];
            for (long j = i; j > 0; j--)
                first[j] = first[j - 1];
            first[0] = value;
        } else
            linear_insert(first, i);
    }
}

/* The median of a, b, c moved to result (std::__move_median_to_first). */
static void
median_to_first(struct pair *result, struct pair *a, struct pair *b, struct pair *c)
{
    if (before(a, b)) {
        if (before(b, c))
            swap(result, b);
        else if (before(a, c))
            swap(result, c);
        else
            swap(result, a);
    } else if (before(a, c))
        swap(result, a);
    else if (before(b, c))
        swap(result, c);
    else
        swap(result, b);
}

/* std::__unguarded_partition_pivot: the index of the cut. */
static long
partition_pivot(struct pair *p, long first, long last)
{
    const long mid = first + (last - first) / 2;
    long lo = first + 1, hi = last;

    median_to_first(&p[first], &p[first + 1], &p[mid], &p[last - 1]);
    for (;;) {
        while (before(&p[lo], &p[first]))
            lo++;
        hi--;
        while (before(&p[first], &p[hi]))
            hi--;
        if (!(lo < hi))
            return lo;
        swap(&p[lo], &p[hi]);
        lo++;
    }
}

/* std::nth_element over p[0 .. n) with nth's element in place. */
static void
nth_element(struct pair *p, long nth, long n)
{
    long first = 0, last = n, depth = 2 * lg(n);

    while (last - first > 3) {
        long cut;
        if (depth == 0) {
            heap_select(p + first, nth + 1 - first, last - first);
            swap(&p[first], &p[nth]);
            return;
        }
        depth--;
        cut = partition_pivot(p, first, last);
        if (cut <= nth)
            first = cut;
        else
            last = cut;
    }
    insertion_sort(p + first, last - first);
}

/* std::__introsort_loop, then std::__final_insertion_sort: std::sort. */
static void
introsort_loop(struct pair *p, long first, long last, long depth)
{
    while (last - first > 16) {
        long cut;
        if (depth == 0) {
            heap_select(p + first, last - first, last - first);
            sort_heap(p + first, last - first);
            return;
        }
        depth--;
        cut = partition_pivot(p, first, last);
        introsort_loop(p, cut, last, depth);
        last = cut;
    }
}

static void
sort(struct pair *p, long n)
{
    if (n <= 0)
        return;
    introsort_loop(p, 0, n, 2 * lg(n));
    if (n > 16) {
        insertion_sort(p, 16);
        for (long i = 16; i < n; i++)
            linear_insert(p, i);
    } else
        insertion_sort(p, n);
}

void
topk_largest(const float *row, int n, int k, int *top, double *scratch)
{
    struct pair *p = (struct pair *)(void *)scratch;

    for (int j = 0; j < n; j++)
        p[j] = (struct pair){ row[j], (double)j };
    if ((long)k * 64 <= n) {
        heap_select(p, k, n);
        sort_heap(p, k);
    } else {
        nth_element(p, k - 1, n);
        sort(p, k - 1);
    }
    for (int j = 0; j < k; j++)
        top[j] = (int)p[j].i;
}
