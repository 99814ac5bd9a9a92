/*
 * print.h: --print, every stage as aligned text tables.
 */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdio.h>

#include "attnscope/pipeline.h"

struct print_options {
    int digits;                               /* decimals */
    int count;                                /* 0: every stage and parameter */
    const struct pipeline_selection *chosen;  /* (count) what --stage picked */
    const char *vocab_source;                 /* shown in the header */
};

/* Writes the header and the chosen stages (or all of them) to out. */
void print_pipeline(FILE *out, const struct pipeline *p, const struct print_options *po);

/* The number of terminal columns a UTF-8 string takes (one per code point). */
int print_text_width(const char *s);

#endif
