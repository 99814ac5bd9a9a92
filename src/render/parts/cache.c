/*
 * cache.c: the KV cache stage explained (see view_cache.c): what a layer
 * keeps, how large it is, and what a written token saved by it.
 */
#include "config.h"

#include <stdio.h>

#include "attnscope/families/decoder/family_decoder.h"
#include "attnscope/families/decoder/generate.h"
#include "render/parts/parts.h"

/* bytes as B, KiB or MiB, into buf (32 bytes). */
static const char *
size_text(char *buf, size_t bytes)
{
    if (bytes < 1024)
        snprintf(buf, 32, "%zu B", bytes);
    else if (bytes < (size_t)1 << 20)
        snprintf(buf, 32, "%.1f KiB", (double)bytes / 1024.0);
    else
        snprintf(buf, 32, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
    return buf;
}

void
text_cache(const struct pipeline *p, char *buf, size_t size)
{
    const struct family_decoder_state *m = pipeline_decoder(p);
    const struct decoder_config *c = &m->model->dec.cfg;
    const int n = m->run.n;
    char layer[32], all[32];

    snprintf(buf, size,
             "What each layer keeps of the tokens read so far: their keys (as the scores read "
             "them) and values. A new token computes only its own row in every layer and reads "
             "the rest from here; rows marked + were computed by the last forward, the others "
             "reused. %d tokens: %s a layer, %s in all %d layers (2 x tokens x %d x 4 bytes).",
             n, size_text(layer, generation_cache_bytes(c, n) / (size_t)c->n_layer),
             size_text(all, generation_cache_bytes(c, n)), c->n_layer, decoder_kv_width(c));
}

void
inspect_cache(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct family_decoder_state *m = pipeline_decoder(p);
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
    char v[24], layer[32], all[32];

    if (at->row < 0 || at->row >= src->rows)
        return;
    emit(o, "%s[%s][%d] (layer %d, key head %d) = %s\n", value ? "v" : "k", inspect_token(p, at->row),
         d, p->layer, kv, inspect_num(v, MAT_AT(src, at->row, kv * hd + d)));
    if (at->row >= m->from)
        emit(o, "computed by the last forward (its rows %d to %d of %d)\n", m->from, n - 1, n);
    else
        emit(o, "reused: computed when '%s' was read, and never again\n",
             inspect_token(p, at->row));
    if (w == NULL || w->written == 0) {
        emit(o, "G writes a token: its row in every layer, the rest read from here\n");
        emit(o, "the cache: 2 x %d tokens x %d x 4 bytes = %s this layer, %s in all %d layers", n,
             decoder_kv_width(c),
             size_text(layer, generation_cache_bytes(c, n) / (size_t)c->n_layer),
             size_text(all, generation_cache_bytes(c, n)), c->n_layer);
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
