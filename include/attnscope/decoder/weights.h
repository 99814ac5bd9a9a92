/*
 * weights.h: reading a decoder's weights from its files into memory of the
 * model's own, whatever the family: the tensors found by name (after a
 * layout's prefix), every shape checked against what the sizes say (the
 * message names the file, the tensor, its shape and the one wanted), each
 * read once as float32 (converted exactly from F16 and BF16), or a
 * bfloat16 model's matrices kept bfloat16 (keep_bf16), into one mapping of
 * the model's, marked for huge pages.  A family's loader
 * (architectures/architecture.c, walking an architecture's table) says which
 * names and shapes; this reads them.
 */
#ifndef ATTNSCOPE_DECODER_WEIGHTS_H
#define ATTNSCOPE_DECODER_WEIGHTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/formats/tensors.h"

struct weights_loader {
    struct decoder_model *m;
    struct tensor_source src;
    char prefix[32];        /* put before every name looked for ("transformer.", or "") */
    const char *sizes_from; /* what the shapes are checked against, for messages ("config.json") */
    json_t *read;           /* name -> where in the model's memory (a tensor read for several
                               views, GPT-2's c_attn, is read once) */
    bool map;               /* tensors the files hold as kept are read in place (tensors_map;
                               ATTNSCOPE_MMAP=0 copies them) */
    bool keep_quant;        /* quantized matrices read by weights_matrix_any stay quantized */
    bool keep_bf16;         /* bfloat16 matrices read by weights_matrix_kept and weights_linear
                               stay bfloat16 (half the memory; the kernels widen them exactly) */
};

/*
 * Opens the weights at path (a folder or a file: tensors_open) for m,
 * naming their source and format in m; nothing reserved yet.
 */
enum attn_status weights_open(struct weights_loader *ld, struct decoder_model *m, const char *path,
                              struct attn_error *err);

/*
 * The model's memory, once m->cfg is known: one mapping as large as every
 * tensor of the files as float32 (what a model does not read is never
 * touched: address space only), and its list of n_layer blocks.
 */
enum attn_status weights_reserve(struct weights_loader *ld, struct attn_error *err);

/* The tensor name (after the prefix), or NULL. */
const struct tensor_info *weights_find(const struct weights_loader *ld, const char *name);

/* The size of dimension d of tensor name (after the prefix), or -1. */
int64_t weights_dim(const struct weights_loader *ld, const char *name, int d);

/*
 * How many blocks the file has, counted by the tensor each has (format:
 * its name with %d for the block's number, after the prefix), below hi:
 * real files number them from 0 without gaps, so a binary search finds the
 * first missing one (16,000 layers cost 14 lookups).
 */
int weights_count_blocks(const struct weights_loader *ld, const char *format, int hi);

/* The tensor name (after the prefix), of the given shape, as float32; NULL with err set. */
const float *weights_tensor(struct weights_loader *ld, const char *name, int ndim,
                            const int64_t *shape, struct attn_error *err);
/* A vector of n floats. */
const float *weights_vector(struct weights_loader *ld, const char *name, int n,
                            struct attn_error *err);
/* A matrix of rows x cols floats (after a leading 1 when one_first: OpenAI's Conv1D). */
const float *weights_matrix(struct weights_loader *ld, const char *name, bool one_first, int rows,
                            int cols, struct attn_error *err);

/*
 * An nn.Linear's weight NAME.weight (out, in) and, when has_bias, its bias
 * NAME.bias into l (y = x W^T + b); -1 with err set.
 */
int weights_linear(struct weights_loader *ld, struct decoder_linear *l, const char *name, int in,
                   int out, bool has_bias, struct attn_error *err);

/*
 * A matrix of rows x cols as the model keeps it: into *h as bfloat16
 * patterns when the loader keeps them and the file has them, else into *f
 * as float32 (the other NULL).  Returns 0, or -1 with err set.
 */
int weights_matrix_kept(struct weights_loader *ld, const char *name, int rows, int cols,
                        const float **f, const uint16_t **h, struct attn_error *err);

/* A matrix as the model keeps it: one of float32, bfloat16 patterns or quantized blocks. */
struct weights_matrix {
    const float *f;
    const uint16_t *h;
    const unsigned char *q;
    int qtype; /* q's dtype (tensor.h) */
};

/*
 * A matrix of rows x cols as the model keeps it: weights_matrix_kept's
 * choices, and quantized blocks as they are when the loader keeps them
 * (keep_quant).  Returns 0, or -1 with err set.
 */
int weights_matrix_any(struct weights_loader *ld, const char *name, int rows, int cols,
                       struct weights_matrix *wm, struct attn_error *err);

/*
 * l: outputs from .. from + out - 1 of wm (stored out by in, rows of in),
 * with bias (already at from) or NULL: the linear a matrix read makes,
 * whatever its storage.
 */
void decoder_linear_of(const struct weights_matrix *wm, int in, int from, int out,
                       const float *bias, struct decoder_linear *l);

/*
 * A mixture's stacked experts: one (experts, rows, cols) tensor (a GGUF's
 * ffn_up_exps), as the model keeps it, read as one matrix of experts x rows
 * rows, so that expert e is rows e rows .. (e + 1) rows - 1.
 */
int weights_experts_any(struct weights_loader *ld, const char *name, int experts, int rows,
                        int cols, struct weights_matrix *wm, struct attn_error *err);

/*
 * The tensor name of the given shape as its own bytes (a U8 tensor's:
 * MXFP4's blocks and scales in a safetensors file), in place where the
 * files allow; NULL with err set (naming its dtype when it is not U8).
 */
const unsigned char *weights_bytes(struct weights_loader *ld, const char *name, int ndim,
                                   const int64_t *shape, struct attn_error *err);
/* bytes of the model's own memory (64-byte aligned, freed with it); NULL with err set. */
void *weights_room(struct weights_loader *ld, size_t bytes, struct attn_error *err);

/* Closes the files (the weights read stay in the model's memory); m->files_read says how many. */
void weights_close(struct weights_loader *ld);

#endif
