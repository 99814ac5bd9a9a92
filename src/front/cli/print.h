/*
 * print.h: --print, every stage as aligned text tables.
 */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdio.h>

#include "attnscope/families/model/compare.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/cli/print_format.h"
#include "render/palette.h"

struct family_model_state;

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
    bool *failed;                             /* set when a heatmap could not be drawn (may be NULL) */
    int side;                                 /* with two models: 0 every side, or one,
                                                 1 + enum compare_side (--side) */
};

/*
 * The width heatmaps are drawn in: the terminal's columns when known (not
 * 0), else $COLUMNS as the shell gives it (columns_env, may be NULL), else 100.
 * Nonsense (1e9, abc, a huge number) keeps the default.
 */
int print_width(int terminal_cols, const char *columns_env);

/*
 * A trained model's --print: the model and the layer, then the tokens with
 * their ids, the chosen stages of the layer shown (every head's weights
 * without --stage), then the likeliest next tokens after every position.
 */
void print_model(FILE *out, const struct pipeline *p, const struct print_options *po);

/* A table of --print: a matrix, its title and labels. */
struct table {
    const char *title;
    const struct matrix *m;
    const char *const *rows;   /* labels, or NULL: prefix + index */
    const char *row_prefix;
    const char *const *cols;
    const char *col_prefix;
    const unsigned char *mark; /* (rows) 1: append '*' to the row label */
};
/* A table of one number per layer and head (rows "layer L", columns "hH"), titled. */
void print_layers_table(FILE *out, const char *title, const struct matrix *m,
                        const struct print_options *po);
/* t in po's format (text, CSV, Markdown, LaTeX). */
void print_table(FILE *out, const struct table *t, const struct print_options *po);
/* A label cut to at most width columns (with '~' when cut), padded on the right (or left). */
#define LABEL_MAX_WIDTH 12
void print_label(FILE *out, const char *s, int width, int right);
/* print_parts.c: a mixture's experts after the router's table; the sinks' shares after the
   weights' (nothing on a model without them). */
void print_model_experts(FILE *out, const struct pipeline *p, const struct family_model_state *g);
void print_model_sinks(FILE *out, const struct pipeline *p, const struct print_options *po);

/* print_model's header alone: the model, its sizes and names, the layer and the knobs. */
struct family_model_state;
void print_model_header(FILE *out, const struct pipeline *p, const struct family_model_state *g);
/* One of print_model's selections (a stage, tokens, next, heads or lens) without the header. */
void print_model_selection(FILE *out, const struct pipeline *p,
                           const struct pipeline_selection *sel, const struct print_options *po);

/* Writes the header and the chosen stages (or all of them) to out. */
void print_pipeline(FILE *out, const struct pipeline *p, const struct print_options *po);

/*
 * Writes the parameters a stage uses: out_proj's (out_proj), or the queries',
 * keys' and values' weights and biases that head uses.
 */
void print_stage_params(FILE *out, const struct pipeline *p, bool out_proj, int head,
                        const struct print_options *po);

/* Writes one stage (one head of a per-head stage) as po says. */
/*
 * Rows [row0, row0 + rows) and columns [col0, col0 + cols) of stage s (cut
 * to the matrix), titled with where they are in it: a handout's step prints
 * what its screen shows of a real model's 768 columns.  The whole stage when
 * that is all of it.
 */
void print_stage_window(FILE *out, const struct pipeline *p, enum pipeline_stage s, int head,
                        int row0, int rows, int col0, int cols, const struct print_options *po);

/*
 * Every stage of the stage table, a line each: its name, "per head" or
 * "whole", "book and models" or "models" (a block's stages), from the table
 * itself (attnscope --help-stages; tests/man.sh checks the manual has each).
 * Then the selections that are not stages (tokens, next, heads, lens).
 */
void print_stage_list(FILE *out);

void print_stage(FILE *out, const struct pipeline *p, enum pipeline_stage s, int head,
                 const struct print_options *po);
/* The same of one side of a comparison (c NULL: p's own), titled with which it is. */
void print_stage_of(FILE *out, const struct pipeline *p, struct compare *c,
                    enum compare_side side, enum pipeline_stage s, int head,
                    const struct print_options *po);

/*
 * print_compare.c: --print of two models compared: the first's header and
 * the second's name, then each selection three ways (a stage: the first's
 * table, the second's, their difference; next: both models' next tokens and
 * each position's KL divergence; heads: how much each head changed; lens:
 * both lenses and where they part); without --stage, the tokens, every
 * head's weights three ways and the next tokens.
 */
void print_compared(FILE *out, struct compare *c, const struct print_options *po);
/* One of print_compared's selections, without the headers. */
void print_compared_selection(FILE *out, struct compare *c, const struct pipeline_selection *sel,
                              const struct print_options *po);


#endif
