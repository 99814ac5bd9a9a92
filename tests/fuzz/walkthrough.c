/*
 * walkthrough.c: fuzzes the walkthrough parser, then builds the first
 * steps of whatever parses: their options, their pipelines, the cell they
 * point at, their narration and its checked references.
 *
 * The file is named as if it were in a folder that does not exist, so a
 * step's relative paths (-e, --qkv, --weights) fail to open; steps whose
 * options hold a '/' are not built, so the fuzzer cannot read files of
 * this machine.
 */
#include "config.h"

#include <stdlib.h>

#include "fuzz.h"
#include "front/lessons/walkthrough.h"

static void
build_step(const struct walkthrough *w, int k)
{
    struct walk_resources res;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    char *narration;
    int row;
    int col;

    if ((w->options != NULL && strchr(w->options, '/') != NULL) ||
        (w->steps[k].options != NULL && strchr(w->steps[k].options, '/') != NULL))
        return;
    if (walkthrough_resources(w, k, &res, &err) != ATTN_OK)
        return;
    src = walk_resources_source(&res);
    if (fuzz_small(&res.opts.cfg, res.opts.sentence) &&
        pipeline_create(&p, &res.opts.cfg, &src, &err) == ATTN_OK) {
        walkthrough_cell(w, k, &p, &row, &col, &err);
        narration = walkthrough_narrate(w, k, &p, WALK_VIEW, &err);
        free(narration);
        narration = walkthrough_narrate(w, k, &p, WALK_PAPER, &err);
        free(narration);
        walkthrough_check_step(w, k, &p, &err);
        pipeline_destroy(&p);
    }
    walk_resources_destroy(&res);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct walkthrough w;
    struct attn_error err;

    if (walkthrough_parse(&w, "/nonexistent/fuzz.walk", (const char *)data, size, &err) != ATTN_OK)
        return 0;
    if (w.count < 1 || w.title == NULL)
        abort(); /* a parsed walkthrough has a title and a step */
    for (int k = 0; k < w.count && k < 3; k++)
        build_step(&w, k);
    walkthrough_destroy(&w);
    return 0;
}
