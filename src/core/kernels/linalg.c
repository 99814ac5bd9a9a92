/*
 * linalg.c: float32 matrix products, blocked and vectorised (see linalg.h).
 *
 * The shape follows the usual high-performance recipe (Goto and van de
 * Geijn's, as BLIS lays it out): blocks of B are packed into panels of NR
 * columns, blocks of A into panels of MR rows, and a micro-kernel keeps an
 * MR x NR tile of C in registers while it walks k.  One binary carries an
 * AVX-512, an AVX2 and a portable micro-kernel and picks one at run time.
 *
 * Whatever the kernel, every element of C is computed the same way:
 * c = fma(a[0], b[0], 0), then c = fma(a[p], b[p], c) for p = 1, 2, ... in
 * order.  Vector width and tile shape change which elements are computed
 * together, never the arithmetic of one element, so every machine gets the
 * same bits and the golden screens do not depend on the CPU.
 *
 * B may also be bfloat16 (the weights of today's open models, kept as they
 * ship, half the memory): its panels hold the 16-bit patterns and each
 * kernel widens them as it loads them (a bfloat16 is a float32's upper
 * half, so putting it there is the exact conversion).  The FMAs then see
 * the same floats as if B had been converted first, and give the same
 * bits.  A bfloat16 panel's row of nr values is stored interleaved, the
 * first half's columns at the even places and the second half's at the
 * odd ones: one vector load then gives both halves by a shift (the even
 * ones) and a mask (the odd ones), where widening in order costs a shuffle
 * per half.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/workspace.h"

#include "linalg_internal.h"

/*
 * k is walked in blocks of KC: C is read and written once a block, and a
 * panel of B (KC x 32 floats, 128 KB) streams from L2.  Every output is one
 * chain of FMAs in order of k whatever KC is (a block carries on from C),
 * so the blocking changes no bit.  256 kept the panel in L1, but C's
 * traffic cost more: Qwen3-0.6B's forward at 512 tokens on one core, 6.8-7.1
 * s at 256 x 96, 6.4-6.5 s at 1,024 x 192 (doc/performance.md).
 */
#define KC 1024
/* Rows of A packed at once (a multiple of every MR): MC x KC floats, 768 KB, in L2. */
#define MC 192



static const struct kernel *
kernel(void)
{
    return &linalg_kernels[cpu_isa()];
}

/* ---------------------------------------------------------------- packing */

#ifdef LINALG_X86
__attribute__((target("avx512f"))) static void
transpose16_avx512(const float *in, size_t ldi, float *out, size_t ldo)
{
    __m512 r[16];

    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(in + (size_t)i * ldi);
    transpose16_regs(r);
    for (int i = 0; i < 16; i++)
        _mm512_storeu_ps(out + (size_t)i * ldo, r[i]);
}

/*
 * 16 values of p (from p0) of the 32 bfloat16 rows at in (ldi apart) into
 * a panel's 16 interleaved rows of 32 at out: each half's 16 x 16 block
 * transposed as 32-bit lanes holding the patterns, then the second half
 * put in the lanes' upper halves (slot16's order: column j at 2j, column
 * 16 + j at 2j + 1).  Only moves bits.
 */
__attribute__((target("avx512f"))) static void
transpose32x16_bf16_avx512(const uint16_t *in, size_t ldi, uint16_t *out)
{
    __m512 lo[16], hi[16];

    for (int i = 0; i < 16; i++) {
        lo[i] = _mm512_castsi512_ps(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(in + (size_t)i * ldi))));
        hi[i] = _mm512_castsi512_ps(_mm512_cvtepu16_epi32(
            _mm256_loadu_si256((const __m256i *)(in + (size_t)(i + 16) * ldi))));
    }
    transpose16_regs(lo);
    transpose16_regs(hi);
    for (int q = 0; q < 16; q++)
        _mm512_storeu_si512(out + (size_t)q * 32,
                            _mm512_or_si512(_mm512_castps_si512(lo[q]),
                                            _mm512_slli_epi32(_mm512_castps_si512(hi[q]), 16)));
}

/* rows rows of 32 floats, ldi apart, one after another into out (a call per row cost more). */
__attribute__((target("avx512f"))) static void
copy32_avx512(const float *in, size_t ldi, int rows, float *out)
{
    for (int p = 0; p < rows; p++) {
        const float *row = in + (size_t)p * ldi;
        _mm512_storeu_ps(out + (size_t)p * 32, _mm512_loadu_ps(row));
        _mm512_storeu_ps(out + (size_t)p * 32 + 16, _mm512_loadu_ps(row + 16));
    }
}
#endif


/* Its element (j, p), as a float. */
static float
bmat_at(const struct bmat *b, int j, int p)
{
    const size_t at = b->trans ? (size_t)j * (size_t)b->ld + (size_t)p
                               : (size_t)p * (size_t)b->ld + (size_t)j;

    return b->bf16 ? linalg_bf16_float(((const uint16_t *)b->data)[at]) : ((const float *)b->data)[at];
}

/*
 * B (k, n) into the kernel's layout: k in blocks of KC; within a block,
 * panels of nr columns, each holding for every p of the block nr
 * consecutive values (zeros past the last column; a bfloat16 panel's row
 * interleaved, slot16).  trans: B is stored as b[j * ldb + p] (the rows of
 * W in x W^T, or of K in Q K^T); otherwise as b[p * ldb + j].  Writes are
 * contiguous: with p outer, the nr source rows of a panel stay in L1 while
 * they are read across (measured twice as fast as copying one source row
 * at a time).
 */

/* One panel: columns [j0, j0 + w) of rows [p0, p0 + kc) of B, nr wide, at panel. */
static void
panel_f32(const struct bmat *bm, int p0, int kc, int j0, int w, int nr, void *out)
{
    const float *b = bm->data;
    const size_t ldb = (size_t)bm->ld;
    float *panel = out;
    int done = 0;

    if (bm->trans) {
        const float *src = b + (size_t)j0 * ldb + (size_t)p0;
#ifdef LINALG_X86
        if (nr == 32 && w == 32 && cpu_isa() == CPU_AVX512) {
            /* Whole 16 x 16 blocks by vector transposes; the rest below, one by one. */
            done = kc / 16 * 16;
            for (int pb = 0; pb < done; pb += 16)
                for (int jb = 0; jb < 32; jb += 16)
                    transpose16_avx512(src + (size_t)jb * ldb + (size_t)pb, ldb,
                                       panel + (size_t)pb * 32 + (size_t)jb, 32);
        }
#endif
        for (int p = done; p < kc; p++)
            for (int j = 0; j < w; j++)
                panel[(size_t)p * (size_t)nr + (size_t)j] = src[(size_t)j * ldb + (size_t)p];
    } else {
#ifdef LINALG_X86
        if (nr == 32 && w == 32 && cpu_isa() == CPU_AVX512) {
            copy32_avx512(b + (size_t)p0 * ldb + (size_t)j0, ldb, kc, panel);
            done = kc;
        }
#endif
        for (int p = done; p < kc; p++)
            memcpy(panel + (size_t)p * (size_t)nr, b + (size_t)(p0 + p) * ldb + (size_t)j0,
                   (size_t)w * sizeof(float));
    }
    for (int j = w; j < nr; j++)
        for (int p = 0; p < kc; p++)
            panel[(size_t)p * (size_t)nr + (size_t)j] = 0.0f;
}

/* The same for bfloat16: the patterns moved as they are, each row interleaved (slot16). */
static void
panel_bf16(const struct bmat *bm, int p0, int kc, int j0, int w, int nr, void *out)
{
    const uint16_t *b = bm->data;
    const size_t ldb = (size_t)bm->ld;
    uint16_t *panel = out;
    int slot[32];
    int done = 0;

    for (int j = 0; j < nr; j++)
        slot[j] = slot16(j, nr);
    if (bm->trans) {
        const uint16_t *src = b + (size_t)j0 * ldb + (size_t)p0;
#ifdef LINALG_X86
        if (nr == 32 && w == 32 && cpu_isa() == CPU_AVX512) {
            /* Whole blocks of 16 p by vector transposes; the rest below, one by one. */
            done = kc / 16 * 16;
            /* (the rows' next block of k asked for: 32 streams are more than hardware follows) */
            for (int j = 0; j < 32; j++)
                for (int p = 0; p < kc; p += 32)
                    __builtin_prefetch(src + (size_t)j * ldb + (size_t)(kc + p));
            for (int pb = 0; pb < done; pb += 16)
                transpose32x16_bf16_avx512(src + pb, ldb, panel + (size_t)pb * 32);
        }
#endif
        for (int p = done; p < kc; p++)
            for (int j = 0; j < w; j++)
                panel[(size_t)p * (size_t)nr + (size_t)slot[j]] = src[(size_t)j * ldb + (size_t)p];
    } else {
        for (int p = 0; p < kc; p++) {
            const uint16_t *src = b + (size_t)(p0 + p) * ldb + (size_t)j0;
            for (int j = 0; j < w; j++)
                panel[(size_t)p * (size_t)nr + (size_t)slot[j]] = src[j];
        }
    }
    for (int p = 0; p < kc; p++)
        for (int j = w; j < nr; j++)
            panel[(size_t)p * (size_t)nr + (size_t)slot[j]] = 0;
}

/* B into its panels at out, every block of k and every panel of nr columns in it. */
void
linalg_pack_any(int k, int n, int nr, const struct bmat *b, void *out)
{
    const size_t n_pad = (size_t)((n + nr - 1) / nr * nr);
    const size_t esize = b->bf16 ? sizeof(uint16_t) : sizeof(float);

    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        unsigned char *block = (unsigned char *)out + (size_t)p0 * n_pad * esize;
        for (int j0 = 0; j0 < n; j0 += nr) {
            const int w = n - j0 < nr ? n - j0 : nr;
            (b->bf16 ? panel_bf16 : panel_f32)(b, p0, kc, j0, w, nr,
                                               block + (size_t)j0 * (size_t)kc * esize);
        }
    }
}

float
linalg_packed_at(const struct linalg_packed *pk, int j, int p)
{
    if (pk->q != LINALG_QNONE)
        return linalg_q_at(pk, j, p);
    {
    /* Where pack_b put it: p's block of KC, j's panel of nr columns in it, then p, then j. */
    const size_t n_pad = (size_t)((pk->n + pk->nr - 1) / pk->nr * pk->nr);
    const int p0 = p / KC * KC;
    const int kc = pk->k - p0 < KC ? pk->k - p0 : KC;
    const int j0 = j / pk->nr * pk->nr;

    const size_t row = (size_t)p0 * n_pad + (size_t)j0 * (size_t)kc + (size_t)(p - p0) * (size_t)pk->nr;

    return pk->bf16 ? linalg_bf16_float(((const uint16_t *)pk->data)[row + (size_t)slot16(j - j0, pk->nr)])
                    : ((const float *)pk->data)[row + (size_t)(j - j0)];
    }
}

#ifdef LINALG_X86
/*
 * Four rows of A (row stride lda) into columns i .. i + 3 of a panel of mr:
 * four values of p at a time, a 4 x 4 transposition in registers, so that
 * each store writes four consecutive floats (one at a time, every store
 * strided by the panel's width, the packing took 5-7% of a forward).
 */
static void
pack_a_rows4(int kc, int mr, const float *a, size_t lda, float *dst)
{
    int p = 0;

    for (; p + 4 <= kc; p += 4) {
        __m128 x0 = _mm_loadu_ps(a + p);
        __m128 x1 = _mm_loadu_ps(a + lda + p);
        __m128 x2 = _mm_loadu_ps(a + 2 * lda + p);
        __m128 x3 = _mm_loadu_ps(a + 3 * lda + p);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_storeu_ps(dst + (size_t)p * (size_t)mr, x0);
        _mm_storeu_ps(dst + (size_t)(p + 1) * (size_t)mr, x1);
        _mm_storeu_ps(dst + (size_t)(p + 2) * (size_t)mr, x2);
        _mm_storeu_ps(dst + (size_t)(p + 3) * (size_t)mr, x3);
    }
    for (; p < kc; p++)
        for (size_t q = 0; q < 4; q++)
            dst[(size_t)p * (size_t)mr + q] = a[q * lda + (size_t)p];
}
#endif

/* A's block (mc, kc) into panels of mr rows: for each p, mr consecutive values. */
static void
pack_a(int mc, int kc, int mr, const float *a, int lda, float *out)
{
    for (int i0 = 0; i0 < mc; i0 += mr) {
        int h = mc - i0 < mr ? mc - i0 : mr;
        float *dst = out + (size_t)i0 * (size_t)kc;
        int r = 0;
#ifdef LINALG_X86
        for (; r + 4 <= h; r += 4)
            pack_a_rows4(kc, mr, a + (size_t)(i0 + r) * (size_t)lda, (size_t)lda, dst + r);
#endif
        for (; r < h; r++) {
            const float *src = a + (size_t)(i0 + r) * (size_t)lda;
            for (int p = 0; p < kc; p++)
                dst[p * mr + r] = src[p];
        }
        for (int i = h; i < mr; i++)
            for (int p = 0; p < kc; p++)
                dst[p * mr + i] = 0.0f;
    }
}

/* ------------------------------------------------------------------- gemm */

/* The products done one element at a time, when even the workspace fails. */
static void
gemm_plain(int m, int n, int k, const float *a, int lda, const struct bmat *b, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc = fmaf(a[(size_t)i * (size_t)lda + (size_t)p], bmat_at(b, j, p), acc);
            c[(size_t)i * (size_t)ldc + (size_t)j] = acc;
        }
    }
}

/* The last w (< nr) columns of one row, through a tile and a full-size buffer. */
static void
gemm_edge_row(const struct kernel *kn, const struct tiles *tl, int kc, const float *a,
              const void *panel_b, int w, float *pa, float *c, int accumulate)
{
    float edge[12 * 32];

    pack_a(1, kc, kn->mr, a, kc, pa);
    for (int j = 0; j < w; j++)
        edge[j] = accumulate ? c[j] : 0.0f;
    if (tl->tile4 != NULL)
        tl->tile4(kc, pa, panel_b, edge, kn->nr, accumulate);
    else
        tl->tile(kc, pa, panel_b, edge, kn->nr, accumulate);
    memcpy(c, edge, (size_t)w * sizeof *c);
}

/*
 * The mc rows of packed A (pa) against one panel of B, w (<= nr) columns
 * of it, into c: whole tiles in place, an edge through a full-size buffer
 * by the fewest rows that hold it.
 */
static void
panel_tiles(const struct kernel *kn, const struct tiles *tl, int kc, int mc, const float *pa,
            const void *panel_b, int w, float *c, int ldc, int accumulate)
{
    const int mr = kn->mr;
    const int nr = kn->nr;
    float edge[12 * 32];

    for (int ii = 0; ii < mc; ii += mr) {
        const int h = mc - ii < mr ? mc - ii : mr;
        float *ct = c + (size_t)ii * (size_t)ldc;
        const float *panel_a = pa + (size_t)ii * (size_t)kc;
        if (h == mr && w == nr) {
            tl->tile(kc, panel_a, panel_b, ct, ldc, accumulate);
            continue;
        }
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                edge[i * nr + j] = accumulate ? ct[(size_t)i * (size_t)ldc + (size_t)j] : 0.0f;
        if (h <= 4 && tl->tile4 != NULL)
            tl->tile4(kc, panel_a, panel_b, edge, nr, accumulate);
        else if (h <= 8 && tl->tile8 != NULL)
            tl->tile8(kc, panel_a, panel_b, edge, nr, accumulate);
        else
            tl->tile(kc, panel_a, panel_b, edge, nr, accumulate);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                ct[(size_t)i * (size_t)ldc + (size_t)j] = edge[i * nr + j];
    }
}

/*
 * c (m, n) = a (m, k) . B, with B already packed for this kernel (floats or
 * bfloat16, as bf16 says): columns [j_begin, j_begin + n) of a pack
 * pb_width (padded) columns wide (j_begin a multiple of the panel width), c
 * their first column.
 */
static void
gemm_core(const struct kernel *kn, int m, int n, int k, const float *a, int lda, const void *pb,
          bool bf16, size_t pb_width, int j_begin, float *pa, float *c, int ldc)
{
    const int mr = kn->mr;
    const int nr = kn->nr;
    const struct tiles *tl = bf16 ? &kn->bf16 : &kn->f32;
    const size_t esize = bf16 ? sizeof(uint16_t) : sizeof(float);

    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        const int accumulate = p0 > 0;
        const unsigned char *block = (const unsigned char *)pb +
                                     ((size_t)p0 * pb_width + (size_t)j_begin * (size_t)kc) * esize;
        if (m == 1 && tl->row != NULL && n >= nr) {
            /* One row: the whole panels straight from a, the last (partial) one by a tile. */
            const int whole = n / nr;
            tl->row(kc, a + p0, block, whole, c, accumulate);
            if (whole * nr == n)
                continue;
            gemm_edge_row(kn, tl, kc, a + (size_t)p0, block + (size_t)whole * nr * (size_t)kc * esize,
                          n - whole * nr, pa, c + whole * nr, accumulate);
            continue;
        }
        for (int i0 = 0; i0 < m; i0 += MC) {
            const int mc = m - i0 < MC ? m - i0 : MC;
            pack_a(mc, kc, mr, a + (size_t)i0 * (size_t)lda + (size_t)p0, lda, pa);
            for (int j0 = 0; j0 < n; j0 += nr) {
                const void *panel_b = block + (size_t)j0 * (size_t)kc * esize;
                const int w = n - j0 < nr ? n - j0 : nr;
                panel_tiles(kn, tl, kc, mc, pa, panel_b, w,
                            c + (size_t)i0 * (size_t)ldc + (size_t)j0, ldc, accumulate);
            }
        }
    }
}

static void
zero_c(int m, int n, float *c, int ldc)
{
    for (int i = 0; i < m; i++)
        memset(c + (size_t)i * (size_t)ldc, 0, (size_t)n * sizeof(float));
}


/*
 * The block of k gemm_few_rows packs a panel of B for: its panel (FEW_KC x
 * 32 floats, 32 KB) stays in L1, where it is used once by every row at once.
 */
#define FEW_KC 256

/*
 * c = a . B for no more rows than one block of A (m <= MC), B read once in
 * place: A packed whole first (every block of k), then each panel of B
 * packed into L1 a block of k at a time as it is used by every row, so that
 * each of the panel's rows of weights is read from start to end (a prompt
 * of a few tokens reads each weight once: packing the whole of B into
 * memory first and reading it back was twice the traffic).  The same tiles
 * over the same panels, k in the same order, as gemm_core's: the same bits.
 */
static void
gemm_few_rows(const struct kernel *kn, int m, int n, int k, const float *a, int lda,
              const struct bmat *b, float *c, int ldc)
{
    const int nr = kn->nr;
    const int m_pad = (m + kn->mr - 1) / kn->mr * kn->mr;
    const struct tiles *tl = b->bf16 ? &kn->bf16 : &kn->f32;
    const size_t esize = b->bf16 ? sizeof(uint16_t) : sizeof(float);
    const size_t panel_floats = ((size_t)FEW_KC * (size_t)nr * esize + 63) / 64 * 16;
    float *panel = workspace_scratch(workspace_thread(), panel_floats + (size_t)m_pad * (size_t)k);
    float *pa = panel + panel_floats;

    if (panel == NULL) {
        gemm_plain(m, n, k, a, lda, b, c, ldc);
        return;
    }
    /* (block p0 of A at pa + p0 * m_pad: pack_a's layout for each) */
    for (int p0 = 0; p0 < k; p0 += FEW_KC)
        pack_a(m, k - p0 < FEW_KC ? k - p0 : FEW_KC, kn->mr, a + (size_t)p0, lda,
               pa + (size_t)p0 * (size_t)m_pad);
    for (int j0 = 0; j0 < n; j0 += nr) {
        const int w = n - j0 < nr ? n - j0 : nr;
        for (int p0 = 0; p0 < k; p0 += FEW_KC) {
            const int kc = k - p0 < FEW_KC ? k - p0 : FEW_KC;
            const int accumulate = p0 > 0;
            (b->bf16 ? panel_bf16 : panel_f32)(b, p0, kc, j0, w, nr, panel);
            if (m == 1 && tl->row != NULL && w == nr)
                tl->row(kc, a + p0, panel, 1, c + j0, accumulate);
            else
                panel_tiles(kn, tl, kc, m, pa + (size_t)p0 * (size_t)m_pad, panel, w, c + j0, ldc,
                            accumulate);
        }
    }
}

static void
gemm(int m, int n, int k, const float *a, int lda, const struct bmat *b, float *c, int ldc)
{
    const struct kernel *kn = kernel();
    const size_t esize = b->bf16 ? sizeof(uint16_t) : sizeof(float);
    /* B's panels, then A's (rounded to 64 bytes, in floats). */
    const size_t b_floats = (linalg_packed_elems(n, k, kn->nr) * esize + 63) / 64 * 16;
    float *pb;

    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        zero_c(m, n, c, ldc);
        return;
    }
    if (m <= MC) {
        gemm_few_rows(kn, m, n, k, a, lda, b, c, ldc);
        return;
    }
    pb = workspace_scratch(workspace_thread(), b_floats + (size_t)MC * KC);
    if (pb == NULL) {
        gemm_plain(m, n, k, a, lda, b, c, ldc);
        return;
    }
    linalg_pack_any(k, n, kn->nr, b, pb);
    gemm_core(kn, m, n, k, a, lda, pb, b->bf16, (size_t)((n + kn->nr - 1) / kn->nr * kn->nr), 0,
              pb + b_floats, c, ldc);
}


void
linalg_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c,
               int ldc)
{
    const struct bmat bm = { b, false, ldb, 1 };

    gemm(m, n, k, a, lda, &bm, c, ldc);
}

void
linalg_gemm_nn(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c,
               int ldc)
{
    const struct bmat bm = { b, false, ldb, 0 };

    gemm(m, n, k, a, lda, &bm, c, ldc);
}

void
linalg_gemm_bf16(int trans, int m, int n, int k, const float *a, int lda, const uint16_t *b, int ldb,
                 float *c, int ldc)
{
    const struct bmat bm = { b, true, ldb, trans };

    gemm(m, n, k, a, lda, &bm, c, ldc);
}

int
linalg_nr(void)
{
    return kernel()->nr;
}

int
linalg_gemm_packed(int m, const float *a, int lda, const struct linalg_packed *pk, float *c, int ldc)
{
    return linalg_gemm_packed_cols(m, a, lda, pk, 0, pk->n, c, ldc);
}

/*
 * c (m, cols) = a . columns [j0, j0 + cols) of a quantized or half-precision
 * pack: one row straight from the panels; more through the tiles, each
 * panel of B widened into L2 as it is used (Goto's order, as gemm_core's;
 * a panel is widened again for each block of A's rows, a small share of
 * the products it feeds).  The same chains as widening first.
 */
static int
gemm_q(const struct kernel *kn, int m, const float *a, int lda, const struct linalg_packed *pk,
       int j0, int cols, float *c, int ldc)
{
    const int mr = kn->mr, nr = kn->nr, k = pk->k;
    const struct tiles *tl = &kn->f32;
    float *pa, *pb;

    if (m == 1) {
        linalg_q_rows(pk, j0, cols, a, c);
        return 0;
    }
    pa = workspace_scratch(workspace_thread(), (size_t)MC * KC + (size_t)KC * 32);
    if (pa == NULL)
        return -1;
    pb = pa + (size_t)MC * KC;
    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        for (int i0 = 0; i0 < m; i0 += MC) {
            const int mc = m - i0 < MC ? m - i0 : MC;
            pack_a(mc, kc, mr, a + (size_t)i0 * (size_t)lda + (size_t)p0, lda, pa);
            for (int jj = 0; jj < cols; jj += nr) {
                const int w = cols - jj < nr ? cols - jj : nr;
                linalg_q_panel(pk, j0 + jj, nr, p0, kc, pb);
                panel_tiles(kn, tl, kc, mc, pa, pb, w, c + (size_t)i0 * (size_t)ldc + (size_t)jj,
                            ldc, p0 > 0);
            }
        }
    }
    return 0;
}

int
linalg_gemm_packed_cols(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                        int cols, float *c, int ldc)
{
    const struct kernel *kn = kernel();
    float *pa;

    if (pk->data != NULL && pk->q != LINALG_QNONE) {
        if (j0 < 0 || j0 % pk->nr != 0 || cols < 0 || cols > pk->n - j0)
            return -1;
        if (m <= 0 || cols == 0)
            return 0;
        if (pk->int8 && linalg_q_int8_rows(m, a, lda, pk, j0, cols, c, ldc) == 0)
            return 0;
        return gemm_q(kn, m, a, lda, pk, j0, cols, c, ldc);
    }
    if (pk->data == NULL || pk->nr != kn->nr || j0 < 0 || j0 % pk->nr != 0 || cols < 0 ||
        cols > pk->n - j0)
        return -1;
    if (m <= 0 || cols == 0)
        return 0;
    pa = workspace_scratch(workspace_thread(), (size_t)MC * KC);
    if (pa == NULL)
        return -1;
    gemm_core(kn, m, cols, pk->k, a, lda, pk->data, pk->bf16, linalg_packed_elems(pk->n, 1, pk->nr), j0,
              pa, c, ldc);
    return 0;
}

void
linalg_gemm_packed_plain(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                         int cols, float *c, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < cols; j++) {
            float acc = 0.0f;
            for (int p = 0; p < pk->k; p++)
                acc = fmaf(a[(size_t)i * (size_t)lda + (size_t)p], linalg_packed_at(pk, j0 + j, p),
                           acc);
            c[(size_t)i * (size_t)ldc + (size_t)j] = acc;
        }
}
