/*
 * linalg_pack.c: B packed once into the products' panels (see linalg.h):
 * the memory for a pack, float32 and bfloat16 packs (one in place), their
 * sizes and their release.  The panels' layout is linalg.c's
 * (linalg_pack_any), for the kernel the machine runs.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attnscope/kernels/linalg.h"

#include "linalg_internal.h"

/*
 * Memory for a pack: a large one aligned to and marked for transparent huge
 * pages (a model's packs are its size again: 4 KiB pages made faulting
 * them in most of the packing's time).  Freed with free().
 */
void *
linalg_pack_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;

    if (bytes < huge)
        return malloc(bytes);
    if (posix_memalign(&p, huge, (bytes + huge - 1) / huge * huge) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
    return p;
}

static int
pack(struct linalg_packed *pk, int n, int k, const struct bmat *b)
{
    const int nr = linalg_nr();
    const size_t esize = b->bf16 ? sizeof(uint16_t) : sizeof(float);

    memset(pk, 0, sizeof *pk);
    if (n <= 0 || k <= 0)
        return 0;
    pk->data = linalg_pack_alloc(linalg_packed_elems(n, k, nr) * esize);
    if (pk->data == NULL)
        return -1;
    pk->n = n;
    pk->k = k;
    pk->nr = nr;
    pk->bf16 = b->bf16;
    linalg_pack_any(k, n, nr, b, pk->data);
    return 0;
}

int
linalg_pack(struct linalg_packed *pk, int n, int k, const float *b, int ldb, int trans)
{
    const struct bmat bm = { b, false, ldb, trans };

    return pack(pk, n, k, &bm);
}

int
linalg_pack_bf16(struct linalg_packed *pk, int n, int k, const uint16_t *b, int ldb, int trans)
{
    const struct bmat bm = { b, true, ldb, trans };

    return pack(pk, n, k, &bm);
}

size_t
linalg_pack_floats(int n, int k)
{
    return n <= 0 || k <= 0 ? 0 : linalg_packed_elems(n, k, linalg_nr());
}

size_t
linalg_packed_bytes(const struct linalg_packed *pk)
{
    if (pk->data == NULL)
        return 0;
    if (pk->q != LINALG_QNONE)
        return linalg_q_bytes(pk);
    return linalg_packed_elems(pk->n, pk->k, pk->nr) * (pk->bf16 ? sizeof(uint16_t) : sizeof(float));
}

int
linalg_pack_bf16_in_place(struct linalg_packed *pk, int n, int k, uint16_t *b, uint16_t *scratch)
{
    const int nr = linalg_nr();
    const size_t values = (size_t)n * (size_t)k;

    memset(pk, 0, sizeof *pk);
    if (n <= 0 || k <= 0 || linalg_packed_elems(n, k, nr) != values)
        return -1;
    memcpy(scratch, b, values * sizeof *b);
    linalg_pack_any(k, n, nr, &(const struct bmat){ scratch, true, k, 1 }, b);
    pk->n = n;
    pk->k = k;
    pk->nr = nr;
    pk->bf16 = true;
    pk->in_place = true;
    pk->data = b;
    return 0;
}

void
linalg_packed_destroy(struct linalg_packed *pk)
{
    if (!pk->in_place)
        free(pk->data);
    memset(pk, 0, sizeof *pk);
}

