/* inputs.c: vocabulary, given Q/K/V and saved weights (see inputs.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/fileio.h"
#include "attnscope/pipeline/knob.h"
#include "attnscope/models/model.h"

#include "front/cli/inputs.h"

/* "--variant wrapper --d-out 2 --heads 3 --qkv-bias", as options would say it. */
static void
describe(const struct params_model *m, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "--variant %s --d-out %d", attention_variant_name(m->variant),
                                m->d_out);

    if (attention_variant_info(m->variant)->heads && n < size)
        n += (size_t)snprintf(buf + n, size - n, " --heads %d", m->heads);
    if (m->qkv_bias && n < size)
        snprintf(buf + n, size - n, " --qkv-bias");
}

/*
 * Whether an option in given asked for another layout than m; wanted lists
 * those options as typed.
 */
static bool
conflicts(const struct attention_config *cfg, const struct params_model *m, uint64_t given,
          char *wanted, size_t size)
{
    size_t n = 0;

    wanted[0] = '\0';
    if ((given & ((uint64_t)1 << KNOB_VARIANT)) && cfg->variant != m->variant)
        n += (size_t)snprintf(wanted + n, size - n, " --variant %s", attention_variant_name(cfg->variant));
    if ((given & ((uint64_t)1 << KNOB_D_OUT)) && cfg->d_out != m->d_out && n < size)
        n += (size_t)snprintf(wanted + n, size - n, " --d-out %d", cfg->d_out);
    if ((given & ((uint64_t)1 << KNOB_HEADS)) && attention_variant_info(m->variant)->heads &&
        cfg->heads != m->heads && n < size)
        n += (size_t)snprintf(wanted + n, size - n, " --heads %d", cfg->heads);
    if ((given & ((uint64_t)1 << KNOB_BIAS)) && cfg->qkv_bias != m->qkv_bias && n < size)
        n += (size_t)snprintf(wanted + n, size - n, " --qkv-bias");
    if (n > 0)
        memmove(wanted, wanted + 1, strlen(wanted)); /* the leading space */
    return n > 0;
}

/*
 * Takes the layout a weights folder describes into cfg; an option that asked
 * for another is refused.
 */
static enum attn_status
adopt_model(struct attention_config *cfg, const char *dir, int d_in, uint64_t given,
            bool *options_fault, struct attn_error *err)
{
    struct params_model m;
    bool found;
    enum attn_status st = params_model_read(dir, &m, &found, err);
    char held[128];
    char wanted[128];

    if (st != ATTN_OK || !found)
        return st;
    if (m.d_in != d_in)
        return attn_fail(err, ATTN_ESHAPE,
                         "%s/model.csv: the weights take %d-dimensional embeddings; the vocabulary's "
                         "have %d",
                         dir, m.d_in, d_in);
    describe(&m, held, sizeof held);
    if (conflicts(cfg, &m, given, wanted, sizeof wanted)) {
        if (options_fault != NULL)
            *options_fault = true;
        return attn_fail(err, ATTN_EVALUE,
                         "--weights %s holds the weights of %s (its model.csv); the options ask for "
                         "%s: drop them or choose another folder",
                         dir, held, wanted);
    }
    if (cfg->variant != m.variant) {
        /* The variant brings its class's mask and scaling, unless options chose them. */
        enum attn_mask mask = cfg->mask;
        bool scale = cfg->scale;
        attention_config_set_variant(cfg, m.variant);
        if (given & ((uint64_t)1 << KNOB_MASK))
            cfg->mask = mask;
        if (given & (((uint64_t)1 << KNOB_SCALE) | ((uint64_t)1 << KNOB_SCALE_DIM)))
            cfg->scale = scale;
    }
    cfg->d_out = m.d_out;
    cfg->heads = m.heads;
    cfg->qkv_bias = m.qkv_bias;
    return ATTN_OK;
}

enum attn_status
inputs_load(struct inputs *in, struct attention_config *cfg, const struct inputs_paths *paths,
            uint64_t knobs_given, bool *options_fault, struct attn_error *err)
{
    enum attn_status st;

    memset(in, 0, sizeof *in);
    if (options_fault != NULL)
        *options_fault = false;
    st = paths->embeddings ? vocab_load_csv(&in->vocab, paths->embeddings, err)
                           : vocab_builtin(&in->vocab, err);
    in->have_vocab = st == ATTN_OK;
    if (st == ATTN_OK && paths->source_embeddings != NULL) {
        st = vocab_load_csv(&in->source_vocab, paths->source_embeddings, err);
        in->have_source_vocab = st == ATTN_OK;
        if (st == ATTN_OK && in->source_vocab.dim != in->vocab.dim)
            st = attn_fail(err, ATTN_ESHAPE,
                           "--source-embeddings %s has %d-dimensional vectors and %s %d: "
                           "cross-attention compares them, so give both one width",
                           paths->source_embeddings, in->source_vocab.dim,
                           paths->embeddings != NULL ? paths->embeddings : "the built-in vocabulary's",
                           in->vocab.dim);
    }
    if (st == ATTN_OK && paths->qkv != NULL) {
        st = qkv_load(&in->qkv, paths->qkv, err);
        in->have_qkv = st == ATTN_OK;
    }
    if (st == ATTN_OK && paths->weights != NULL)
        st = adopt_model(cfg, paths->weights, in->vocab.dim, knobs_given, options_fault, err);
    if (st == ATTN_OK && paths->weights != NULL) {
        /* The files' shapes follow from the configuration: check it first. */
        st = attention_config_check(cfg, in->vocab.dim, err);
        if (st != ATTN_OK && options_fault != NULL)
            *options_fault = true;
        if (st == ATTN_OK)
            st = params_create(&in->weights, cfg, in->vocab.dim, err);
        if (st == ATTN_OK) {
            in->have_weights = true;
            st = params_load(&in->weights, paths->weights, err);
        }
    }
    if (st != ATTN_OK)
        inputs_destroy(in);
    return st;
}

void
inputs_destroy(struct inputs *in)
{
    if (in->have_vocab)
        vocab_destroy(&in->vocab);
    if (in->have_source_vocab)
        vocab_destroy(&in->source_vocab);
    if (in->have_qkv)
        qkv_destroy(&in->qkv);
    if (in->have_weights)
        params_destroy(&in->weights);
    memset(in, 0, sizeof *in);
}

struct pipeline_source
inputs_source(const struct inputs *in, const char *sentence, const char *source)
{
    struct pipeline_source src = {
        .sentence = sentence,
        .vocab = &in->vocab,
        .weights = in->have_weights ? &in->weights : NULL,
        .qkv = in->have_qkv ? &in->qkv : NULL,
        .source = source,
        .source_vocab = in->have_source_vocab ? &in->source_vocab : NULL,
    };
    return src;
}

/*
 * The text of -f FILE or --source-file FILE (option; "-": standard input)
 * in *text (the caller frees), without one final newline (an editor's, not
 * the user's).
 */
int
inputs_read_text(const char *option, const char *path, char **text, struct attn_error *err)
{
    size_t len = 0;

    *text = NULL;
    if (strcmp(path, "-") == 0) {
        size_t cap = 4096;
        char *buf = malloc(cap);
        size_t got;
        while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
            len += got;
            if (len > TOKENIZER_MAX_BYTES) {
                free(buf);
                attn_fail(err, ATTN_ELIMIT, "%s -: standard input is longer than %u bytes",
                          option, TOKENIZER_MAX_BYTES);
                return -1;
            }
            if (cap - len - 1 == 0) {
                char *bigger = realloc(buf, cap * 2);
                if (bigger == NULL)
                    free(buf);
                buf = bigger;
                cap *= 2;
            }
        }
        if (buf == NULL) {
            attn_fail(err, ATTN_ENOMEM, "out of memory");
            return -1;
        }
        if (ferror(stdin)) {
            free(buf);
            attn_fail(err, ATTN_EIO, "%s -: cannot read standard input", option);
            return -1;
        }
        buf[len] = '\0';
        *text = buf;
    } else if (fileio_read_all(path, TOKENIZER_MAX_BYTES, text, &len, err) != ATTN_OK) {
        return -1;
    }
    if (strlen(*text) != len) {
        attn_fail(err, ATTN_EPARSE, "%s: holds a NUL byte at byte %zu: not text", path,
                  strlen(*text));
        free(*text);
        *text = NULL;
        return -1;
    }
    if (len > 0 && (*text)[len - 1] == '\n')
        (*text)[--len] = '\0';
    if (len > 0 && (*text)[len - 1] == '\r')
        (*text)[--len] = '\0';
    return 0;
}
