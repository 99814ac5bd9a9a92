/*
 * model_export.h: a trained model's export, every layer as CSV files, and
 * what its view's screens show.
 */
#ifndef ATTNSCOPE_MODEL_EXPORT_H
#define ATTNSCOPE_MODEL_EXPORT_H

#include "attnscope/pipeline/export.h"
#include "attnscope/pipeline/pipeline.h"

/*
 * A trained model's export (family_model): tokens.csv (position,id,token),
 * the model-wide stages (embeddings.csv, positional.csv, final.csv),
 * layerL/ for every layer with its stages under the names above
 * (weights.hH.csv, ln1.csv, residual1.csv, ...), and next.csv
 * (position,rank,id,token,probability); or only the selected ones (count
 * of them, when sel is not NULL: "tokens", "next", "heads" (heads.csv,
 * the model map) and "lens" (lens.csv, the logit lens after the last
 * token) among them), a per-layer stage in every layer's folder.  All or
 * nothing.  The whole export replaces the layer folders an earlier one
 * made (a smaller model's leaves no stale layers); a selection adds its
 * files beside them.  Moves through p's layers and back to the one shown.
 */
enum attn_status export_model(struct pipeline *p, const struct pipeline_selection *sel, int count,
                              const char *dir, int *written, struct attn_error *err);
/*
 * export_model of a text a model wrote (generate.h), with generated.csv
 * beside it (step,position,id,token,probability: a row per written token,
 * the token as tokens.csv writes it, the probability it was drawn with,
 * its position counted in the whole text), in the same all-or-nothing
 * batch.  gen NULL: export_model.
 */
struct generation;
enum attn_status export_model_written(struct pipeline *p, const struct pipeline_selection *sel,
                                      int count, const struct generation *gen, const char *dir,
                                      int *written, struct attn_error *err);

/*
 * A comparison's export (compare.h): the first model's files into dir as
 * export_model_written writes them, with heads-changed.csv
 * (layer,head,measure: compare_heads_changed) and next-kl.csv
 * (position,token,kl: compare_next_kl) beside them when the heads or the
 * next tokens are exported (a whole export: both); the second model's
 * files into dir/compare; the difference of every stage exported (second
 * minus first) into dir/difference under the same names.  Each of the
 * three folders is written all or nothing, the first's first.
 */
struct compare;
enum attn_status export_model_compared(struct compare *c, const struct pipeline_selection *sel,
                                       int count, const struct generation *gen, const char *dir,
                                       int *written, struct attn_error *err);

/*
 * What a trained model's view exports with x: the stage shown (in its
 * layer's folder, layerL/weights.hH.csv, as --export names it, or at the
 * top for a model-wide stage), the model map (heads.csv: a row per layer
 * and head, every measure), or the predictions (next.csv, and lens.csv:
 * the logit lens after position, each layer's likeliest tokens).  Files
 * of other layers, other stages and of the user stay.  EXPORT_MODEL_QKV:
 * the layer's queries, keys and values together.
 */
enum export_model_what {
    EXPORT_MODEL_STAGE,
    EXPORT_MODEL_QKV,
    EXPORT_MODEL_MAP,
    EXPORT_MODEL_NEXT,
    EXPORT_MODEL_CACHE /* the layer's KV cache: the keys as the scores read them, the values */
};

/* head: one, or -1 for every head of a per-head stage; position: the lens's (-1: the last). */
enum attn_status export_model_view(struct pipeline *p, enum export_model_what what,
                                   enum pipeline_stage s, int head, int position, const char *dir,
                                   int *written, struct attn_error *err);

#endif
