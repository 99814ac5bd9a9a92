/*
 * pipeline_harness.h: what the pipeline's test programs share
 * (check_pipeline.c, check_pipeline_seams.c): the book's vocabulary and a
 * pipeline run on a sentence.
 */
#ifndef ATTNSCOPE_PIPELINE_HARNESS_H
#define ATTNSCOPE_PIPELINE_HARNESS_H

#include <math.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attnscope/kernels/linalg.h"
#include "attnscope/pipeline/pipeline.h"
#include "testutil.h"

static struct vocab book_vocab;

static inline void
setup(void)
{
    ck_assert_int_eq(vocab_builtin(&book_vocab, NULL), ATTN_OK);
}

static inline void
teardown(void)
{
    vocab_destroy(&book_vocab);
}

/* The pipeline of cfg on sentence, words looked up in v. */
static inline void
run(struct pipeline *p, const struct attention_config *cfg, const char *sentence,
    const struct vocab *v)
{
    struct pipeline_source src = { .sentence = sentence, .vocab = v };
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "pipeline: %s", err.msg);
}

/* "a a ... a": n one-letter words into buf (2n bytes). */
static inline void
words_of_a(char *buf, int n)
{
    for (int i = 0; i < n; i++) {
        buf[2 * i] = 'a';
        buf[2 * i + 1] = ' ';
    }
    buf[2 * n - 1] = '\0';
}

#endif
