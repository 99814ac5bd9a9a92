/*
 * view_parts.h: the pieces of a frame that view.c draws and the
 * presentation layout (view_present.c) arranges differently.  Internal to
 * the renderer: front ends use view.h.
 */
#ifndef ATTNSCOPE_RENDER_VIEW_PARTS_H
#define ATTNSCOPE_RENDER_VIEW_PARTS_H

#include "render/view.h"

/* The widest cell of one heatmap (presentation mode scales its own). */
#define HEAT_MAX_CELL_W 10
/* The rows the panel that explains the cell takes below the heatmap. */
#define PANEL_BELOW 5

/*
 * The top line: a model's name and layer, the knobs with their keys, and
 * the view's own colour switches while they are on (f: the first key out of
 * the scale, c: the logarithmic scale).
 */
void view_draw_knob_bar(struct grid *g, const struct view *v, const struct pipeline *p);

/* The sentence on row y (the editor while editing). */
void view_draw_sentence(struct grid *g, const struct view *v, const struct pipeline *p, int y);
/*
 * The editor's field on row 1, over the screen: one row, or as many as a
 * long text needs up to a third of the screen (frame.edit_w: their width).
 */
void view_draw_editor(struct grid *g, struct view *v, const struct pipeline *p);

/* The stages, the one shown highlighted, on row y (where clicks find them). */
void view_draw_stage_bar(struct grid *g, struct view *v, const struct pipeline *p, int y);

/*
 * A lesson's words on the model's own screens, from row 5: the row the
 * screen's own content starts on (content_y without a lesson).
 */
int view_overlay_narration(struct grid *g, struct view *v, int content_y);

/* heads.c: tiles of width w for heads heads: how many, per row, in rows. */
void view_tile_layout(int w, int heads, int *tiles, int *per_row, int *tile_rows);

/* Whether the panel goes beside the heatmaps (*heat_w: their width then). */
bool view_panel_beside(struct view *v, const struct pipeline *p, int width, int height,
                       int *heat_w);

/* Wraps text into r at spaces; returns the rows used. */
int view_draw_wrapped(struct grid *g, struct rect r, struct style st, const char *text);

/* The rows text takes wrapped at width. */
int view_count_wrapped(const char *text, int width);

/* The footer: a message, or the keys that matter now. */
void view_draw_footer(struct grid *g, const struct view *v, int y);

/* "How this cell is made" for the cursor's cell, in r. */
void view_draw_inspector(struct grid *g, struct rect r, struct view *v, const struct pipeline *p);

/* Whether the all-heads grid is showing. */
bool view_showing_grid(const struct view *v, const struct pipeline *p);

/* Heads side by side in the grid of a w x h area (see view.c). */
int view_choose_per_row(struct view *v, const struct pipeline *p, int w, int h);

/*
 * The heatmap (or the grid's tiles, per_row heads side by side) in r, cells
 * at most max_cell_w wide and row_gap blank lines between rows.
 */
void view_draw_heatmaps(struct grid *g, struct rect r, struct view *v, const struct pipeline *p,
                        int per_row, int max_cell_w, int row_gap);

/* The legend on row y, in w columns from x. */
void view_draw_legend(struct grid *g, int x, int y, int w, struct view *v,
                      const struct pipeline *p);

/*
 * The lesson's title and step, then the narration in r from the row
 * v->narration_scroll, with a last row saying how to page when it does not
 * fit; returns the rows used and records the body's rows in v->frame.
 */
int view_draw_narration(struct grid *g, struct view *v, struct rect r);

/* The rows the whole narration (title line included) takes at width. */
int view_narration_rows(const struct view *v, int width);

/*
 * " k1" beside a query head's name when the model groups its keys (the key
 * and value head it reads, so that the heads that share one read as a
 * group), else "".  Into buf, returned.
 */
const char *view_key_head(const struct pipeline *p, int head, char *buf, size_t size);

/*
 * Which of two models' numbers are shown, for a title: "[second: NAME] ",
 * "[SECOND - FIRST] " (the difference, by the models' names), or "" alone.
 */
void view_compared(const struct view *v, char *buf, size_t size);
/* The stage's title ("Attention weights, head 0 of 2 (6 x 6)") and formula. */
void view_stage_title(struct view *v, const struct pipeline *p, char *title, size_t title_size,
                      char *formula, size_t formula_size);

/* view.c's scratch: room for floats numbers, column labels q0..v<hd-1>, rows row labels. */
int view_reserve_scratch(struct view *v, size_t floats);
int view_qkv_labels(struct view *v, int hd);
/* Column labels for groups of hd columns, a letter each ("kv": k0.. v0..). */
int view_group_labels(struct view *v, int hd, const char *letters);
/*
 * The KV cache stage (view_cache.c): the layer's cached keys (as the
 * scores read them) and values of head's key head side by side, the rows
 * the last forward computed labelled "+".
 */
int view_cache_spec(struct view *v, const struct pipeline *p, int head, struct heatmap_spec *spec);
int view_reserve_row_labels(struct view *v, int rows);

/* The parameters of stage s for head as a heatmap spec: 0, or -1 out of memory. */
int view_params_spec(struct view *v, const struct pipeline *p, enum view_stage s, int head,
                     struct heatmap_spec *spec);

/* Their title and formula. */
void view_params_title(const struct view *v, const struct pipeline *p, char *title,
                       size_t title_size, char *formula, size_t formula_size);

/* What the stage shows, in two or three sentences (its parameters' when W shows them). */
void view_explain_text(const struct view *v, const struct pipeline *p, char *buf, size_t size);
void view_params_text(const struct view *v, const struct pipeline *p, char *buf, size_t size);

/* The presentation layout (v->present): centred, scaled to the screen. */
void view_render_present(struct view *v, const struct pipeline *p, struct grid *g);

/*
 * Presentation mode for a screen without a layout of its own (the map, the
 * sentence, the predictions): drawn without its bars, the whole centred on
 * the screen, a message kept on the last row.
 */
void view_present_screen(struct view *v, const struct pipeline *p, struct grid *g,
                         void (*draw)(struct grid *g, struct view *v, const struct pipeline *p));

/* The smallest rectangle of g's rows [0, rows) holding anything but blanks; w 0 when none. */
struct rect view_inked(const struct grid *g, int rows);
/* Presentation mode's lines of text on a screen width wide, and the column a lesson's words start at
   on every screen (so that they do not move from step to step). */
int view_present_text_width(int width);
int view_present_text_x(int width);

/* A screen's line of keys under its title: none in presentation mode. */
void view_draw_keys_hint(struct grid *g, const struct view *v, int y, const char *text);

/*
 * The help: every key with what it does, descriptions wrapped (never cut),
 * in two columns on wide screens, scrolled by rows; the last row says when
 * more follows.  frame.help_rows and help_page let the keys scroll it.
 */
void view_draw_help(struct grid *g, struct view *v);
void view_draw_picker(struct grid *g, const struct view *v);

#endif
