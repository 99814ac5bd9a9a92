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
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/workspace.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LINALG_X86 1
#endif

/* k is walked in blocks of KC so that a packed panel of B stays in L1. */
#define KC 256
/* Rows of A packed at once (a multiple of every MR), kept in L2. */
#define MC 96


struct kernel {
    int mr;
    int nr;
    /* c (mr, nr, row stride ldc) = c (when accumulate) + pa (kc, mr) . pb (kc, nr) */
    void (*tile)(int kc, const float *pa, const float *pb, float *c, int ldc, int accumulate);
    /* The same for the first 4 and the first 8 rows of a panel (NULL: tile, every row). */
    void (*tile4)(int kc, const float *pa, const float *pb, float *c, int ldc, int accumulate);
    void (*tile8)(int kc, const float *pa, const float *pb, float *c, int ldc, int accumulate);
};

/* --------------------------------------------------------------- portable */

static void
tile_portable(int kc, const float *pa, const float *pb, float *c, int ldc, int accumulate)
{
    float acc[4][4];

    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = accumulate ? c[i * ldc + j] : 0.0f;
    for (int p = 0; p < kc; p++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                acc[i][j] = fmaf(pa[p * 4 + i], pb[p * 4 + j], acc[i][j]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            c[i * ldc + j] = acc[i][j];
}

#ifdef LINALG_X86
/* ------------------------------------------------------------------ AVX2 */

__attribute__((target("avx2,fma"))) static void
tile_avx2(int kc, const float *pa, const float *pb, float *c, int ldc, int accumulate)
{
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;

    if (accumulate) {
        c00 = _mm256_loadu_ps(c + 0 * ldc), c01 = _mm256_loadu_ps(c + 0 * ldc + 8);
        c10 = _mm256_loadu_ps(c + 1 * ldc), c11 = _mm256_loadu_ps(c + 1 * ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    } else {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    }
    for (int p = 0; p < kc; p++) {
        const __m256 b0 = _mm256_loadu_ps(pb + p * 16);
        const __m256 b1 = _mm256_loadu_ps(pb + p * 16 + 8);
        const float *a = pa + p * 6;
        __m256 ai;
        ai = _mm256_broadcast_ss(a + 0), c00 = _mm256_fmadd_ps(ai, b0, c00), c01 = _mm256_fmadd_ps(ai, b1, c01);
        ai = _mm256_broadcast_ss(a + 1), c10 = _mm256_fmadd_ps(ai, b0, c10), c11 = _mm256_fmadd_ps(ai, b1, c11);
        ai = _mm256_broadcast_ss(a + 2), c20 = _mm256_fmadd_ps(ai, b0, c20), c21 = _mm256_fmadd_ps(ai, b1, c21);
        ai = _mm256_broadcast_ss(a + 3), c30 = _mm256_fmadd_ps(ai, b0, c30), c31 = _mm256_fmadd_ps(ai, b1, c31);
        ai = _mm256_broadcast_ss(a + 4), c40 = _mm256_fmadd_ps(ai, b0, c40), c41 = _mm256_fmadd_ps(ai, b1, c41);
        ai = _mm256_broadcast_ss(a + 5), c50 = _mm256_fmadd_ps(ai, b0, c50), c51 = _mm256_fmadd_ps(ai, b1, c51);
    }
    _mm256_storeu_ps(c + 0 * ldc, c00), _mm256_storeu_ps(c + 0 * ldc + 8, c01);
    _mm256_storeu_ps(c + 1 * ldc, c10), _mm256_storeu_ps(c + 1 * ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

/* ---------------------------------------------------------------- AVX-512 */

#define ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ROWS4(X) X(0) X(1) X(2) X(3)

/*
 * c (R, 32) = c (when accumulate) + pa (kc, R of a 12-row panel) . pb (kc,
 * 32): the 12-row tile, and the 8- and 4-row tiles that finish a product
 * whose rows are not a multiple of 12 (16 rows: 12 + 4 computed, not 12 +
 * 12).  They read the same packed panels (12 wide, zero past the rows);
 * each element is the same chain of FMAs in order of k.
 */
#define TILE_AVX512(NAME, ROWS)                                                                   \
    __attribute__((target("avx512f"))) static void NAME(int kc, const float *pa, const float *pb, \
                                                        float *c, int ldc, int accumulate)         \
    {                                                                                             \
        ROWS(DECLARE)                                                                             \
        if (accumulate) {                                                                         \
            ROWS(LOAD)                                                                            \
        } else {                                                                                  \
            ROWS(ZERO)                                                                            \
        }                                                                                         \
        for (int p = 0; p < kc; p++) {                                                            \
            const __m512 b0 = _mm512_loadu_ps(pb + p * 32);                                       \
            const __m512 b1 = _mm512_loadu_ps(pb + p * 32 + 16);                                  \
            const float *a = pa + p * 12;                                                         \
            __m512 ai;                                                                            \
            ROWS(STEP)                                                                            \
        }                                                                                         \
        ROWS(STORE)                                                                               \
    }
#define DECLARE(i) __m512 c##i##0, c##i##1;
#define LOAD(i) c##i##0 = _mm512_loadu_ps(c + i * ldc), c##i##1 = _mm512_loadu_ps(c + i * ldc + 16);
#define ZERO(i) c##i##0 = c##i##1 = _mm512_setzero_ps();
#define STEP(i)                                                                                   \
    ai = _mm512_set1_ps(a[i]), c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0),                        \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
#define STORE(i) _mm512_storeu_ps(c + i * ldc, c##i##0), _mm512_storeu_ps(c + i * ldc + 16, c##i##1);
TILE_AVX512(tile_avx512, ROWS12)
TILE_AVX512(tile8_avx512, ROWS8)
TILE_AVX512(tile4_avx512, ROWS4)
#undef DECLARE
#undef LOAD
#undef ZERO
#undef STEP
#undef STORE
#endif

static const struct kernel kernels[] = {
    [CPU_PORTABLE] = { 4, 4, tile_portable, NULL, NULL },
#ifdef LINALG_X86
    [CPU_AVX2] = { 6, 16, tile_avx2, NULL, NULL },
    [CPU_AVX512] = { 12, 32, tile_avx512, tile4_avx512, tile8_avx512 },
#endif
};

static const struct kernel *
kernel(void)
{
    return &kernels[cpu_isa()];
}

/* ---------------------------------------------------------------- packing */

#ifdef LINALG_X86
/*
 * out[q * ldo + i] = in[i * ldi + q] for a 16 x 16 block: pairs of rows
 * interleaved, then pairs of pairs, then the 128-bit lanes exchanged twice.
 * Only moves numbers, so packing this way gives the products the same bits.
 */
__attribute__((target("avx512f"))) static void
transpose16_avx512(const float *in, size_t ldi, float *out, size_t ldo)
{
    __m512 r[16];
    __m512 t[16];

    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(in + (size_t)i * ldi);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
    for (int i = 0; i < 16; i++)
        _mm512_storeu_ps(out + (size_t)i * ldo, r[i]);
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

/*
 * B (k, n) into the kernel's layout: k in blocks of KC; within a block,
 * panels of nr columns, each holding for every p of the block nr
 * consecutive values (zeros past the last column).  trans: B is stored as
 * b[j * ldb + p] (the rows of W in x W^T, or of K in Q K^T); otherwise as
 * b[p * ldb + j].  Writes are contiguous: with p outer, the nr source
 * rows of a panel stay in L1 while they are read across (measured twice as
 * fast as copying one source row at a time).
 */
static void
pack_b(int k, int n, int nr, const float *b, int ldb, int trans, float *out)
{
    const size_t n_pad = (size_t)((n + nr - 1) / nr * nr);

    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        float *block = out + (size_t)p0 * n_pad;
        for (int j0 = 0; j0 < n; j0 += nr) {
            const int w = n - j0 < nr ? n - j0 : nr;
            float *panel = block + (size_t)j0 * (size_t)kc;
            if (trans) {
                const float *src = b + (size_t)j0 * (size_t)ldb + (size_t)p0;
                int done = 0;
#ifdef LINALG_X86
                if (nr == 32 && w == 32 && cpu_isa() == CPU_AVX512) {
                    /* Whole 16 x 16 blocks by vector transposes; the rest below, one by one. */
                    done = kc / 16 * 16;
                    for (int pb = 0; pb < done; pb += 16)
                        for (int jb = 0; jb < 32; jb += 16)
                            transpose16_avx512(src + (size_t)jb * (size_t)ldb + (size_t)pb,
                                               (size_t)ldb, panel + (size_t)pb * 32 + (size_t)jb,
                                               32);
                }
#endif
                for (int p = done; p < kc; p++)
                    for (int j = 0; j < w; j++)
                        panel[(size_t)p * (size_t)nr + (size_t)j] = src[(size_t)j * (size_t)ldb + (size_t)p];
            } else {
                int done = 0;
#ifdef LINALG_X86
                if (nr == 32 && w == 32 && cpu_isa() == CPU_AVX512) {
                    copy32_avx512(b + (size_t)p0 * (size_t)ldb + (size_t)j0, (size_t)ldb, kc, panel);
                    done = kc;
                }
#endif
                for (int p = done; p < kc; p++)
                    memcpy(panel + (size_t)p * (size_t)nr,
                           b + (size_t)(p0 + p) * (size_t)ldb + (size_t)j0, (size_t)w * sizeof(float));
            }
            for (int j = w; j < nr; j++)
                for (int p = 0; p < kc; p++)
                    panel[(size_t)p * (size_t)nr + (size_t)j] = 0.0f;
        }
    }
}

float
linalg_packed_at(const struct linalg_packed *pk, int j, int p)
{
    /* Where pack_b put it: p's block of KC, j's panel of nr columns in it, then p, then j. */
    const size_t n_pad = (size_t)((pk->n + pk->nr - 1) / pk->nr * pk->nr);
    const int p0 = p / KC * KC;
    const int kc = pk->k - p0 < KC ? pk->k - p0 : KC;
    const int j0 = j / pk->nr * pk->nr;

    return pk->data[(size_t)p0 * n_pad + (size_t)j0 * (size_t)kc + (size_t)(p - p0) * (size_t)pk->nr +
                    (size_t)(j - j0)];
}

/* A's block (mc, kc) into panels of mr rows: for each p, mr consecutive values. */
static void
pack_a(int mc, int kc, int mr, const float *a, int lda, float *out)
{
    for (int i0 = 0; i0 < mc; i0 += mr) {
        int h = mc - i0 < mr ? mc - i0 : mr;
        float *dst = out + (size_t)i0 * (size_t)kc;
        for (int i = 0; i < h; i++) {
            const float *src = a + (size_t)(i0 + i) * (size_t)lda;
            for (int p = 0; p < kc; p++)
                dst[p * mr + i] = src[p];
        }
        for (int i = h; i < mr; i++)
            for (int p = 0; p < kc; p++)
                dst[p * mr + i] = 0.0f;
    }
}

/* ------------------------------------------------------------------- gemm */

/* The products done one element at a time, when even the workspace fails. */
static void
gemm_plain(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans,
           float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++) {
                float bv = trans ? b[(size_t)j * (size_t)ldb + (size_t)p]
                                 : b[(size_t)p * (size_t)ldb + (size_t)j];
                acc = fmaf(a[(size_t)i * (size_t)lda + (size_t)p], bv, acc);
            }
            c[(size_t)i * (size_t)ldc + (size_t)j] = acc;
        }
    }
}

/*
 * c (m, n) = a (m, k) . B, with B already packed by pack_b for this kernel:
 * columns [j_begin, j_begin + n) of a pack pb_width (padded) columns wide
 * (j_begin a multiple of the panel width), c their first column.
 */
static void
gemm_core(const struct kernel *kn, int m, int n, int k, const float *a, int lda, const float *pb,
          size_t pb_width, int j_begin, float *pa, float *c, int ldc)
{
    const int mr = kn->mr;
    const int nr = kn->nr;
    float edge[12 * 32];

    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        const int accumulate = p0 > 0;
        const float *block = pb + (size_t)p0 * pb_width + (size_t)j_begin * (size_t)kc;
        for (int i0 = 0; i0 < m; i0 += MC) {
            const int mc = m - i0 < MC ? m - i0 : MC;
            pack_a(mc, kc, mr, a + (size_t)i0 * (size_t)lda + (size_t)p0, lda, pa);
            for (int j0 = 0; j0 < n; j0 += nr) {
                const float *panel_b = block + (size_t)j0 * (size_t)kc;
                const int w = n - j0 < nr ? n - j0 : nr;
                for (int ii = 0; ii < mc; ii += mr) {
                    const int h = mc - ii < mr ? mc - ii : mr;
                    float *ct = c + (size_t)(i0 + ii) * (size_t)ldc + (size_t)j0;
                    const float *panel_a = pa + (size_t)ii * (size_t)kc;
                    if (h == mr && w == nr) {
                        kn->tile(kc, panel_a, panel_b, ct, ldc, accumulate);
                        continue;
                    }
                    /* An edge tile goes through a full-size buffer, by the fewest rows that hold it. */
                    for (int i = 0; i < h; i++)
                        for (int j = 0; j < w; j++)
                            edge[i * nr + j] = accumulate ? ct[(size_t)i * (size_t)ldc + (size_t)j] : 0.0f;
                    if (h <= 4 && kn->tile4 != NULL)
                        kn->tile4(kc, panel_a, panel_b, edge, nr, accumulate);
                    else if (h <= 8 && kn->tile8 != NULL)
                        kn->tile8(kc, panel_a, panel_b, edge, nr, accumulate);
                    else
                        kn->tile(kc, panel_a, panel_b, edge, nr, accumulate);
                    for (int i = 0; i < h; i++)
                        for (int j = 0; j < w; j++)
                            ct[(size_t)i * (size_t)ldc + (size_t)j] = edge[i * nr + j];
                }
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

static size_t
packed_floats(int n, int k, int nr)
{
    return (size_t)k * (size_t)((n + nr - 1) / nr * nr);
}

static void
gemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans, float *c,
     int ldc)
{
    const struct kernel *kn = kernel();
    const size_t b_floats = packed_floats(n, k, kn->nr);
    float *pb;

    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        zero_c(m, n, c, ldc);
        return;
    }
    pb = workspace_scratch(workspace_thread(), b_floats + (size_t)MC * KC);
    if (pb == NULL) {
        gemm_plain(m, n, k, a, lda, b, ldb, trans, c, ldc);
        return;
    }
    pack_b(k, n, kn->nr, b, ldb, trans, pb);
    gemm_core(kn, m, n, k, a, lda, pb, (size_t)((n + kn->nr - 1) / kn->nr * kn->nr), 0,
              pb + b_floats, c, ldc);
}

void
linalg_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c,
               int ldc)
{
    gemm(m, n, k, a, lda, b, ldb, 1, c, ldc);
}

void
linalg_gemm_nn(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c,
               int ldc)
{
    gemm(m, n, k, a, lda, b, ldb, 0, c, ldc);
}

int
linalg_pack(struct linalg_packed *pk, int n, int k, const float *b, int ldb, int trans)
{
    const struct kernel *kn = kernel();

    memset(pk, 0, sizeof *pk);
    if (n <= 0 || k <= 0)
        return 0;
    pk->data = malloc(packed_floats(n, k, kn->nr) * sizeof(float));
    if (pk->data == NULL)
        return -1;
    pk->n = n;
    pk->k = k;
    pk->nr = kn->nr;
    pack_b(k, n, kn->nr, b, ldb, trans, pk->data);
    return 0;
}

size_t
linalg_pack_floats(int n, int k)
{
    return n <= 0 || k <= 0 ? 0 : packed_floats(n, k, kernel()->nr);
}

void
linalg_packed_destroy(struct linalg_packed *pk)
{
    free(pk->data);
    memset(pk, 0, sizeof *pk);
}

int
linalg_gemm_packed(int m, const float *a, int lda, const struct linalg_packed *pk, float *c, int ldc)
{
    const struct kernel *kn = kernel();
    float *pa;

    if (pk->data == NULL || pk->nr != kn->nr)
        return -1;
    if (m <= 0)
        return 0;
    pa = workspace_scratch(workspace_thread(), (size_t)MC * KC);
    if (pa == NULL)
        return -1;
    gemm_core(kn, m, pk->n, pk->k, a, lda, pk->data, packed_floats(pk->n, 1, pk->nr), 0, pa, c,
              ldc);
    return 0;
}

int
linalg_gemm_packed_cols(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                        int cols, float *c, int ldc)
{
    const struct kernel *kn = kernel();
    float *pa;

    if (pk->data == NULL || pk->nr != kn->nr || j0 < 0 || j0 % pk->nr != 0 || cols < 0 ||
        cols > pk->n - j0)
        return -1;
    if (m <= 0 || cols == 0)
        return 0;
    pa = workspace_scratch(workspace_thread(), (size_t)MC * KC);
    if (pa == NULL)
        return -1;
    gemm_core(kn, m, cols, pk->k, a, lda, pk->data, packed_floats(pk->n, 1, pk->nr), j0, pa, c,
              ldc);
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
