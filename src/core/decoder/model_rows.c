/*
 * model_rows.c: a decoder's linears made from the matrices a file read,
 * its embedding's and its head's rows, the head's logits and the opt-in
 * int8 arithmetic switched on for the model (see decoder_weights.h): what
 * of the storage seam (storage/linear.h) belongs to a whole model.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/weights.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/storage/linear.h"

void
decoder_linear_of(const struct weights_matrix *wm, int in, int from, int out, const float *bias,
                  struct decoder_linear *l)
{
    *l = (struct decoder_linear){
        .w = wm->f != NULL ? wm->f + (size_t)from * (size_t)in : NULL,
        .w16 = wm->h != NULL ? wm->h + (size_t)from * (size_t)in : NULL,
        .wq = wm->q != NULL ? wm->q + (size_t)from * decoder_quant_row_bytes(wm->qtype, in) : NULL,
        .wq_type = wm->qtype,
        .b = bias, .in = in, .out = out, .ld = in, .out_in = true
    };
}

/* ---------------------------------------------- the embedding and the head */

bool
decoder_table_row(const float *f, const uint16_t *h, const unsigned char *q, int qtype, int width,
                  int id, float *row)
{
    const size_t at = (size_t)id * (size_t)width;

    if (f != NULL)
        memcpy(row, f + at, (size_t)width * sizeof *row);
    else if (h != NULL)
        for (int p = 0; p < width; p++)
            row[p] = tensor_bf16_to_f32(h[at + (size_t)p]);
    else if (q != NULL)
        decoder_quant_rows(q, qtype, width, id, 1, row);
    else
        return false;
    return true;
}

void
decoder_token_row(const struct decoder_model *m, int id, float *row)
{
    const int C = m->cfg.d_model;

    if (decoder_table_row(m->tok_embed, m->tok_embed16, m->tok_embedq, m->tok_embedq_type, C, id,
                          row))
        return;
    for (int p = 0; p < C; p++) /* (the output head's pack: token id is its column id) */
        row[p] = linalg_packed_at(&m->head_packed, id, p);
}

void
decoder_head_row(const struct decoder_model *m, int id, float *row)
{
    const int C = m->cfg.d_model;
    const size_t at0 = (size_t)id * (size_t)C;

    if (m->lm_headq != NULL) {
        decoder_quant_rows(m->lm_headq, m->lm_headq_type, C, id, 1, row);
        return;
    }
    for (int p = 0; p < C; p++)
        row[p] = m->lm_head != NULL     ? m->lm_head[at0 + (size_t)p]
                 : m->lm_head16 != NULL ? tensor_bf16_to_f32(m->lm_head16[at0 + (size_t)p])
                                        : linalg_packed_at(&m->head_packed, id, p);
}

int
decoder_use_int8(struct decoder_model *m, int *of)
{
    int put = 0, all = 0;

    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++) {
            struct decoder_linear *lin = decoder_block_linear(&m->blocks[l], i);
            if (lin == NULL || lin->out == 0)
                continue;
            all++;
            lin->int8 = decoder_linear_int8_reads(lin->wq_type) && (lin->wq != NULL || lin->packed.data != NULL);
            put += lin->int8;
        }
    all++;
    m->head_int8 = decoder_linear_int8_reads(m->lm_headq_type) && (m->lm_headq != NULL || m->head_packed.data != NULL);
    put += m->head_int8;
    *of = all;
    return put;
}


/* Logits v0 .. v0 + vb of n rows of x through a quantized head (NaN when memory runs out). */
static void
head_quant(const struct decoder_model *m, int n, int v0, int vb, const float *x, float *logits,
           int threads)
{
    const int C = m->cfg.d_model;

    if (decoder_gemm_quant(m->lm_headq + (size_t)v0 * decoder_quant_row_bytes(m->lm_headq_type, C),
                           m->lm_headq_type, n, vb, C, x, logits, vb, threads) != 0)
        for (size_t i = 0; i < (size_t)n * (size_t)vb; i++)
            logits[i] = NAN;
}

void
decoder_head_logits(const struct decoder_model *m, const float *x, int n, int v0, int vb,
                    float *logits, int threads)
{
    const int C = m->cfg.d_model;

    if (m->head_int8) {
        struct linalg_packed pk = m->head_packed;
        pk.int8 = true;
        if (parallel_gemm_packed(n, x, C, &pk, v0, vb, logits, vb, threads) == 0)
            return;
        /* (from the blocks: each logit a function of its own row alone, wherever a slice starts) */
        if (m->lm_headq != NULL &&
            decoder_gemm_quant_int8(m->lm_headq + (size_t)v0 * decoder_quant_row_bytes(m->lm_headq_type, C),
                                    m->lm_headq_type, n, vb, C, x, logits, vb, threads) == 0)
            return;
    }
    if (parallel_gemm_packed(n, x, C, &m->head_packed, v0, vb, logits, vb, threads) == 0)
        return;
    if (m->lm_head != NULL)
        parallel_gemm(true, n, vb, C, x, C, m->lm_head + (size_t)v0 * C, C, logits, vb, threads);
    else if (m->lm_head16 != NULL)
        parallel_gemm_bf16(true, n, vb, C, x, C, m->lm_head16 + (size_t)v0 * C, C, logits, vb,
                           threads);
    else if (m->lm_headq != NULL)
        head_quant(m, n, v0, vb, x, logits, threads);
    else /* only the pack left (decoder_release_unpacked), and it cannot serve */
        linalg_gemm_packed_plain(n, x, C, &m->head_packed, v0, vb, logits, vb);
}
