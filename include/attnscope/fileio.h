/*
 * fileio.h: whole-file reads with a size limit, and writes that never leave
 * half a file behind.
 *
 * A struct fileio_batch writes a group of files into one folder: each file is
 * written to a hidden temporary name in that folder, and only when every one
 * of them has been written and flushed are they renamed into place.  If
 * anything fails, the temporaries are removed and the folder is as it was,
 * apart from files an earlier, completed batch wrote.
 */
#ifndef ATTNSCOPE_FILEIO_H
#define ATTNSCOPE_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "attnscope/status.h"

/*
 * Reads the file at path into a NUL-terminated buffer the caller frees.
 * Directories, unreadable files and files longer than max_bytes are refused.
 */
enum attn_status fileio_read_all(const char *path, size_t max_bytes, char **buf,
                                 size_t *len, struct attn_error *err);

struct fileio_entry {
    char *final_path;
    char *temp_path;
};

struct fileio_batch {
    char *dir;
    int count;
    int cap;
    struct fileio_entry *entry;
    FILE *open;      /* the file being written, if any */
    int open_index;
    int created;     /* the batch made dir */
    int committed;   /* files were moved into place */
};

/*
 * Starts a batch that writes into dir, creating dir (one level) if it does
 * not exist.  Fails if dir cannot be created or written.
 */
enum attn_status fileio_batch_begin(struct fileio_batch *b, const char *dir,
                                    struct attn_error *err);

/*
 * Opens the next file of the batch; name is a plain file name (no '/').  The
 * stream is the batch's: finish it with fileio_batch_close().
 */
enum attn_status fileio_batch_open(struct fileio_batch *b, const char *name,
                                   FILE **f, struct attn_error *err);

/* Flushes and closes the file opened last; reports write errors (a full disk). */
enum attn_status fileio_batch_close(struct fileio_batch *b, struct attn_error *err);

/*
 * Renames every file into place.  On failure, files already renamed stay
 * (the message lists how many) and the rest are removed.
 */
enum attn_status fileio_batch_commit(struct fileio_batch *b, struct attn_error *err);

/*
 * Removes every temporary file and frees the batch; safe after commit.  A
 * folder fileio_batch_begin() made is removed too if nothing was moved
 * into it.
 */
void fileio_batch_abort(struct fileio_batch *b);

/*
 * Removes the temporary files of the batch being written, if any.  Uses
 * only unlink() and rmdir(): front ends call it from a signal handler
 * before letting SIGINT, SIGTERM or SIGHUP end the program, so that no
 * hidden half-written file is left behind.
 */
void fileio_remove_temporaries(void);

#endif
