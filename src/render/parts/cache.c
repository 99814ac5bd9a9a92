/*
 * cache.c: the KV cache stage explained (see view_cache.c): what a layer
 * keeps, how large it is, and what a written token saved by it.
 */
#include "config.h"

#include <stdio.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "render/parts/parts.h"

/* bytes as B, KiB, MiB or GiB, into buf (32 bytes). */
static const char *
size_text(char *buf, size_t bytes)
{
    return attn_size_text(buf, 32, bytes);
}

/* What layer keeps for n tokens, in bytes: its mixer says (attention: its keys and values). */
static size_t
layer_bytes(const struct decoder_config *c, int layer, int n)
{
    return decoder_mixer_of(c, layer)->kept_floats(c, layer, n) * sizeof(float);
}

/*
 * What the shown layer keeps and the whole cache's size: a sliding layer's
 * ring of its window and what the rings save against every row kept.
 */
static void
cache_size_text(const struct pipeline *p, char *buf, size_t size)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const struct decoder_config *c = &m->model->dec.cfg;
    const int n = m->run.n;
    const int rows = generation_cache_rows(c, p->layer, n);
    const size_t bytes = generation_cache_bytes(c, n), full = generation_cache_bytes_full(c, n);
    char layer[32], all[32], saved[32];
    size_t used = 0;

    if (decoder_mixer_of(c, p->layer)->keeps_state)
        attn_appendf(buf, size, &used,
                     "This layer is %s: it keeps %s, %s whatever the length, no keys or values "
                     "(at 32768 tokens all %d layers keep %s, where keys and values in every "
                     "layer would take %s). ",
                     decoder_mixer_of(c, p->layer)->name, decoder_mixer_of(c, p->layer)->keeps,
                     size_text(layer, layer_bytes(c, p->layer, n)), c->n_layer,
                     size_text(all, generation_cache_bytes(c, 32768)),
                     size_text(saved, generation_cache_bytes_full(c, 32768)));
    else if (decoder_window(c, p->layer) > 0)
        attn_appendf(buf, size, &used,
                     "This layer slides: no query reads further back than %d keys, so it keeps a "
                     "ring of %d slots, position i in slot i mod %d, the oldest overwritten (as "
                     "Hugging Face's and llama.cpp's sliding caches do): %d of %d rows, %s. ",
                     decoder_window(c, p->layer), decoder_window(c, p->layer),
                     decoder_window(c, p->layer), rows, n,
                     size_text(layer, layer_bytes(c, p->layer, n)));
    else
        attn_appendf(buf, size, &used, "%d tokens: %s this layer (2 x tokens x %d x 4 bytes). ",
                     n, size_text(layer, layer_bytes(c, p->layer, n)), decoder_kv_width(c));
    attn_appendf(buf, size, &used, "All %d layers: %s", c->n_layer, size_text(all, bytes));
    if (bytes < full)
        attn_appendf(buf, size, &used, ", %s less than every layer keeping every row (%s)",
                     size_text(saved, full - bytes), size_text(layer, full));
    attn_appendf(buf, size, &used, ".");
}

void
formula_cache(const struct pipeline *p, char *buf, size_t size)
{
    if (p != NULL && p->window > 0)
        snprintf(buf, size, "cache_l = (K_l, V_l): a ring of 2 x %d x d_kv floats; a new token "
                            "overwrites slot n mod %d", p->window, p->window);
    else
        snprintf(buf, size,
                 "cache_l = (K_l, V_l): 2 x n x d_kv floats; a new token adds a row to each");
}

void
text_cache(const struct pipeline *p, char *buf, size_t size)
{
    size_t used = 0;

    attn_appendf(buf, size, &used,
                 "What each layer keeps of the tokens read so far: their keys (as the scores read "
                 "them) and values. A new token computes only its own row in every layer and "
                 "reads the rest from here; rows marked + were computed by the last forward, the "
                 "others reused. ");
    cache_size_text(p, buf + used, size - used);
}

void
inspect_cache(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct family_model_state *m = pipeline_decoder(p);
    const struct decoder_config *c = &m->model->dec.cfg;
    const struct generation *w = m->writing;
    const int hd = p->st.shape.head_dim;
    const int kv = pipeline_kv_head(p, at->head);
    const bool value = at->col >= hd;
    const int d = at->col % hd;
    const struct matrix *keys =
        p->block.k_rotated.data != NULL ? &p->block.k_rotated : &p->st.keys;
    const struct matrix *src = value ? &p->st.values : keys;
    const int n = m->run.n;
    const int rows = generation_cache_rows(c, p->layer, n);
    int i;
    char v[24], sizes[512];

    if (at->row < 0 || at->row >= rows || n > src->rows)
        return;
    /* The row shown is a slot of the layer's cache; the position it holds is i. */
    i = generation_cache_position(c, p->layer, n, at->row);
    emit(o, "%s[%s][%d] (layer %d, key head %d) = %s\n", value ? "v" : "k", inspect_token(p, i),
         d, p->layer, kv, inspect_num(v, MAT_AT(src, i, kv * hd + d)));
    if (rows < n && i >= rows)
        emit(o, "slot %d of the ring: position %d went there (%d mod %d), overwriting position "
                "%d\n",
             at->row, i, i, rows, i - rows);
    else if (rows < n)
        emit(o, "slot %d of the ring: position %d went there (%d mod %d)\n", at->row, i, i, rows);
    if (i >= m->from)
        emit(o, "computed by the last forward (its rows %d to %d of %d)\n", m->from, n - 1, n);
    else
        emit(o, "reused: computed when '%s' was read, and never again\n", inspect_token(p, i));
    cache_size_text(p, sizes, sizeof sizes);
    if (w == NULL || w->written == 0) {
        emit(o, "G writes a token: its row in every layer, the rest read from here\n");
        emit(o, "%s", sizes);
        return;
    }
    {
        const struct generate_step *s = &w->steps[w->written - 1];
        emit(o, "the last token: %d row%s a layer, %.1f ms%s", s->computed,
             s->computed == 1 ? "" : "s", s->seconds * 1e3,
             s->slid ? " (past the context: the window moved, all computed again)" : "");
        if (w->uncached_n > 0)
            emit(o, "; without the cache, all %d rows again (the book's model(idx)): %.1f ms%s",
                 w->uncached_n, w->uncached_seconds * 1e3,
                 w->uncached_n == n ? "" : " (measured at another length)");
        emit(o, " (measured)\n");
    }
}
