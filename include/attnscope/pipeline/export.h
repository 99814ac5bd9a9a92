/*
 * export.h: every stage and parameter of a pipeline as CSV files.
 *
 * File names (hH is the head, from 0):
 *   tokens.csv        each token, its position, and whether the vocabulary had it
 *   vocabulary.csv    the sentence's tokens and vectors (made-up ones too), a
 *                     vocabulary that --embeddings reads back
 *   embeddings.csv, positional.csv   only with --positional
 *   inputs.csv, queries.csv, keys.csv, values.csv (heads side by side)
 *   scores.hH.csv, masked.hH.csv, scaled.hH.csv, weights.hH.csv, dropped.hH.csv
 *   keep.hH.csv       1 kept, 0 dropped: only when dropout is on
 *   context.csv, output.csv
 *   NAME.csv          each parameter under its PyTorch state_dict name
 * Everything is written to temporary files first and renamed into place only
 * when all of them were written, so a failed export leaves no half-written
 * files.
 */
#ifndef ATTNSCOPE_EXPORT_H
#define ATTNSCOPE_EXPORT_H

#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/files/fileio_batch.h"
#include "attnscope/pipeline/pipeline.h"

/* Writes every file listed above into dir; *written counts them. */
enum attn_status export_all(const struct pipeline *p, const char *dir, int *written,
                            struct attn_error *err);

/* Writes only the selected stages, heads and parameters into dir. */
enum attn_status export_selection(const struct pipeline *p,
                                  const struct pipeline_selection *sel, int count,
                                  const char *dir, int *written, struct attn_error *err);

/* Writes one stage (every head of a per-head stage) into dir. */
enum attn_status export_stage(const struct pipeline *p, enum pipeline_stage s, const char *dir,
                              int *written, struct attn_error *err);

/*
 * For the families' own exports (a trained model's: model_export.h): stage
 * s of p into the batch, in folder (NULL: the top), one head or every head
 * when head is -1, under export_file_name's names; and the end of a batch,
 * committed when st is ATTN_OK (*written its files) or abandoned.
 */
struct fileio_batch;
enum attn_status export_write_stage(struct fileio_batch *b, const struct pipeline *p,
                                    enum pipeline_stage s, int head, const char *folder,
                                    struct attn_error *err);
/* One view of stage s (head h's) into the batch under its file's name (a comparison's). */
enum attn_status export_write_view(struct fileio_batch *b, const struct pipeline_view *v,
                                   enum pipeline_stage s, int head, const char *folder,
                                   struct attn_error *err);
/* The heads export_write_stage writes of s: head alone, or every head of a per-head stage (-1). */
void export_heads_of(const struct pipeline *p, enum pipeline_stage s, int head, int *first,
                     int *last);
enum attn_status export_finish(struct fileio_batch *b, enum attn_status st, int *written,
                               struct attn_error *err);

/* The file name of stage s (and head, for per-head stages): "weights.h1.csv". */
void export_file_name(enum pipeline_stage s, int head, char *buf, size_t size);

#endif
