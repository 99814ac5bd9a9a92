/*
 * view.h: one whole frame of the interactive view, drawn into a grid.
 *
 * struct view holds what the user is looking at (stage, head, cursor,
 * scrolling, the all-heads grid, the help screen, the sentence editor) and
 * scratch space; view_render() is a pure function of it and the pipeline.
 * The front end changes the state on keys and copies the grid to the
 * terminal; the tests compare the grid with golden text.
 */
#ifndef ATTNSCOPE_RENDER_VIEW_H
#define ATTNSCOPE_RENDER_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/pipeline/pipeline.h"
#include "render/explain.h"
#include "render/grid.h"
#include "render/heatmap.h"
#include "render/stagemap.h"

/* Smaller than this, the view says so instead of drawing. */
#define VIEW_MIN_WIDTH 50
#define VIEW_MIN_HEIGHT 16

/* The model map's choice after its measures (enum head_measure): every head's weights, small. */
#define VIEW_MAP_HEATMAPS 8

/* The all-heads grid shows at most this many heads at once. */
#define VIEW_MAX_TILES 16

struct view_help_line {
    const char *keys;
    const char *what;
};

/* Filled by view_render: what the frame holds, for keys and clicks. */
struct view_frame {
    bool too_small;                             /* the screen was too small to draw on */
    int tiles;                                  /* heatmaps drawn */
    int tile_head[VIEW_MAX_TILES];
    struct heatmap_geometry geo[VIEW_MAX_TILES]; /* for mouse clicks */
    int rows;                                   /* the shape of the shown matrix */
    int cols;
    int help_rows;                              /* the help's rows, wrapped */
    int help_page;                              /* how many of them one screen shows */
    int stage_bar_y;                            /* the stage bar's row; -1: not drawn */
    int stage_x[VIEW_STAGE_COUNT][2];           /* its entries' columns [from, to); -1: none */
    int narration_rows;                         /* the narration's body, wrapped */
    int narration_page;                         /* how many of them were shown */
    int narration_x;                            /* the column the narration starts at; -1: none */
    int map_layers;                             /* layers the map's heatmaps showed at once */
    int heads_first, heads_shown;               /* the grid of heads: which it showed (paged) */
    int next_rows;                              /* positions the predictions showed at once */
    int edit_w;                                 /* the editor's rows' width (0: not drawn) */
};

/*
 * view.c's working memory, kept from frame to frame: what the current
 * heatmap spec points at, and matrices and labels assembled from several
 * buffers.  Nothing outside view.c reads it.
 */
/* The screens (screen.h), a file and a row each. */
enum view_screen { SCREEN_STAGE, SCREEN_MAP, SCREEN_SENTENCE, SCREEN_NEXT, SCREEN_COUNT };

struct view_work {
    struct stagemap map;
    float *scratch;
    size_t scratch_cap;
    char **labels;
    size_t labels_cap;
    char *label_text;
    char **row_label;
    size_t row_label_cap;
    char *row_label_text;
    float *side[3];    /* a comparison's differences of Q, K and V (or the context), kept */
    size_t side_cap[3];
    int qkv_rows[3];   /* Q | K | V side by side: the rows each has (fewer queries than keys) */
    int qkv_width;     /* columns each of them takes */
};

struct view {
    enum view_stage stage;
    int head;
    int cursor_row;
    int cursor_col;
    int scroll_row;
    int scroll_col;
    bool grid_heads;      /* every head side by side */
    bool mask_matrix;     /* the mask stage shows the mask itself */
    bool param_matrix;    /* param_stage (Q K V or output) shows the parameters it uses (W) */
    enum view_stage param_stage;
    bool help;
    int help_scroll;
    bool editing;
    bool editing_source; /* the edit field holds cross-attention's source sentence */
    bool editing_knob;   /* the edit field holds a knob and its value (':', "seed 789") */
    bool skip_first_key; /* the first key's column left out of the colour scale (f) */
    bool log_scale;      /* weights on a logarithmic colour scale (c) */
    const char *edit_text;   /* the editor's text (the front end's) */
    size_t edit_cursor;      /* byte offset in edit_text */
    const char *message;     /* shown in the footer, or NULL */
    bool message_is_error;
    bool colour;
    bool utf8;
    const struct view_help_line *help_lines; /* the front end's key table */
    int help_count;
    const char *const *footer_items; /* the keys the footer names (the front end's table) */
    int footer_count;
    bool present;            /* presentation mode: no bars, big cells, high contrast */
    bool blank;              /* a lesson's screen blanked (b or ., as presentation programs do) */
    bool paper;              /* drawn for a figure: what is shown is said, never a key */

    /* A walkthrough being played (narration NULL: none). */
    const char *narration;   /* the step's narration, its references resolved */
    const char *narration_bare; /* the same without what speaks of the cell panel, for a
                                   layout that leaves the panel out (NULL: the narration) */
    bool narration_stale;    /* computed again since the step (a knob, an edit): it may not hold */
    const char *walk_title;
    const char *step_title;
    int step;                /* from 0 */
    int steps;
    bool following;          /* on the script (false: exploring away from it) */
    int narration_scroll;    /* the first row of the narration shown (paged with [ and ]) */
    bool hide_panel;         /* the cell's explanation hidden (i): more room for the matrix */

    /*
     * The screen shown (screen.h): the stage's heatmap; the model map (L, a
     * trained model: one number per layer and head); the sentence view (T:
     * the text shaded by the weights of the query at cursor_row); the
     * predictions (N, a trained model: next tokens per position, the logit
     * lens).
     */
    enum view_screen screen;
    int map_measure;         /* enum head_measure, or VIEW_MAP_HEATMAPS */
    int map_row, map_col;    /* the cursor: layer, head */
    int map_first;           /* the first layer the map's heatmaps show (they scroll) */
    int next_first;          /* the first position the predictions show (they scroll) */
    bool key_side;           /* the sentence view: who attends to the key (cursor_col) */
    /*
     * The predictions without the ablated heads, for the one with them
     * (the front end makes them): base_n positions of base_top each, or
     * base_n 0 for none.
     */
    const int *base_ids;
    const float *base_probs;
    int base_n, base_top;

    /* The walkthrough picker, or the list of a lesson's steps. */
    bool picker;
    const char *picker_title;  /* its heading; NULL: the lessons */
    const char *const *picker_items;
    int picker_count;
    int picker_sel;

    /*
     * Two models compared (compare.h; the front end's, NULL: one model):
     * which of the three the stages show, and the header names both.
     */
    struct compare *compare;
    enum compare_side side;

    struct view_frame frame; /* what view_render drew, for the front end */
    struct view_work work;   /* view.c's own */
};

/* Whether stage s of v shows the parameters it uses instead of its numbers (W). */
bool view_params_shown(const struct view *v, const struct pipeline *p, enum view_stage s);

void view_init(struct view *v);
void view_destroy(struct view *v);

/* Draws the frame; g's size is the terminal's. */
void view_render(struct view *v, const struct pipeline *p, struct grid *g);

/*
 * The byte of text t the editor's cursor goes to from pos one row up (dir
 * -1) or down (+1) as the last frame laid it out (frame.edit_w wide): the
 * same column or the row's last character before it; 0 above the first
 * row, the end below the last.
 */
size_t view_edit_move_row(const struct view *v, const char *t, size_t pos, int dir);

/*
 * The matrix the current stage shows for head, as a heatmap spec (the view's
 * scratch may hold it).  Returns -1 when memory runs out.
 */
int view_stage_spec(struct view *v, const struct pipeline *p, enum view_stage s, int head,
                    struct heatmap_spec *spec);

/* Moves to the next (+1) or previous (-1) stage p shows; false at either end. */
bool view_step_stage(struct view *v, const struct pipeline *p, int dir);

/* The stage whose entry in the stage bar the last frame drew at (x, y), or -1. */
int view_stage_at(const struct view *v, int x, int y);

/* Keeps stage, head and cursor inside what p has (after a knob changed). */
void view_clamp(struct view *v, const struct pipeline *p);

#endif
