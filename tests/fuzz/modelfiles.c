/*
 * modelfiles.c: fuzzes the JSON files of a model folder that are not
 * weights: the input is a config.json, a NUL byte and a tokenizer.json.
 * Whatever they hold, each loader (GPT-2's, the Llama family's and the
 * sliding-window families' config, the tokenizer.json interpreter) either
 * refuses with a message naming
 * the file, or gives what the forward pass and the tokenizer rely on: a
 * config whose sizes are positive, whose heads divide d_model (a Llama's:
 * whose key heads divide its query heads, whose head size is even and
 * within RoPE's table) and whose epsilon is a small positive number (a
 * Gemma's or Olmo's also: a window of at least one key when a layer
 * slides, YaRN's and the caps' numbers usable); a
 * tokenizer whose ids for a text are in its vocabulary, and spell the
 * text back when its pipeline changes no text.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "attnscope/text/bpe.h"
#include "attnscope/architectures/windowed.h"
#include "attnscope/architectures/gpt2.h"
#include "attnscope/architectures/llama.h"
#include "fuzz.h"

static const char *
write_part(int which, const uint8_t *data, size_t size)
{
    static char paths[2][80];

    return fuzz_write_file(paths[which], sizeof paths[0], "model",
                           which == 0 ? "config.json" : "tokenizer.json", data, size);
}

static void
check_config(const char *path)
{
    struct decoder_config c;
    struct attn_error err;

    if (gpt2_config_load(&c, path, &err) == ATTN_OK) {
        if (c.n_layer < 1 || c.n_head < 1 || c.d_model < 1 || c.n_ctx < 1 ||
            c.vocab_size < 1 || c.d_mlp < 1 || c.d_model % c.n_head != 0 || !(c.eps > 0.0f) ||
            c.eps > 1.0f)
            abort();
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
}

static void
check_llama_config(const char *path)
{
    struct llama_config c;
    struct attn_error err;

    if (llama_config_load(&c, path, &err) == ATTN_OK) {
        const struct decoder_config *d = &c.dec;
        if (d->n_layer < 1 || d->n_head < 1 || d->d_model < 1 || d->n_ctx < 1 ||
            d->vocab_size < 1 || d->d_mlp < 1 || d->n_kv_head < 1 ||
            d->n_head % d->n_kv_head != 0 || d->head_dim < 2 || d->head_dim % 2 != 0 ||
            d->head_dim > DECODER_HEAD_DIM_MAX || !(d->eps > 0.0f) || !(d->rope_theta >= 1.0) ||
            (d->rope_scaling.llama3 && !(d->rope_scaling.high_freq_factor >
                                         d->rope_scaling.low_freq_factor)))
            abort();
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort();
    }
}

/* Gemma 3's, Gemma 2's or Olmo 3's config: the Llama family's rules and the windows'. */
static void
check_window_config(const char *path)
{
    struct windowed_config c;
    struct attn_error err;
    bool slides = false;

    if (windowed_config_load(&c, path, &err) != ATTN_OK) {
        if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL)
            abort();
        return;
    }
    {
        const struct decoder_config *d = &c.dec;
        const struct decoder_rope_scaling *r = &d->rope_scaling;
        if (d->n_layer < 1 || d->n_layer > DECODER_LAYERS_SLIDING_MAX || d->n_head < 1 ||
            d->d_model < 1 || d->n_kv_head < 1 || d->n_head % d->n_kv_head != 0 ||
            d->head_dim < 2 || d->head_dim % 2 != 0 || d->head_dim > DECODER_HEAD_DIM_MAX ||
            !(d->eps > 0.0f) || !(d->rope_theta >= 1.0) || !(d->rope_local_theta >= 1.0) ||
            d->attn_scalar < 0.0 || d->final_softcap < 0.0 || d->attn_softcap < 0.0 ||
            (r->yarn && !(r->factor >= 1.0 && r->original_max >= 1 && r->attention_factor > 0.0 &&
                          r->beta_fast > 0.0 && r->beta_slow > 0.0)) ||
            (r->linear && !(r->factor > 0.0)))
            abort();
        for (int l = 0; l < d->n_layer; l++)
            slides = slides || d->sliding[l];
        if (slides && d->sliding_window < 1)
            abort(); /* a sliding layer always has a window */
    }
}

static void
check_tokenizer(const char *path)
{
    static const char text[] = "It's 2 o'clock  in Z\xc3\xbcrich \xe2\x80\x94 caf\xc3\xa9!\n";
    struct bpe b;
    struct attn_error err;
    int *ids;
    int count;

    if (bpe_load_tokenizer_json(&b, path, &err) != ATTN_OK) {
        if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL)
            abort();
        return;
    }
    if (b.merges < 1)
        abort(); /* zero merges are refused, never loaded */
    if (bpe_encode(&b, text, sizeof text - 1, 0, &ids, &count, &err) == ATTN_OK) {
        char back[sizeof text];
        size_t at = 0;
        const bool back_to_text = bpe_spells_back(&b);
        for (int i = 0; i < count; i++) {
            int n;
            if (ids[i] < 0 || ids[i] >= b.vocab_size)
                abort();
            if (!back_to_text)
                continue; /* (normalized, or unknown tokens: the ids need not spell the text) */
            n = bpe_token_bytes(&b, ids[i], back + at, sizeof back - at);
            if (n < 0)
                abort();
            at += (size_t)n;
        }
        if (back_to_text && (at != sizeof text - 1 || memcmp(back, text, at) != 0))
            abort();
        free(ids);
    }
    bpe_destroy(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    const char *config;
    const char *tokenizer;

    if (nul == NULL)
        return 0;
    config = write_part(0, data, (size_t)(nul - data));
    tokenizer = write_part(1, nul + 1, size - (size_t)(nul - data) - 1);
    if (config == NULL || tokenizer == NULL)
        return 0;
    check_config(config);
    check_llama_config(config);
    check_window_config(config);
    check_tokenizer(tokenizer);
    unlink(config);
    unlink(tokenizer);
    return 0;
}
