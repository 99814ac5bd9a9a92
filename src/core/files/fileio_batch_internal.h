/*
 * fileio_batch_internal.h: what the batch's two files (fileio_batch.c,
 * fileio_batch_commit.c) share: paths, signals held while files move,
 * the manifest, and the removal of what killed batches left.  Not part of
 * the core's interface.
 */
#ifndef ATTNSCOPE_FILEIO_BATCH_INTERNAL_H
#define ATTNSCOPE_FILEIO_BATCH_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "attnscope/files/fileio_batch.h"

/* What a staging folder's name holds after the dot and the target's name. */
#define STAGE_TAG ".attnscope-"

const char *batch_base_name(const char *path);

/* Holds the signals that end a batch (their handler removes its temporaries) until released. */
void batch_hold_signals(sigset_t *old);

/*
 * A hidden temporary an earlier attnscope left when it was killed: the
 * per-file ".NAME.csv.XXXXXX" of versions before the staging folder.
 */
bool batch_is_old_temporary(const char *name);

/* Whether the batch writes name: one of its files, or the subfolder some are in. */
bool batch_is_our_name(const struct fileio_batch *b, const char *name);

char *batch_join_path(const char *dir, const char *name);

/* Whether the manifest lists a file in the subfolder sub: a folder an earlier export made. */
bool batch_made_folder(const struct fileio_batch *b, const char *sub);

/*
 * The manifest an earlier export left in the target: the files it wrote
 * into subfolders ("layer2/weights.h0.csv"), one a line after a comment.
 * Only names an export could have written are taken (a subfolder and a
 * .csv file, each part plain): a manifest someone edited can make attnscope
 * drop no other file.  Missing or unreadable: none.
 */
void batch_manifest_read(struct fileio_batch *b);

/* Opens the batch's file name (checked by the caller: the manifest's name is hidden). */
enum attn_status batch_open_entry(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err);

/* The folder that holds path ("." for a bare name). */
char *batch_parent_of(const char *path);

void batch_release_signals(const sigset_t *old);

void batch_remove_folder_files(int at, const char *name);

/*
 * Removes what killed exports left in folder: staging folders whose names
 * start with prefix and whose process is gone, and (in_target) the old
 * per-file temporaries.  A live process's staging folder is left alone.
 */
void batch_remove_leftovers(const char *folder, const char *prefix, bool in_target);

/* Makes a folder's entries durable (renames, links, removals). */
void batch_sync_folder(const char *path);

/* Whether an earlier export (the manifest) wrote sub/name and this batch replaces it. */
bool batch_was_written(const struct fileio_batch *b, const char *sub, const char *name);

/* Whether the batch writes the file sub/name (name inside its subfolder sub). */
bool batch_writes_in(const struct fileio_batch *b, const char *sub, const char *name);

/* qsort's comparison of two strings (the manifest's names, sorted). */
int batch_by_string(const void *a, const void *b);

#endif
