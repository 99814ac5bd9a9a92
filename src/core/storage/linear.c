/*
 * linear.c: the one seam over a linear's storage (see linear.h): float32,
 * bfloat16 patterns, ggml's quantized blocks or the pack made of them.  How
 * to multiply by it, read one weight, find what is not a number and reach
 * its rows: every caller asks here, none branches on w, w16 or wq
 * (decoder/decoder_pack.c makes and gives back the packs; decoder/weights.c
 * reads what they hold; decoder/model_rows.c makes one from a matrix read).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/workspace.h"
#include "attnscope/storage/linear.h"

/* Whether the int8 arithmetic reads blocks of dtype type (tensor.h). */
bool
decoder_linear_int8_reads(int type)
{
    return type >= TENSOR_Q4_0 && type < TENSOR_DTYPES &&
           linalg_q_int8_reads(quant_panel_format((enum quant_type)(type - TENSOR_Q4_0)));
}

/* l's product in the int8 arithmetic, from its pack or its blocks; 0, or -1 when neither serves. */
static int
apply_int8(const struct decoder_linear *l, const float *x, int n, float *y, int threads)
{
    struct linalg_packed pk = l->packed;

    pk.int8 = true;
    if (parallel_gemm_packed(n, x, l->in, &pk, 0, l->out, y, l->out, threads) == 0)
        return 0;
    return l->wq != NULL
               ? decoder_gemm_quant_int8(l->wq, l->wq_type, n, l->out, l->in, x, y, l->out, threads)
               : -1;
}

void
decoder_linear_apply(const struct decoder_linear *l, const float *x, int n, float *y, int threads)
{
    if ((!l->int8 || apply_int8(l, x, n, y, threads) != 0) &&
        parallel_gemm_packed(n, x, l->in, &l->packed, 0, l->out, y, l->out, threads) != 0) {
        if (l->w != NULL)
            parallel_gemm(l->out_in, n, l->out, l->in, x, l->in, l->w, l->ld, y, l->out, threads);
        else if (l->w16 != NULL)
            parallel_gemm_bf16(l->out_in, n, l->out, l->in, x, l->in, l->w16, l->ld, y, l->out,
                               threads);
        else if (l->wq != NULL) {
            /* (no memory for even 16 widened rows: NaN, seen, rather than other numbers) */
            if (decoder_gemm_quant(l->wq, l->wq_type, n, l->out, l->in, x, y, l->out, threads) != 0)
                for (size_t i = 0; i < (size_t)n * (size_t)l->out; i++)
                    y[i] = NAN;
        } else /* only the pack left, and it cannot serve (another kernel's, no memory) */
            linalg_gemm_packed_plain(n, x, l->in, &l->packed, 0, l->out, y, l->out);
    }
    if (l->b == NULL) /* (the book's qkv_bias=False) */
        return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < l->out; j++)
            y[(size_t)i * (size_t)l->out + (size_t)j] += l->b[j];
}

float
decoder_linear_at(const struct decoder_linear *l, int in, int out)
{
    const size_t at = l->out_in ? (size_t)out * (size_t)l->ld + (size_t)in
                                : (size_t)in * (size_t)l->ld + (size_t)out;

    if (l->w != NULL)
        return l->w[at];
    if (l->w16 != NULL)
        return tensor_bf16_to_f32(l->w16[at]);
    if (l->wq != NULL) {
        /* The block that holds it, widened. */
        size_t per;
        const size_t bytes = tensor_dtype_block((enum tensor_dtype)l->wq_type, &per);
        float block[256];
        tensor_to_f32((enum tensor_dtype)l->wq_type,
                      l->wq + (size_t)out * decoder_quant_row_bytes(l->wq_type, l->in) +
                          (size_t)in / per * bytes,
                      per, block);
        return block[(size_t)in % per];
    }
    return linalg_packed_at(&l->packed, out, in);
}

bool
decoder_linear_block(const struct decoder_linear *l, int out, int *type, float *scale, float *min,
                     int *level, bool *has_min)
{
    if (l->wq_type < TENSOR_Q4_0 || (l->wq == NULL && l->packed.q == LINALG_QNONE))
        return false;
    *type = l->wq_type;
    /* (from the blocks, or once packed from the panels: the same numbers) */
    *has_min = l->wq != NULL
                   ? quant_explain((enum quant_type)(l->wq_type - TENSOR_Q4_0),
                                   l->wq + (size_t)out * decoder_quant_row_bytes(l->wq_type, l->in),
                                   0, scale, min, level)
                   : linalg_q_explain(&l->packed, out, 0, scale, min, level);
    return true;
}

size_t
decoder_quant_row_bytes(int type, int in)
{
    size_t per;
    const size_t bytes = tensor_dtype_block((enum tensor_dtype)type, &per);

    return (size_t)in / per * bytes;
}

void
decoder_quant_rows(const unsigned char *q, int type, int in, int r0, int count, float *out)
{
    tensor_to_f32((enum tensor_dtype)type, q + (size_t)r0 * decoder_quant_row_bytes(type, in),
                  (size_t)count * (size_t)in, out);
}

struct quant_job {
    const unsigned char *q;
    int type, in, r0;
    float *out;
};

static void
widen_rows(void *ctx, int begin, int end)
{
    const struct quant_job *j = ctx;

    decoder_quant_rows(j->q, j->type, j->in, j->r0 + begin, end - begin,
                       j->out + (size_t)begin * (size_t)j->in);
}

struct half_job {
    const uint16_t *b;
    int in, out;
    const float *x;
    float *y;
};

/* Blocks [begin, end) of 16 rows of a half_job (the last may be short). */
static void
half_rows_16(void *ctx, int begin, int end)
{
    const struct half_job *j = ctx;
    const int r0 = begin * 16, r1 = end * 16 < j->out ? end * 16 : j->out;

    linalg_row_f16(r1 - r0, j->in, j->x, j->b + (size_t)r0 * (size_t)j->in, (size_t)j->in,
                   j->y + r0);
}

int
decoder_gemm_quant(const unsigned char *q, int type, int n, int out, int in, const float *x,
                   float *y, int ldy, int threads)
{
    if (n == 1 && type == TENSOR_F16) {
        /* (one row against half precision in place: no copy, the file's bytes read once) */
        struct half_job job = { (const uint16_t *)(const void *)q, in, out, x, y };
        parallel_for((out + 15) / 16, 16L * in, threads, half_rows_16, &job);
        return 0;
    }
    /*
     * Slices of up to 16 MiB of float32: a layer's matrix is most often one
     * slice, so the products pack x once, as for a float32 matrix.
     */
    const size_t most = (size_t)4 << 20;
    int slice = in > 0 && most / (size_t)in >= 16 ? (int)(most / (size_t)in / 16 * 16) : 16;
    struct attn_workspace *ws = workspace_thread();
    float *w;

    if (slice > out)
        slice = (out + 15) / 16 * 16;
    /*
     * The thread's own buffer, kept from call to call (a fresh allocation
     * of megabytes is fresh pages, each cleared by the kernel: a third of a
     * written token); no memory for the slice: 16 rows at a time.
     */
    if ((w = workspace_widened(ws, (size_t)slice * (size_t)in)) == NULL &&
        (w = workspace_widened(ws, (size_t)16 * (size_t)in)) != NULL)
        slice = 16;
    if (w == NULL)
        return -1;
    for (int r0 = 0; r0 < out; r0 += slice) {
        const int rows = out - r0 < slice ? out - r0 : slice;
        struct quant_job job = { q, type, in, r0, w };
        parallel_for(rows, in, threads, widen_rows, &job);
        parallel_gemm(true, n, rows, in, x, in, w, in, y + r0, ldy, threads);
    }
    return 0;
}

bool
decoder_linear_nonfinite(const struct decoder_linear *l, int *row, int *col)
{
    float *widened = NULL;
    bool found = false;

    if (l->wq != NULL && (widened = malloc((size_t)l->in * sizeof *widened)) == NULL)
        return false;
    for (int out = 0; out < l->out && !found; out++) {
        if (widened != NULL)
            decoder_quant_rows(l->wq, l->wq_type, l->in, out, 1, widened);
        for (int in = 0; in < l->in && !found; in++)
            if (!isfinite(widened != NULL ? widened[in] : decoder_linear_at(l, in, out))) {
                *row = out;
                *col = in;
                found = true;
            }
        for (int o = 0; l->b != NULL && out == 0 && o < l->out && !found; o++)
            if (!isfinite(l->b[o])) {
                *row = -1;
                *col = o;
                found = true;
            }
    }
    free(widened);
    return found;
}

const char *
decoder_linear_blocks(const struct decoder_linear *l)
{
    return l->wq != NULL && l->wq_type >= TENSOR_Q4_0 ? tensor_dtype_name((enum tensor_dtype)l->wq_type)
                                                       : NULL;
}


unsigned char *
decoder_linear_rows(const struct decoder_linear *l, size_t *row_bytes)
{
    if (l->w != NULL) {
        *row_bytes = (size_t)l->in * sizeof(float);
        return (unsigned char *)(uintptr_t)l->w;
    }
    if (l->w16 != NULL) {
        *row_bytes = (size_t)l->in * sizeof(uint16_t);
        return (unsigned char *)(uintptr_t)l->w16;
    }
    *row_bytes = decoder_quant_row_bytes(l->wq_type, l->in);
    return (unsigned char *)(uintptr_t)l->wq;
}

int
decoder_gemm_quant_int8(const unsigned char *q, int type, int n, int out, int in, const float *x,
                        float *y, int ldy, int threads)
{
    const size_t row_bytes = decoder_quant_row_bytes(type, in);
    const size_t most = (size_t)4 << 20;
    const enum quant_type qt = (enum quant_type)(type - TENSOR_Q4_0);
    int slice;

    if (!decoder_linear_int8_reads(type) || in <= 0)
        return -1;
    /* (Q4_K and Q6_K a row at a time where they lie, as llama.cpp reads them) */
    if (quant_int8_by_rows(qt))
        return quant_int8_product(qt, q, out, in, n, x, in, y, ldy, threads);
    /* (slices of whole panels, about 4 MiB of blocks each) */
    slice = (int)(most / ((size_t)LINALG_QROWS * row_bytes)) * LINALG_QROWS;
    if (slice < LINALG_QROWS)
        slice = LINALG_QROWS;
    for (int r0 = 0; r0 < out; r0 += slice) {
        const int rows = out - r0 < slice ? out - r0 : slice;
        struct linalg_packed pk;
        int rc;
        if (quant_pack(&pk, qt, q + (size_t)r0 * row_bytes, rows, in, threads) != 0)
            return -1;
        pk.int8 = true;
        rc = parallel_gemm_packed(n, x, in, &pk, 0, rows, y + r0, ldy, threads);
        linalg_packed_destroy(&pk);
        if (rc != 0)
            return -1;
    }
    return 0;
}
