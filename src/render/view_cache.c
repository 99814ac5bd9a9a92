/*
 * view_cache.c: the KV cache as a stage (a trained model's): what each
 * layer keeps of the tokens read so far, the keys as the scores read them
 * (after QK-norm and RoPE) and the values, for the key head the query head
 * shown reads; the rows the last forward computed marked, the rest reused.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "render/view.h"
#include "render/view_parts.h"

/* The keys the scores read: after RoPE (and QK-norm) where the model turns them. */
static const struct matrix *
cached_keys(const struct pipeline *p)
{
    return p->block.k_rotated.data != NULL ? &p->block.k_rotated : &p->st.keys;
}

int
view_cache_spec(struct view *v, const struct pipeline *p, int head, struct heatmap_spec *spec)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const int hd = p->st.shape.head_dim;
    const int kv = pipeline_kv_head(p, head);
    const struct matrix *src[2] = { cached_keys(p), &p->st.values };
    const int all = src[0]->rows;
    const int from = m != NULL ? m->from : 0;
    /* A sliding layer keeps a ring of its window's rows: shown slot by slot. */
    const struct decoder_config *c = m != NULL ? &m->model->dec.cfg : NULL;
    const int n = c != NULL ? generation_cache_rows(c, p->layer, all) : all;
    const bool ring = n < all;

    /* The stage's own spec first (its colours and ramp), then the matrix made here. */
    stagemap_spec(&v->work.map, p, STAGE_KEYS, head, false, v->colour, v->utf8, spec);
    spec->col_group = 0;
    if (v->present && !v->paper)
        spec->ramp = palette_high_contrast(spec->ramp);
    if (view_reserve_scratch(v, (size_t)n * 2 * (size_t)hd) != 0 ||
        view_group_labels(v, hd, "kv") != 0 || view_reserve_row_labels(v, n) != 0)
        return -1;
    for (int r = 0; r < n; r++) {
        const int i = c != NULL ? generation_cache_position(c, p->layer, all, r) : r;
        for (int w = 0; w < 2; w++)
            memcpy(v->work.scratch + ((size_t)r * 2 + (size_t)w) * (size_t)hd,
                   matrix_row(src[w], i) + (size_t)kv * (size_t)hd, (size_t)hd * sizeof(float));
        /* Rows this pipeline's forward computed: "+"; the others came from the cache.  A
           ring's rows are its slots: "[2]" holds the position that went there last. */
        if (ring)
            snprintf(v->work.row_label[r], 40, "[%d]%s%.24s", r, i >= from ? "+" : "",
                     p->query_labels[i]);
        else
            snprintf(v->work.row_label[r], 40, "%s%.30s", i >= from ? "+" : "",
                     p->query_labels[i]);
    }
    v->work.map.m = matrix_view(v->work.scratch, n, 2 * hd);
    spec->m = &v->work.map.m;
    spec->row_labels = (const char *const *)v->work.row_label;
    spec->row_marked = NULL;
    spec->col_labels = (const char *const *)v->work.labels;
    spec->kind = NULL;
    spec->kinds = NULL;
    /* On the scale of the whole layer's cache, every key head. */
    spec->lo = INFINITY;
    spec->hi = -INFINITY;
    for (int w = 0; w < 2; w++) {
        float lo, hi;
        stagemap_matrix_range(src[w], &lo, &hi);
        spec->lo = fminf(spec->lo, lo);
        spec->hi = fmaxf(spec->hi, hi);
    }
    spec->range_heads = p->st.shape.heads;
    spec->data_lo = INFINITY;
    spec->data_hi = -INFINITY;
    stagemap_widen(v->work.scratch, (size_t)n * 2 * (size_t)hd, &spec->data_lo, &spec->data_hi);
    spec->data_known = spec->data_lo <= spec->data_hi;
    return 0;
}
