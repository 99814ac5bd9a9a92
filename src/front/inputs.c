/* inputs.c: vocabulary, given Q/K/V and saved weights (see inputs.h). */
#include "config.h"

#include <string.h>

#include "front/inputs.h"

enum attn_status
inputs_load(struct inputs *in, const struct attention_config *cfg, const struct inputs_paths *paths,
            bool *options_fault, struct attn_error *err)
{
    enum attn_status st;

    memset(in, 0, sizeof *in);
    if (options_fault != NULL)
        *options_fault = false;
    st = paths->embeddings ? vocab_load_csv(&in->vocab, paths->embeddings, err)
                           : vocab_builtin(&in->vocab, err);
    in->have_vocab = st == ATTN_OK;
    if (st == ATTN_OK && paths->qkv != NULL) {
        st = qkv_load(&in->qkv, paths->qkv, err);
        in->have_qkv = st == ATTN_OK;
    }
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
    if (in->have_qkv)
        qkv_destroy(&in->qkv);
    if (in->have_weights)
        params_destroy(&in->weights);
    memset(in, 0, sizeof *in);
}

struct pipeline_source
inputs_source(const struct inputs *in, const char *sentence)
{
    struct pipeline_source src = { sentence, &in->vocab, in->have_weights ? &in->weights : NULL,
                                   in->have_qkv ? &in->qkv : NULL, NULL };
    return src;
}
