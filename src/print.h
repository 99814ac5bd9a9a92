/*
 * print.h: --print, every stage as aligned text tables.
 */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdio.h>

#include "attnscope/pipeline.h"

struct print_options {
    int digits;                 /* decimals */
    int stage_count;            /* 0: every stage and parameter */
    const char *const *stages;  /* names: "weights", "weights.h1", "W_query.weight" */
    const char *vocab_source;   /* shown in the header */
};

/*
 * Writes the header and the chosen stages to out.  Returns 0, or -1 with a
 * message naming the --stage value in err when a name is unknown (nothing is
 * printed then).
 */
int print_pipeline(FILE *out, const struct pipeline *p, const struct print_options *po,
                   char *err, size_t err_size);

/* The number of terminal columns a UTF-8 string takes (one per code point). */
int print_text_width(const char *s);

#endif
