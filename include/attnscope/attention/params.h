/*
 * params.h: the trainable parameters of a variant.
 *
 * Parameters are listed in the order the PyTorch class constructs them, which
 * is the order their random numbers are drawn in, and named by their
 * state_dict keys ("W_query.weight", "heads.1.W_key.bias", "out_proj.bias"),
 * which are also the file names --export writes and --weights reads.  Each is
 * stored in PyTorch's layout: an nn.Linear weight is (out, in), a bias is
 * (1, out), and SelfAttention_v1's torch.rand matrices are (in, out).
 */
#ifndef ATTNSCOPE_PARAMS_H
#define ATTNSCOPE_PARAMS_H

#include <stdbool.h>
#include <stdio.h>

#include "attnscope/attention/attention_config.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/matrix.h"
#include "attnscope/kernels/rng.h"
#include "attnscope/base/status.h"

/*
 * PARAM_QKV: nn.MultiheadAttention's in_proj_weight and in_proj_bias, the
 * queries', keys' and values' rows in one matrix (in that order).
 */
enum param_role { PARAM_QUERY, PARAM_KEY, PARAM_VALUE, PARAM_OUT, PARAM_QKV };

enum param_init {
    PARAM_INIT_RAND,    /* torch.rand: uniform_(0, 1) */
    PARAM_INIT_KAIMING, /* nn.Linear weight: kaiming_uniform_(a = sqrt(5)) */
    PARAM_INIT_BIAS,    /* nn.Linear bias: uniform_(-1/sqrt(in), 1/sqrt(in)) */
    PARAM_INIT_BIAS_ZEROED, /* drawn as nn.Linear's bias, then set to 0 (out_proj.bias) */
    PARAM_INIT_XAVIER,  /* xavier_uniform_: uniform_(-a, a), a = sqrt(6 / (in + out)) */
    PARAM_INIT_ZERO     /* constant_(0): nothing drawn */
};

#define PARAM_NAME_MAX 48

struct param {
    char name[PARAM_NAME_MAX]; /* the PyTorch state_dict key */
    enum param_role role;
    int set;                   /* the head, for the wrapper; 0 otherwise */
    bool is_bias;
    bool transposed;           /* (in, out), used as x @ W: SelfAttention_v1 */
    enum param_init init;
    int fan_in;
    struct matrix m;           /* a view into the params' storage */
    struct linalg_packed packed; /* a weight packed for the products (empty for biases) */
};

struct attention_params {
    enum attn_variant variant;
    int count;
    struct param *p;  /* (count) in construction order */
    float *storage;
};

/*
 * Lays out the parameters of cfg's variant for d_in inputs; their values are
 * left for params_draw, params_load or params_copy to fill.
 */
/* The bytes params_create allocates for cfg and d_in, before allocating them. */
size_t params_bytes(const struct attention_config *cfg, int d_in);

enum attn_status params_create(struct attention_params *ps, const struct attention_config *cfg,
                               int d_in, struct attn_error *err);
void params_destroy(struct attention_params *ps);

/* Draws every parameter from r in construction order, as PyTorch does. */
void params_draw(struct attention_params *ps, struct rng *r);

/*
 * Packs every weight for the matrix products; call after the values change
 * (params_draw, params_load and params_copy do).  Without memory for it the
 * products simply pack as they go.
 */
void params_pack(struct attention_params *ps);

/* What makes one output column of a projection: its weight, its bias (or NULL), and where. */
struct param_column {
    const struct param *weight;
    const struct param *bias;
    int out; /* the output feature in weight and bias */
};

/*
 * Column c of head's queries, keys or values (role; c from 0 to head_dim - 1),
 * or column c of the output (PARAM_OUT; head and head_dim unused): the
 * wrapper's heads have their own weights, MultiHeadAttention's are slices of
 * one, nn.MultiheadAttention's are rows of in_proj_weight.  Returns 0, or -1
 * when the variant has no such parameter.
 */
int params_column(const struct attention_params *ps, enum param_role role, int head, int head_dim,
                  int c, struct param_column *pc);

/* The weight from input feature in to output feature out, however w is stored. */
static inline float
param_weight_at(const struct param *w, int in, int out)
{
    return w->transposed ? MAT_AT(&w->m, in, out) : MAT_AT(&w->m, out, in);
}

/* The input features of a weight. */
static inline int
param_in_features(const struct param *w)
{
    return w->transposed ? w->m.rows : w->m.cols;
}

/* The parameter with that role, set and kind, or NULL (e.g. no bias). */
const struct param *params_find(const struct attention_params *ps, enum param_role role,
                                int set, bool is_bias);

/* A deep copy of src into dst (which must be unused). */
enum attn_status params_copy(struct attention_params *dst, const struct attention_params *src,
                             struct attn_error *err);

/*
 * Reads every parameter of the layout in ps from dir/NAME.csv (as --export
 * writes them) and checks its shape.  A missing file or a wrong shape is
 * refused with a message naming the file and the shape expected.
 */
enum attn_status params_load(struct attention_params *ps, const char *dir,
                             struct attn_error *err);

/*
 * What a folder of saved weights was made with (model.csv, written by
 * --export): enough to lay out its parameters without being told.
 */
struct params_model {
    enum attn_variant variant;
    int d_in;
    int d_out;
    int heads;
    bool qkv_bias;
};

/* The description of the weights of cfg's variant for d_in inputs. */
void params_model_of(const struct attention_config *cfg, int d_in, struct params_model *m);

/* Writes m as model.csv's text ("key,value" rows) to f. */
void params_model_write(FILE *f, const struct params_model *m);

/*
 * Reads dir/model.csv.  Returns ATTN_OK with *found set, or an error naming
 * the file, row and column of what is wrong; a folder without model.csv (an
 * export from before it was written) is found = false, not an error.
 */
enum attn_status params_model_read(const char *dir, struct params_model *m, bool *found,
                                   struct attn_error *err);

/* True when a and b have the same names and shapes. */
bool params_same_layout(const struct attention_params *a, const struct attention_params *b);

#endif
