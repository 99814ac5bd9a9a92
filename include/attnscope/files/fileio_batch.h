/*
 * fileio_batch.h: writes that never leave half a file, or half an export,
 * behind.
 *
 * A struct fileio_batch writes a group of files into one folder, all or
 * nothing, even against SIGKILL or a power cut: the files are written and
 * flushed in a hidden staging folder beside the target, the files of the
 * target the batch does not write are hard-linked into it, and one
 * renameat2(RENAME_EXCHANGE) swaps the two folders; the old one is then
 * removed.  At every instant the target holds the old set or the new one.
 * Where a folder cannot be exchanged (".", the working folder, a mount
 * point, a folder with subfolders, a kernel or file system without the
 * exchange) the staging folder is inside the target and the files are
 * renamed into place one by one, with SIGINT, SIGTERM and SIGHUP held until
 * the last: only SIGKILL or a power cut can mix old and new files there.
 * What killed batches left (staging folders of processes that are gone,
 * older versions' ".NAME.csv.XXXXXX" files) is removed by the next batch.
 *
 * Subfolders ("layer0/weights.h0.csv"): the user's files in the target's
 * layer folders stay; when the batch says it replaces them (a whole
 * model's export: fileio_batch_replaces()), the files an earlier export
 * wrote into them and this one does not are dropped (FILEIO_MANIFEST);
 * otherwise (one layer's stage) they stay beside the new ones; a file or a
 * symbolic link where a subfolder goes is refused before anything moves,
 * so nothing is ever written outside the folder.  A new folder gets the
 * mode mkdir would give it (the umask), not mkdtemp's 0700.
 */
#ifndef ATTNSCOPE_FILEIO_BATCH_H
#define ATTNSCOPE_FILEIO_BATCH_H

#include <stdio.h>

#include "attnscope/base/status.h"

struct fileio_entry {
    char *name;       /* as given: "weights.h0.csv" or "layer0/weights.h0.csv" */
    char *final_path;
    char *temp_path;
};

struct fileio_batch {
    char *dir;       /* the folder as given, for messages */
    char *target;    /* the folder replaced: dir, or the folder its symbolic link names */
    char *stage;     /* where the files are written first */
    int existed;     /* target existed when the batch began */
    int swap;        /* stage is a sibling of target, exchanged with it whole */
    int count;
    int cap;
    struct fileio_entry *entry;
    char **sub_stage; /* the subfolders made in the staging folder (layer0, ...) */
    int sub_count;
    int sub_cap;
    FILE *open;      /* the file being written, if any */
    int open_index;
    int committed;   /* files were moved into place */
    char **old;      /* what an earlier export wrote into subfolders (its manifest), sorted */
    int old_count;
    int replaces;    /* replaces the subfolders an earlier export made (fileio_batch_replaces) */
};

/*
 * The hidden file a batch with subfolders (a model's layerN/) leaves in its
 * folder: the files it wrote into them.  The next batch into the folder
 * replaces those (a 2-layer export after a 3-layer one leaves no layer2/)
 * and keeps everything else: the user's own files, in layer folders too.
 */
#define FILEIO_MANIFEST ".attnscope-manifest"

/*
 * Starts a batch that writes into dir, which commit creates (one level) if
 * it does not exist.  Fails if dir cannot be created or written.
 */
enum attn_status fileio_batch_begin(struct fileio_batch *b, const char *dir,
                                    struct attn_error *err);

/*
 * Opens the next file of the batch; name is a plain file name, or one in a
 * subfolder of the batch's own ("layer0/weights.h0.csv": one level, made
 * as needed).  The stream is the batch's: finish it with
 * fileio_batch_close().
 */
enum attn_status fileio_batch_open(struct fileio_batch *b, const char *name,
                                   FILE **f, struct attn_error *err);

/*
 * The batch writes every subfolder there is to write (a whole model's
 * layers): what an earlier export wrote into subfolders and this one does
 * not is dropped at commit.
 */
void fileio_batch_replaces(struct fileio_batch *b);

/* Flushes and closes the file opened last; reports write errors (a full disk). */
enum attn_status fileio_batch_close(struct fileio_batch *b, struct attn_error *err);

/*
 * Puts every file in place at once (see above).  On failure nothing
 * changes; only in the one-by-one case can a rename fail midway, and the
 * message then lists how many files were written.
 */
enum attn_status fileio_batch_commit(struct fileio_batch *b, struct attn_error *err);

/* Removes every temporary file and the staging folder and frees the batch; safe after commit. */
void fileio_batch_abort(struct fileio_batch *b);

/*
 * Removes the temporary files of the batch being written, if any.  Uses
 * only unlink() and rmdir(): front ends call it from a signal handler
 * before letting SIGINT, SIGTERM or SIGHUP end the program, so that no
 * hidden half-written file is left behind.
 */
void fileio_batch_remove_temporaries(void);

#endif
