/*
 * parts.h: the renderer's half of a decoder's parts (decoder/parts.h is the
 * core's): each part explains its own stages, a text for the stage and an
 * inspector for a cell, named after the stage's row of VIEW_STAGE_LIST
 * (explain.c's and inspect.c's tables take them by those names).  A new
 * part (RMSNorm, rotary positions, a gated MLP) adds a file here and its
 * stages' rows.  What the inspectors share with inspect.c is below.
 */
#ifndef ATTNSCOPE_RENDER_PARTS_H
#define ATTNSCOPE_RENDER_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/pipeline/pipeline.h"

/* The inspector's text being made: its buffer, and how a product is written ("x" or "*"). */
struct out {
    char *buf;
    size_t size;
    size_t len;
    const char *times;
};

/* Appends to the inspector's text. */
#define emit(o, ...) attn_appendf((o)->buf, (o)->size, &(o)->len, __VA_ARGS__)

/* Where the inspected cell is. */
struct cell_at {
    const struct pipeline *p;
    int head;
    int row;
    int col;
    bool mask_matrix;
    int max_terms;
};

/* A number as the inspector shows it, into buf (24 bytes): 4 decimals, or 4 significant digits. */
const char *inspect_num(char *buf, float v);
/* Spells out sum_k a[k] * b[k] (strided), eliding past max_terms. */
void inspect_products(struct out *o, const float *a, int sa, const float *b, int sb, int n,
                      int max_terms);
/* Spells out sum_k a[k] * W[k][col] over a model's linear l (decoder_linear_at), as above. */
void inspect_linear(struct out *o, const float *a, const struct decoder_linear *l, int col,
                    int max_terms);
/* " + bias b[col]" and the line's end, or the end alone when l has no bias (Llama's). */
void inspect_bias(struct out *o, const struct decoder_linear *l, int col);
/* The labels of query (row) i and key (column) j. */
const char *inspect_token(const struct pipeline *p, int i);
const char *inspect_key(const struct pipeline *p, int j);
/* The uniform number behind dropout's decision e (weights or output), and the decision. */
void inspect_draw(struct out *o, const struct pipeline *p, size_t e);
/* The decoder block of the layer shown (a model's). */
const struct decoder_block *inspect_block_of(const struct pipeline *p);
/* What the shown model's files call role's tensor ("ln_f", "norm", "final_norm"). */
const char *inspect_part(const struct pipeline *p, enum arch_role role);

/* norm.c: the norms, and what other screens say of them */
/* Whether the model's norms are RMSNorm (Llama's), not LayerNorm (GPT-2's). */
bool norm_is_rms(const struct pipeline *p);
/* The last norm as a sentence names it: "the final norm" (RMSNorm models) or "ln_f". */
const char *norm_final_said(const struct pipeline *p);
void text_ln1(const struct pipeline *p, char *buf, size_t size);
void text_ln2(const struct pipeline *p, char *buf, size_t size);
void text_final(const struct pipeline *p, char *buf, size_t size);
void inspect_ln1(struct out *o, const struct cell_at *at);
void inspect_ln2(struct out *o, const struct cell_at *at);
void inspect_final(struct out *o, const struct cell_at *at);
void text_outnorm(const struct pipeline *p, char *buf, size_t size);
void text_mlpnorm(const struct pipeline *p, char *buf, size_t size);
void inspect_outnorm(struct out *o, const struct cell_at *at);
void inspect_mlpnorm(struct out *o, const struct cell_at *at);

/*
 * softcap.c: the cap on the scaled scores (Gemma 2's), said once for every
 * output.  Each returns false (or writes "") on a model without one.
 */
double softcap_of(const struct pipeline *p);
bool softcap_formula(const struct pipeline *p, const struct pipeline_scaling *sc, char *buf,
                     size_t size);
bool softcap_text(const struct pipeline *p, char *buf, size_t size);
/* The scaled cell (row, col) of at: masked's value divided, then capped into scaled. */
bool softcap_inspect(struct out *o, const struct cell_at *at, float masked, float scaled);
/* ", then capped at CAP (attn_logit_softcapping)" for --print's header, or "". */
const char *softcap_print(const struct pipeline *p, char *buf, size_t size);

/*
 * sinks.c: learned attention sinks (gpt-oss's), said once for every output.
 * Each returns false (0, nothing written) on a model without them.
 */
bool sinks_shown(const struct pipeline *p);
/* The part of query row i's softmax head's sink took in the shown layer. */
float sinks_share(const struct pipeline *p, int head, int i);
bool sinks_formula(const struct pipeline *p, char *buf, size_t size);
bool sinks_text(const struct pipeline *p, char *buf, size_t size);
/* A weight's arithmetic (its row's max and sum of exponentials over the keys) with the sink. */
bool sinks_inspect(struct out *o, const struct cell_at *at, double max, double sum, float score);
/* The columns the sink's column beside a head's weights takes, drawn from x (w columns). */
#define SINKS_MARGIN 7
int sinks_margin_width(const struct pipeline *p);
struct grid;
struct heatmap_geometry;
void sinks_draw_margin(struct grid *g, const struct pipeline *p, int head,
                       const struct heatmap_geometry *geo, int x, int w);

/* moe.c: a mixture of experts (a sparse layer's router, its MLP the experts' sum) */
bool moe_shown(const struct pipeline *p);
void text_router(const struct pipeline *p, char *buf, size_t size);
/* "Load (tokens sent): e2 7, e5 6 ...; 2 experts none." appended: each expert's tokens. */
void moe_load_text(const struct pipeline *p, char *buf, size_t size, size_t *len);
void inspect_router(struct out *o, const struct cell_at *at);
/* The shared expert's stage: its gated output for every token. */
void text_shared(const struct pipeline *p, char *buf, size_t size);
void inspect_shared(struct out *o, const struct cell_at *at);
/* The MLP stage of a sparse layer (false, nothing written, on a dense one). */
bool moe_text_mlp(const struct pipeline *p, char *buf, size_t size);
bool moe_inspect_mlp(struct out *o, const struct cell_at *at);

/* residual.c */
/* rope.c: QK-norm and rotary positions. */
void text_qnorm(const struct pipeline *p, char *buf, size_t size);
void text_knorm(const struct pipeline *p, char *buf, size_t size);
void text_qrope(const struct pipeline *p, char *buf, size_t size);
void text_krope(const struct pipeline *p, char *buf, size_t size);
void inspect_qnorm(struct out *o, const struct cell_at *at);
void inspect_knorm(struct out *o, const struct cell_at *at);
void inspect_qrope(struct out *o, const struct cell_at *at);
void inspect_krope(struct out *o, const struct cell_at *at);
/* The RMS norm of a row at one cell (norm.c): the root mean square, then the scale. */
void inspect_rms_cell(struct out *o, const struct cell_at *at, const char *name, const char *from,
                      const float *x, int c, const float *g, float eps, int j, float got);

void text_residual1(const struct pipeline *p, char *buf, size_t size);
void text_residual2(const struct pipeline *p, char *buf, size_t size);
void inspect_residual1(struct out *o, const struct cell_at *at);
void inspect_residual2(struct out *o, const struct cell_at *at);

/* attention.c: softmax attention's n x n stages (scores, mask, scaling, weights, dropout) */
void formula_scores(const struct pipeline *p, char *buf, size_t size);
void formula_mask(const struct pipeline *p, char *buf, size_t size);
void formula_scaled(const struct pipeline *p, char *buf, size_t size);
void formula_weights(const struct pipeline *p, char *buf, size_t size);
void formula_dropout(const struct pipeline *p, char *buf, size_t size);
void text_scores(const struct pipeline *p, char *buf, size_t size);
void text_mask(const struct pipeline *p, char *buf, size_t size);
void text_scaled(const struct pipeline *p, char *buf, size_t size);
void text_weights(const struct pipeline *p, char *buf, size_t size);
void text_dropout(const struct pipeline *p, char *buf, size_t size);
void inspect_scores(struct out *o, const struct cell_at *at);
void inspect_mask(struct out *o, const struct cell_at *at);
void inspect_scaled(struct out *o, const struct cell_at *at);
void inspect_weights(struct out *o, const struct cell_at *at);
void inspect_dropout(struct out *o, const struct cell_at *at);

/* cache.c: the KV cache stage (its formula too: what a ring keeps) */
void formula_cache(const struct pipeline *p, char *buf, size_t size);
void text_cache(const struct pipeline *p, char *buf, size_t size);
void inspect_cache(struct out *o, const struct cell_at *at);
/* mlp.c */
void text_gate(const struct pipeline *p, char *buf, size_t size);
void text_swiglu(const struct pipeline *p, char *buf, size_t size);
void inspect_gate(struct out *o, const struct cell_at *at);
void inspect_swiglu(struct out *o, const struct cell_at *at);
void text_geglu(const struct pipeline *p, char *buf, size_t size);
void inspect_geglu(struct out *o, const struct cell_at *at);
void text_fc(const struct pipeline *p, char *buf, size_t size);
void text_gelu(const struct pipeline *p, char *buf, size_t size);
void text_mlp(const struct pipeline *p, char *buf, size_t size);
void inspect_fc(struct out *o, const struct cell_at *at);
void inspect_gelu(struct out *o, const struct cell_at *at);
void inspect_mlp(struct out *o, const struct cell_at *at);

/* deltanet.c: Gated DeltaNet's stages, and the output gate of its full-attention layers */
void text_attn_gate(const struct pipeline *p, char *buf, size_t size);
void inspect_attn_gate(struct out *o, const struct cell_at *at);
void text_gated(const struct pipeline *p, char *buf, size_t size);
void inspect_gated(struct out *o, const struct cell_at *at);
void text_delta_qkv(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_qkv(struct out *o, const struct cell_at *at);
void text_delta_conv(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_conv(struct out *o, const struct cell_at *at);
void text_delta_q(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_q(struct out *o, const struct cell_at *at);
void text_delta_k(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_k(struct out *o, const struct cell_at *at);
void text_beta(const struct pipeline *p, char *buf, size_t size);
void inspect_beta(struct out *o, const struct cell_at *at);
void text_decay(const struct pipeline *p, char *buf, size_t size);
void inspect_decay(struct out *o, const struct cell_at *at);
void text_effective(const struct pipeline *p, char *buf, size_t size);
void inspect_effective(struct out *o, const struct cell_at *at);
void text_delta_read(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_read(struct out *o, const struct cell_at *at);
void text_delta_normed(const struct pipeline *p, char *buf, size_t size);
void inspect_delta_normed(struct out *o, const struct cell_at *at);

#endif
