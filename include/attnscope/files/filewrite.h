/*
 * filewrite.h: one file written whole or not at all, beside its target.
 *
 * A figure (or any single file a user names) is written into a new hidden
 * file in the target's folder, made by mkstemp (O_CREAT | O_EXCL: never an
 * existing file, never through a symbolic link someone left there), then
 * flushed and renamed over the target.  A write that fails (a full disk, a
 * file size limit) is remembered, so that the commit refuses it and the
 * target keeps what it had; the temporary is removed on every failure and
 * by filewrite_remove_temporary() from a signal handler.
 */
#ifndef ATTNSCOPE_FILEWRITE_H
#define ATTNSCOPE_FILEWRITE_H

#include <stddef.h>

#include "attnscope/base/status.h"

struct filewrite {
    char *path;  /* the target */
    char *temp;  /* the hidden temporary beside it, or NULL */
    int fd;      /* the temporary, open for writing, or -1 */
    int error;   /* the errno of the first write that failed, or 0 */
};

/* Makes the temporary for path: ATTN_EIO naming path and the reason (a missing folder...). */
enum attn_status filewrite_begin(struct filewrite *w, const char *path, struct attn_error *err);
/* Writes len bytes; 0, or -1 with the failure kept for filewrite_commit. */
int filewrite_bytes(struct filewrite *w, const void *data, size_t len);
/*
 * Flushes the temporary to disk, gives it the mode a new file gets (0666
 * less the umask) and renames it over the target; on any failure (an
 * earlier write's included) removes it and says why.  Frees w either way.
 */
enum attn_status filewrite_commit(struct filewrite *w, struct attn_error *err);
/* Removes the temporary and frees w; safe after a commit. */
void filewrite_abort(struct filewrite *w);
/* Unlinks the temporary being written, if any: async-signal-safe (unlink only). */
void filewrite_remove_temporary(void);

#endif
