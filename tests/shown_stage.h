/*
 * shown_stage.h: a decoder run's shown-layer (H, n, n) stage as the tests
 * compare it, rows next to one another (the run keeps them with room for
 * the tokens it may grow to: decoder_stage_copy).
 */
#ifndef ATTNSCOPE_SHOWN_STAGE_H
#define ATTNSCOPE_SHOWN_STAGE_H

#include <check.h>
#include <stdlib.h>

#include "attnscope/decoder/decoder.h"

/* A copy of stage (H * n * n floats) the caller frees. */
static inline float *
shown_stage(const struct decoder_config *c, const struct decoder_run *r, const float *stage)
{
    float *out = malloc(((size_t)c->n_head * (size_t)r->n * (size_t)r->n + 1) * sizeof *out);

    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(stage);
    decoder_stage_copy(c, r, stage, out);
    return out;
}

#endif
