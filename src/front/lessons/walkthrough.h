/*
 * walkthrough.h: scripted lessons (doc/walkthroughs.md describes the format).
 *
 * A walkthrough is a text file of steps; each step names a configuration
 * (the command-line options), a stage, optionally a head and a cell, and has
 * a paragraph of narration.  Numbers in the narration are references into
 * the pipeline, {weights[journey][starts]=0.2333}, shown with the core's value
 * and checked against the number written after '='.
 */
#ifndef ATTNSCOPE_WALKTHROUGH_H
#define ATTNSCOPE_WALKTHROUGH_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/base/status.h"
#include "attnscope/text/vocab.h"
#include "front/cli/cli.h"
#include "front/cli/inputs.h"
#include "front/cli/print.h"
#include "render/explain.h"

struct model;
struct walk_models;

/* A walkthrough file may not be larger than this. */
#define WALK_MAX_BYTES (1u << 20)
#define WALK_MAX_ARGS 62

struct walk_step {
    char *title;
    int line;                 /* where "step:" is */
    char *options;            /* the step's options, added to the walkthrough's */
    int options_line;
    enum view_stage stage;
    int stage_line;
    int head;
    char *cell_row;           /* a label or a number, or NULL */
    char *cell_col;
    int cell_line;
    bool grid;                /* view: grid */
    bool mask_matrix;         /* view: mask */
    bool param_matrix;        /* view: params (on qkv or output: the parameters it uses) */
    enum walk_screen { WALK_SCREEN_STAGE, WALK_SCREEN_SENTENCE, WALK_SCREEN_MAP,
                       WALK_SCREEN_NEXT } screen; /* view: sentence, map MEASURE, next */
    int measure;              /* view: map's measure (enum head_measure) */
    int layer;                /* layer: (a model's), or -1: the options' --layer, else 0 */
    int layer_line;
    int side;                 /* side: first, second or difference (enum compare_side; a step
                                 whose options --compare a second model), default first */
    int side_line;
    char *narration;          /* with {references} */
    int narration_line;
};

struct walkthrough {
    char *path;
    char *dir;                /* relative paths in options are relative to it */
    char *title;
    char *options;            /* options for every step */
    int options_line;
    int count;
    struct walk_step *steps;
    struct walk_models *models; /* the models its steps opened, kept for the next step */
};

/* Reads and parses path; errors name path:line. */
enum attn_status walkthrough_load(struct walkthrough *w, const char *path, struct attn_error *err);

/* Parses len bytes of walkthrough text; path names it in messages and anchors relative paths. */
enum attn_status walkthrough_parse(struct walkthrough *w, const char *path, const char *text,
                                   size_t len, struct attn_error *err);
void walkthrough_destroy(struct walkthrough *w);

/* What one step needs loaded to build its pipeline. */
struct walk_resources {
    struct cli_options opts;
    char *argv_text;           /* the argument strings opts points into */
    char *paths[4];            /* resolved -e, --qkv, --weights, --source-embeddings */
    struct inputs in;          /* what they load */
    const struct model *model; /* --model: a trained model, owned by the walkthrough */
    struct model_switch_masks switches; /* its --ablate heads, --expert-off experts (switches.h) */
    int layer;                 /* the layer the step shows */
    struct generation *writing; /* --generate: what the model wrote (the step's pipeline is
                                   its text), or NULL */
    /* --compare: the second model (the walkthrough's), its pipeline of the step's text, and
       the comparison the step's pipeline is the first of (its state's compared), or NULL */
    const struct model *second;
    struct pipeline *second_pipe;
    struct compare *cmp;
};

/*
 * Parses step k's options (the walkthrough's, then the step's) and loads
 * its vocabulary, Q/K/V and weights, or its trained model (--model: a
 * folder relative to the lesson, a shipped model or a name in the Hugging
 * Face cache, else $ATTNSCOPE_MODEL); errors name path:line.  A model that
 * is not on this machine fails with ATTN_EABSENT, so that checks can say
 * the lesson was skipped.
 */
enum attn_status walkthrough_resources(const struct walkthrough *w, int k,
                                       struct walk_resources *res, struct attn_error *err);
void walk_resources_destroy(struct walk_resources *res);

/*
 * The model a lesson's header options name (--model) when it is not on this
 * machine, written into buf; NULL when the lesson needs none or it is here.
 * The picker marks such lessons without opening any model.
 */
const char *walkthrough_absent_model(const struct walkthrough *w, char *buf, size_t size);
/*
 * Whether --model what is the lesson's own model (its header options'
 * --model, found as the lesson finds it): 1 when both name the same folder
 * or file, 0 when they differ or the lesson opens none (its name, or "", in
 * lesson), -1 when what is not found (model_locate's reason in err).
 */
int walkthrough_same_model(const struct walkthrough *w, const char *what, char *lesson,
                           size_t size, struct attn_error *err);

/* The empty set of models a walkthrough's steps open (NULL: out of memory), and its end. */
struct walk_models *walk_models_new(void);
void walk_models_close(struct walk_models *models);

/*
 * Loads step k's resources into res and computes its pipeline into p; on
 * failure neither is left to destroy and err names path:line.
 */
enum attn_status walkthrough_step_pipeline(const struct walkthrough *w, int k,
                                           struct walk_resources *res, struct pipeline *p,
                                           struct attn_error *err);

/* The pipeline source of loaded resources. */
struct pipeline_source walk_resources_source(const struct walk_resources *res);

/*
 * Where step k puts the cursor: the cell's row and column in the view's
 * matrix of p.  Returns 0, or -1 with path:line in err when the step names
 * a cell p does not have.
 */
int walkthrough_cell(const struct walkthrough *w, int k, const struct pipeline *p, int *row,
                     int *col, struct attn_error *err);

/*
 * Who a narration is for: the interactive view, the view with no cell panel
 * on the screen (its {panel: ...} spans left out), or a handout on paper.
 */
enum walk_audience { WALK_VIEW, WALK_PAPER, WALK_VIEW_BARE };

/*
 * Step k's narration for audience, with every reference replaced by its
 * value from p, the `quotes` marks removed and only that audience's
 * {view: ...}, {paper: ...} or {panel: ...} spans kept, however long, in a string the
 * caller frees.  NULL with path:line in err for a reference p has no value
 * for or a span left open.
 */
char *walkthrough_narrate(const struct walkthrough *w, int k, const struct pipeline *p,
                          enum walk_audience audience, struct attn_error *err);

/*
 * Checks everything step k's narration quotes against p: every reference
 * must resolve and round to the number written after '=', and every number
 * with three or more decimals must be such a reference or in `quotes`.
 * Returns the number of references checked, or -1 with path:line in err.
 */
int walkthrough_verify_step(const struct walkthrough *w, int k, const struct pipeline *p,
                            struct attn_error *err);

/*
 * Everything step k asks of p: its stage exists, its head, its cell, and
 * its narration's numbers (walkthrough_verify_step).  The references
 * checked, or -1 with path:line in err.  The view checks each step this way
 * when it is played, so a long lesson starts at once.
 */
int walkthrough_check_step(const struct walkthrough *w, int k, const struct pipeline *p,
                           struct attn_error *err);

/* Builds every step and checks it (the handout, the tests); the references checked, or -1. */
int walkthrough_verify(const struct walkthrough *w, struct attn_error *err);

/*
 * Writes the walkthrough as a handout: each step's title, narration
 * (wrapped to width columns) and the table of its stage.  Returns 0, or -1
 * with err set.
 */
int walkthrough_print(FILE *out, const struct walkthrough *w, const struct print_options *po,
                      int width, struct attn_error *err);

/*
 * The folders the installed walkthroughs are looked for in, in order:
 * $ATTNSCOPE_WALKTHROUGHS, the package's data folder, samples/walkthroughs
 * beside the program, and ./samples/walkthroughs.
 * Returns how many of them exist (up to max).
 */
int walkthrough_dirs(const char **dirs, int max);

/*
 * The walkthrough named name: a path, or a file name (with or without
 * ".walk") in one of walkthrough_dirs().  Writes the path into buf.
 */
int walkthrough_find(const char *name, char *buf, size_t size);
/*
 * --walkthrough name given with --model what: 1 when
 * what is the lesson's own model (the lesson opens it; --model may be
 * dropped), else 0 with why in msg (a lesson for the book's classes, or one
 * on another model), or -1 when the lesson or the model cannot be read.
 */
int walkthrough_model_given(const char *name, const char *what, char *msg, size_t size);

/*
 * The names of the lessons in the lessons folders (without .walk), sorted,
 * comma-separated into buf; returns how many.
 */
size_t walkthrough_names(char *buf, size_t size);

/*
 * The index of a row or column named by its label (labels), by prefix and
 * its number ("d2"), or by a number from 0; -1 when n has none of that name.
 * (Shared by the walkthrough files.)
 */
int walkthrough_find_label(const char *name, const char *const *labels, const char *prefix, int n);

#endif
