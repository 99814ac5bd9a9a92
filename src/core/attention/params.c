/* params.c: parameter layouts, draws and loading (see params.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnscope/files/csvio.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/attention/params.h"

static const char *const role_names[] = { "W_query", "W_key", "W_value", "out_proj", "in_proj" };
/* The lecture notes' ModuleLists of per-head projections (mha.py). */
static const char *const list_names[] = { "linear_Qs", "linear_Ks", "linear_Vs" };

struct layout {
    struct param *p;
    int count;
    int cap;
};

/* One parameter called name. */
static void
add(struct layout *l, const char *name, enum param_role role, int set, bool is_bias,
    bool transposed, enum param_init init, int rows, int cols, int fan_in)
{
    struct param *p = &l->p[l->count++];

    snprintf(p->name, sizeof p->name, "%s", name);
    p->role = role;
    p->set = set;
    p->is_bias = is_bias;
    p->transposed = transposed;
    p->init = init;
    p->fan_in = fan_in;
    p->m.rows = rows;
    p->m.cols = cols;
    p->m.stride = cols;
}

/*
 * One nn.Linear(in, out, bias) called base (base.weight, base.bias): the
 * weight is constructed, then the bias, drawn as bias_init says.
 */
static void
add_linear_init(struct layout *l, const char *base, enum param_role role, int set, int in, int out,
                bool bias, enum param_init bias_init)
{
    char name[PARAM_NAME_MAX];

    snprintf(name, sizeof name, "%s.weight", base);
    add(l, name, role, set, false, false, PARAM_INIT_KAIMING, out, in, in);
    snprintf(name, sizeof name, "%s.bias", base);
    if (bias)
        add(l, name, role, set, true, false, bias_init, 1, out, in);
}

static void
add_linear(struct layout *l, const char *base, enum param_role role, int set, int in, int out,
           bool bias)
{
    add_linear_init(l, base, role, set, in, out, bias, PARAM_INIT_BIAS);
}

/* The parameters cfg has, shapes and names but no storage, in l (l.p is the caller's to free). */
static enum attn_status
layout_of(struct layout *l, const struct attention_config *cfg, int d_in, struct attn_error *err)
{
    struct attention_shape s;
    char base[PARAM_NAME_MAX - 8];

    attention_shape_of(cfg, d_in, &s);
    /* At most three projections with biases per set, and out_proj. */
    l->cap = 6 * (s.sets > 0 ? s.sets : 1) + 2;
    l->count = 0;
    l->p = calloc((size_t)l->cap, sizeof *l->p);
    if (l->p == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the parameters");

    switch (attention_variant_info(cfg->variant)->proj) {
    case PROJ_NONE:
        break;
    case PROJ_RAND:
        for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++)
            add(l, role_names[r], (enum param_role)r, 0, false, true, PARAM_INIT_RAND, d_in, s.d_set,
                d_in); /* torch.rand: a bare Parameter, no .weight */
        break;
    case PROJ_LINEAR_PER_HEAD:
        for (int h = 0; h < s.sets; h++) {
            for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++) {
                snprintf(base, sizeof base, "heads.%d.%s", h, role_names[r]);
                add_linear(l, base, (enum param_role)r, h, d_in, s.d_set, cfg->qkv_bias);
            }
        }
        break;
    case PROJ_LINEAR_LISTS:
        /* linear_Qs, then linear_Ks, then linear_Vs: a biased nn.Linear per head in each. */
        for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++) {
            for (int h = 0; h < s.sets; h++) {
                snprintf(base, sizeof base, "%s.%d", list_names[r], h);
                add_linear(l, base, (enum param_role)r, h, d_in, s.d_set, true);
            }
        }
        add_linear(l, "mha_linear", PARAM_OUT, 0, s.d_qkv, s.d_output, true);
        break;
    case PROJ_IN_PROJ:
        /*
         * nn.MultiheadAttention: out_proj is made (an nn.Linear, drawing its
         * weight and bias), then _reset_parameters draws in_proj_weight with
         * xavier_uniform_ and zeroes in_proj_bias and out_proj.bias.
         */
        add_linear_init(l, "out_proj", PARAM_OUT, 0, d_in, d_in, true, PARAM_INIT_BIAS_ZEROED);
        add(l, "in_proj_weight", PARAM_QKV, 0, false, false, PARAM_INIT_XAVIER, 3 * d_in, d_in, d_in);
        add(l, "in_proj_bias", PARAM_QKV, 0, true, false, PARAM_INIT_ZERO, 1, 3 * d_in, d_in);
        break;
    case PROJ_LINEAR:
    case PROJ_LINEAR_SPLIT:
        for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++)
            add_linear(l, role_names[r], (enum param_role)r, 0, d_in, s.d_set, cfg->qkv_bias);
        if (attention_variant_has_out_proj(cfg->variant))
            add_linear(l, role_names[PARAM_OUT], PARAM_OUT, 0, s.d_qkv, s.d_output, true);
        break;
    }
    return ATTN_OK;
}

/*
 * Whether a parameter is packed for the products: the weights, but not
 * in_proj_weight, whose three slices are multiplied (by the target and the
 * source, in cross-attention) one by one.
 */
static bool
packed_for_products(const struct param *p)
{
    return !p->is_bias && p->role != PARAM_QKV;
}

/* The n and k a weight is packed with for the GEMM kernel (params_pack). */
static void
pack_shape(const struct param *p, int *n, int *k)
{
    /* x W^T for nn.Linear (W is (out, in)); x W for torch.rand's (in, out). */
    *n = p->transposed ? p->m.cols : p->m.rows;
    *k = p->transposed ? p->m.rows : p->m.cols;
}

size_t
params_bytes(const struct attention_config *cfg, int d_in)
{
    struct layout l;
    size_t floats = 0;

    if (layout_of(&l, cfg, d_in, NULL) != ATTN_OK)
        return SIZE_MAX;
    for (int i = 0; i < l.count; i++) {
        floats += matrix_size(&l.p[i].m);
        if (packed_for_products(&l.p[i])) {
            int n;
            int k;
            pack_shape(&l.p[i], &n, &k);
            floats += linalg_pack_floats(n, k);
        }
    }
    free(l.p);
    return floats * sizeof(float);
}

enum attn_status
params_create(struct attention_params *ps, const struct attention_config *cfg, int d_in,
              struct attn_error *err)
{
    struct layout l;
    size_t total = 0;
    enum attn_status st;

    memset(ps, 0, sizeof *ps);
    ps->variant = cfg->variant;
    st = layout_of(&l, cfg, d_in, err);
    if (st != ATTN_OK)
        return st;
    for (int i = 0; i < l.count; i++)
        total += matrix_size(&l.p[i].m);
    ps->p = l.p;
    ps->count = l.count;
    if (total > 0) {
        /* Not zeroed: params_draw, params_load or params_copy fill every value. */
        ps->storage = malloc(total * sizeof(float));
        if (ps->storage == NULL) {
            params_destroy(ps);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for %zu parameters", total);
        }
    }
    total = 0;
    for (int i = 0; i < l.count; i++) {
        ps->p[i].m.data = ps->storage + total;
        total += matrix_size(&ps->p[i].m);
    }
    return ATTN_OK;
}

static void
unpack_all(struct attention_params *ps)
{
    for (int i = 0; i < ps->count; i++)
        linalg_packed_destroy(&ps->p[i].packed);
}

void
params_pack(struct attention_params *ps)
{
    unpack_all(ps);
    for (int i = 0; i < ps->count; i++) {
        struct param *p = &ps->p[i];
        if (!packed_for_products(p))
            continue;
        int n;
        int k;
        pack_shape(p, &n, &k);
        linalg_pack(&p->packed, n, k, p->m.data, p->m.cols, p->transposed ? 0 : 1);
    }
}

void
params_destroy(struct attention_params *ps)
{
    if (ps == NULL)
        return;
    if (ps->p != NULL)
        unpack_all(ps);
    free(ps->p);
    free(ps->storage);
    memset(ps, 0, sizeof *ps);
}

void
params_draw(struct attention_params *ps, struct rng *r)
{
    for (int i = 0; i < ps->count; i++) {
        struct param *p = &ps->p[i];
        size_t n = matrix_size(&p->m);
        switch (p->init) {
        case PARAM_INIT_RAND:
            rng_uniform_f32(r, p->m.data, n, 0.0, 1.0);
            break;
        case PARAM_INIT_KAIMING:
            rng_kaiming_uniform(r, p->m.data, n, p->fan_in);
            break;
        case PARAM_INIT_BIAS:
            rng_bias_uniform(r, p->m.data, n, p->fan_in);
            break;
        case PARAM_INIT_BIAS_ZEROED:
            rng_bias_uniform(r, p->m.data, n, p->fan_in);
            memset(p->m.data, 0, n * sizeof(float));
            break;
        case PARAM_INIT_XAVIER:
            rng_xavier_uniform(r, p->m.data, n, p->m.cols, p->m.rows);
            break;
        case PARAM_INIT_ZERO:
            memset(p->m.data, 0, n * sizeof(float));
            break;
        }
    }
    params_pack(ps);
}

const struct param *
params_find(const struct attention_params *ps, enum param_role role, int set, bool is_bias)
{
    for (int i = 0; i < ps->count; i++) {
        const struct param *p = &ps->p[i];
        if (p->role == role && p->set == set && p->is_bias == is_bias)
            return p;
    }
    return NULL;
}

int
params_column(const struct attention_params *ps, enum param_role role, int head, int head_dim,
              int c, struct param_column *pc)
{
    const struct param *w = params_find(ps, role, role == PARAM_OUT ? 0 : head, false);
    int offset = 0;

    /* MultiHeadAttention: one weight for every head, each head a slice of its columns. */
    if (w == NULL && role != PARAM_OUT) {
        w = params_find(ps, role, 0, false);
        offset = head * head_dim;
    }
    /* nn.MultiheadAttention: the role's rows of in_proj_weight, then the head's among them. */
    if (w == NULL && role < PARAM_OUT) {
        w = params_find(ps, PARAM_QKV, 0, false);
        if (w != NULL)
            offset = (int)role * (w->m.rows / 3) + head * head_dim;
    }
    if (w == NULL || c < 0 || offset + c >= (w->transposed ? w->m.cols : w->m.rows))
        return -1;
    pc->weight = w;
    pc->bias = params_find(ps, w->role, w->set, true);
    pc->out = offset + c;
    return 0;
}

enum attn_status
params_copy(struct attention_params *dst, const struct attention_params *src,
            struct attn_error *err)
{
    size_t total = 0;

    memset(dst, 0, sizeof *dst);
    dst->variant = src->variant;
    for (int i = 0; i < src->count; i++)
        total += matrix_size(&src->p[i].m);
    if (src->count > 0) {
        dst->p = malloc((size_t)src->count * sizeof *dst->p);
        if (dst->p == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the parameters");
        memcpy(dst->p, src->p, (size_t)src->count * sizeof *dst->p);
    }
    dst->count = src->count;
    if (total > 0) {
        dst->storage = malloc(total * sizeof(float));
        if (dst->storage == NULL) {
            params_destroy(dst);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the parameters");
        }
        memcpy(dst->storage, src->storage, total * sizeof(float));
    }
    total = 0;
    for (int i = 0; i < dst->count; i++) {
        dst->p[i].m.data = dst->storage + total;
        memset(&dst->p[i].packed, 0, sizeof dst->p[i].packed);
        total += matrix_size(&dst->p[i].m);
    }
    params_pack(dst);
    return ATTN_OK;
}

bool
params_same_layout(const struct attention_params *a, const struct attention_params *b)
{
    if (a->count != b->count)
        return false;
    for (int i = 0; i < a->count; i++) {
        if (strcmp(a->p[i].name, b->p[i].name) != 0 || a->p[i].m.rows != b->p[i].m.rows ||
            a->p[i].m.cols != b->p[i].m.cols)
            return false;
    }
    return true;
}

enum attn_status
params_load(struct attention_params *ps, const char *dir, struct attn_error *err)
{
    for (int i = 0; i < ps->count; i++) {
        struct param *p = &ps->p[i];
        struct csvio_table t;
        struct matrix m;
        enum attn_status st;
        size_t len = strlen(dir) + strlen(p->name) + 6;
        char *path = malloc(len);

        if (path == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        snprintf(path, len, "%s/%s.csv", dir, p->name);
        st = csvio_read_found(path, &t, err);
        if (st != ATTN_OK) {
            free(path);
            return st;
        }
        /* A header row and a label column around the values, as exported. */
        if (t.rows - 1 != p->m.rows || t.cols - 1 != p->m.cols) {
            st = attn_fail(err, ATTN_ESHAPE,
                           "%s: %d x %d values, but %s here is %d x %d (a header row and a "
                           "label column around them)",
                           path, t.rows - 1, t.cols - 1, p->name, p->m.rows, p->m.cols);
        } else {
            st = csvio_table_matrix(&t, 1, 1, &m, err);
            if (st == ATTN_OK) {
                memcpy(p->m.data, m.data, matrix_size(&m) * sizeof(float));
                matrix_destroy(&m);
            }
        }
        csvio_table_destroy(&t);
        free(path);
        if (st != ATTN_OK)
            return st;
    }
    params_pack(ps);
    return ATTN_OK;
}

/* ---------------------------------------------------------- model.csv */

void
params_model_of(const struct attention_config *cfg, int d_in, struct params_model *m)
{
    m->variant = cfg->variant;
    m->d_in = d_in;
    m->d_out = cfg->d_out;
    m->heads = cfg->heads;
    m->qkv_bias = cfg->qkv_bias;
}

void
params_model_write(FILE *f, const struct params_model *m)
{
    fprintf(f, "key,value\nfamily,book\nvariant,%s\nd_in,%d\nd_out,%d\nheads,%d\nqkv_bias,%d\n",
            attention_variant_name(m->variant), m->d_in, m->d_out, m->heads, m->qkv_bias ? 1 : 0);
}

/* A whole number from min to max in row r's value, or an error naming the cell. */
static enum attn_status
model_int(const struct csvio_table *t, int r, const char *path, long min, long max, int *out,
          struct attn_error *err)
{
    const char *text = csvio_cell(t, r, 1);
    char *end;
    long v = strtol(text, &end, 10);

    if (end == text || *end != '\0' || v < min || v > max)
        return attn_fail(err, ATTN_EPARSE, "%s: row %d, column 2: '%s' is not a whole number from %ld to %ld",
                         path, t->line[r], text, min, max);
    *out = (int)v;
    return ATTN_OK;
}

enum attn_status
params_model_read(const char *dir, struct params_model *m, bool *found, struct attn_error *err)
{
    size_t len = strlen(dir) + sizeof "/model.csv";
    char *path = malloc(len);
    struct csvio_table t;
    enum attn_status st = ATTN_OK;
    unsigned seen = 0;
    struct stat sb;

    *found = false;
    if (path == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    snprintf(path, len, "%s/model.csv", dir);
    if (stat(path, &sb) != 0) {
        free(path);
        return ATTN_OK;
    }
    st = csvio_read_found(path, &t, err);
    if (st != ATTN_OK) {
        free(path);
        return st;
    }
    memset(m, 0, sizeof *m);
    if (t.cols != 2)
        st = attn_fail(err, ATTN_EPARSE, "%s: %d columns; model.csv has two, key and value", path, t.cols);
    for (int r = 1; r < t.rows && st == ATTN_OK; r++) {
        const char *key = csvio_cell(&t, r, 0);
        const char *value = csvio_cell(&t, r, 1);
        int flag = 0;
        if (strcmp(key, "family") == 0) {
            if (strcmp(value, "book") != 0)
                st = attn_fail(err, ATTN_EPARSE, "%s: row %d, column 2: family '%s' is not one attnscope has (book)",
                               path, t.line[r], value);
            seen |= 1;
        } else if (strcmp(key, "variant") == 0) {
            if (attention_variant_parse(value, &m->variant) != 0)
                st = attn_fail(err, ATTN_EPARSE, "%s: row %d, column 2: '%s' is not a variant", path, t.line[r], value);
            seen |= 2;
        } else if (strcmp(key, "d_in") == 0) {
            st = model_int(&t, r, path, 1, ATTN_MAX_DIM, &m->d_in, err);
            seen |= 4;
        } else if (strcmp(key, "d_out") == 0) {
            st = model_int(&t, r, path, 1, ATTN_MAX_DIM, &m->d_out, err);
            seen |= 8;
        } else if (strcmp(key, "heads") == 0) {
            st = model_int(&t, r, path, 1, ATTN_MAX_HEADS, &m->heads, err);
            seen |= 16;
        } else if (strcmp(key, "qkv_bias") == 0) {
            st = model_int(&t, r, path, 0, 1, &flag, err);
            m->qkv_bias = flag != 0;
            seen |= 32;
        } else {
            st = attn_fail(err, ATTN_EPARSE, "%s: row %d, column 1: '%s' is not a key of model.csv", path, t.line[r], key);
        }
    }
    if (st == ATTN_OK && seen != 63)
        st = attn_fail(err, ATTN_EPARSE,
                       "%s: needs the rows family, variant, d_in, d_out, heads and qkv_bias", path);
    csvio_table_destroy(&t);
    free(path);
    *found = st == ATTN_OK;
    return st;
}
