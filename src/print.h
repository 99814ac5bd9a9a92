/*
 * print.h: --print, every stage as aligned text tables.
 */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdio.h>

#include "attnscope/pipeline.h"
#include "render/palette.h"

enum print_format { PRINT_TEXT, PRINT_CSV, PRINT_MARKDOWN, PRINT_LATEX };

struct print_options {
    int digits;                               /* decimals */
    int count;                                /* 0: every stage and parameter */
    const struct pipeline_selection *chosen;  /* (count) what --stage picked */
    const char *vocab_source;                 /* shown in the header */
    enum print_format format;
    bool heatmap;                             /* draw heatmaps instead of tables */
    enum palette_depth depth;                 /* heatmap colours (DEPTH_MONO: glyphs) */
    bool utf8;                                /* heatmap glyphs in UTF-8 */
    int width;                                /* heatmap width in columns */
};

/* Parses a --format value; returns 0, or -1 for an unknown name. */
int print_format_parse(const char *name, enum print_format *f);

/* Writes the header and the chosen stages (or all of them) to out. */
void print_pipeline(FILE *out, const struct pipeline *p, const struct print_options *po);

/* Writes one stage (one head of a per-head stage) as po says. */
void print_stage(FILE *out, const struct pipeline *p, enum pipeline_stage s, int head,
                 const struct print_options *po);


#endif
