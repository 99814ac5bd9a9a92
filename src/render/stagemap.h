/*
 * stagemap.h: how a stage of the pipeline is drawn as a heatmap.
 *
 * One place decides, for every stage, the ramp (sequential for weights,
 * diverging for signed values), the range the colours span (the stage's own
 * minimum and maximum over every head, so heads compare), and which cells
 * are special: masked weights, dropped weights, the mask itself.  The
 * interactive view and --heatmap both draw through it.
 */
#ifndef ATTNSCOPE_RENDER_STAGEMAP_H
#define ATTNSCOPE_RENDER_STAGEMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/families/model/compare.h"
#include "attnscope/pipeline/pipeline.h"
#include "render/heatmap.h"

struct stagemap {
    const struct pipeline *p;
    enum pipeline_stage stage;
    int head;
    bool mask_matrix;  /* draw the mask itself: visible and hidden cells */
    /*
     * The caller's: leave the first key's column out of a key-by-key
     * stage's colour scale (the attention sink most weight pours into).
     */
    bool skip_first;
    /* The caller's: weights on a logarithmic colour scale (small ones told apart). */
    bool log_scale;
    /*
     * The caller's: a comparison of two models (compare.h) and which of its
     * three to draw; NULL: p's own stage.  The difference is drawn on a
     * diverging ramp centred on zero, weights too, its range every head's.
     */
    struct compare *compare;
    enum compare_side side;
    struct matrix m;   /* what the spec points at */
    /*
     * The last range computed, for the same pipeline generation, shown
     * layer and stage: one for each side of a comparison (the cell panel
     * asks all three each frame; [0] without one).
     */
    struct stagemap_range {
        unsigned long generation;
        unsigned long other;   /* the compared model's generation (0: none) */
        int layer;
        enum pipeline_stage stage;
        bool skip_first;
        float positive;        /* the smallest number above 0 the scale spans (a log scale's start) */
        float lo;
        float hi;
    } range[COMPARE_SIDES];
};

/*
 * Fills spec for stage s (head, for per-head stages) of p.  sm holds what
 * the spec points at and must outlive it; kept from frame to frame (zeroed
 * at first), it also remembers the stage's range.  mask_matrix: cells show
 * the mask rather than values.
 */
void stagemap_spec(struct stagemap *sm, const struct pipeline *p, enum pipeline_stage s, int head,
                   bool mask_matrix, bool colour, bool utf8, struct heatmap_spec *spec);

/* Widens lo..hi to take in the finite values of x's n. */
void stagemap_widen(const float *x, size_t n, float *lo, float *hi);

/* The finite minimum and maximum of x (0 and 0 when there is none). */
void stagemap_range(const float *x, size_t n, float *lo, float *hi);
/* The same of a matrix's elements (its rows, whatever its stride). */
void stagemap_matrix_range(const struct matrix *m, float *lo, float *hi);

/* The cell kinds of a stage (the heatmap_spec kind callback); ctx is a struct stagemap. */
enum heat_kind stagemap_kind(const void *ctx, int i, int j);
/*
 * The kinds the legend names, without asking stagemap_kind of every cell
 * when the values hold no NaN or -inf: a vector pass over them, and the
 * masked and dropped cells looked for until one is found.
 */
void stagemap_kinds(const void *ctx, int seen[HEAT_ABSENT + 1]);

#endif
