/*
 * family.h: a model family, the seam between the pipeline and a kind of
 * model.
 *
 * A family says which stages it computes and how: from a sentence (or given
 * Q, K and V) and a configuration to every stage buffer of a struct
 * pipeline.  The front ends see only the pipeline and its stage accessor
 * (pipeline_stage_view), so a new family (a trained GPT-2, say) plugs in
 * with its own tokenizer, embeddings, parameters and passes without
 * touching the book's.  See doc/architecture.md, "Adding a model family".
 *
 * The book's chapter-3 classes are one family, "book", whose variants
 * (simple ... mha) are rows of ATTN_VARIANT_LIST.
 */
#ifndef ATTNSCOPE_FAMILY_H
#define ATTNSCOPE_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/attention/attention_config.h"
#include "attnscope/base/status.h"

struct pipeline;
struct pipeline_source;

/* The bit of stage s in a family's stage set. */
#define FAMILY_STAGE(s) ((uint64_t)1 << (s))

struct family {
    const char *name;        /* "book" */
    const char *description;
    uint64_t stages;         /* FAMILY_STAGE(s) for every stage the family computes */
    /*
     * Computes every stage of p (zeroed, with p->cfg, p->family and
     * p->generation set) for cfg from src.  On failure p holds what was made
     * so far, for pipeline_destroy, and err says why.
     */
    enum attn_status (*create)(struct pipeline *p, const struct attention_config *cfg,
                               const struct pipeline_source *src, struct attn_error *err);
    /*
     * Like create, taking over from prev (of this family) what is unchanged
     * (parameters, rows of tokens an edit left alone), or NULL: create.  On
     * failure prev is as it was.
     */
    enum attn_status (*rebuild)(struct pipeline *p, struct pipeline *prev,
                                const struct attention_config *cfg,
                                const struct pipeline_source *src, struct attn_error *err);
    /*
     * Recomputes p's stages from the scores on when only the attention's
     * knobs changed (pipeline_attend_only), or NULL: rebuild instead.  On
     * failure p is as it was.
     */
    enum attn_status (*reattend)(struct pipeline *p, const struct attention_config *cfg,
                                 struct attn_error *err);
    /* Frees what the family keeps in p beyond the common fields, or NULL. */
    void (*destroy)(struct pipeline *p);
    /*
     * The bytes create would allocate for cfg and src (parameters, inputs
     * and stage buffers), worked out before anything is allocated, or NULL
     * (no estimate: no memory limit is checked).  Fails only for inputs
     * create would refuse anyway (an empty sentence), with err set.
     */
    enum attn_status (*estimate)(const struct attention_config *cfg,
                                 const struct pipeline_source *src, size_t *bytes,
                                 struct attn_error *err);
    /*
     * Points p's per-layer stages at block layer (checked by the caller),
     * or NULL: one block.  On failure p is as it was.
     */
    enum attn_status (*select_layer)(struct pipeline *p, int layer, struct attn_error *err);
    /* The stages with a matrix per layer (0: none). */
    uint64_t layer_stages;
    /*
     * The most a pipeline of src may hold (a trained model's stages are
     * sized by the model, not by attnscope's PIPELINE_MAX_BYTES: the
     * machine's memory less the model's weights), with *what naming that
     * limit in messages; NULL: PIPELINE_MAX_BYTES.  A rebuild in the view
     * holds the pipeline shown until the new one is built: the two
     * together are checked against it.
     */
    size_t (*budget)(const struct pipeline_source *src, const char **what);
};

/* The book's chapter-3 classes. */
extern const struct family family_book;
/* A trained GPT-2 from its files (model.h), every block's stages. */
extern const struct family family_model;

/* Every family attnscope has, NULL-terminated. */
extern const struct family *const families[];

/* The family called name, or NULL. */
const struct family *family_find(const char *name);

#endif
