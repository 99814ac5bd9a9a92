/* filewrite.c: one file written beside its target and renamed over it (see filewrite.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/filewrite.h"

/* The temporary being written, for a signal handler (one at a time, from one thread). */
static const char *volatile writing;

enum attn_status
filewrite_begin(struct filewrite *w, const char *path, struct attn_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    const int dir_len = slash != NULL ? (int)(slash - path + 1) : 0;

    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (*base == '\0')
        return attn_fail(err, ATTN_EIO, "cannot write %s: it names a folder, not a file", path);
    w->path = strdup(path);
    if (w->path == NULL ||
        asprintf(&w->temp, "%.*s.%s.attnscope-XXXXXX", dir_len, path, base) < 0) {
        w->temp = NULL;
        filewrite_abort(w);
        return attn_fail(err, ATTN_ENOMEM, "cannot write %s: out of memory", path);
    }
    w->fd = mkostemp(w->temp, O_CLOEXEC);
    if (w->fd < 0) {
        const int e = errno;
        free(w->temp);
        w->temp = NULL;
        filewrite_abort(w);
        return attn_fail(err, ATTN_EIO, "cannot write %s: %s%s", path, strerror(e),
                         e == ENOENT ? " (its folder does not exist)" : "");
    }
    writing = w->temp;
    return ATTN_OK;
}

int
filewrite_bytes(struct filewrite *w, const void *data, size_t len)
{
    const unsigned char *p = data;

    if (w->error != 0 || w->fd < 0)
        return -1;
    while (len > 0) {
        const ssize_t n = write(w->fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->error = n < 0 ? errno : EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

enum attn_status
filewrite_commit(struct filewrite *w, struct attn_error *err)
{
    int e = w->error;

    if (e == 0 && fchmod(w->fd, 0666 & ~fileio_umask()) != 0)
        e = errno;
    if (e == 0 && fsync(w->fd) != 0)
        e = errno;
    if (close(w->fd) != 0 && e == 0)
        e = errno;
    w->fd = -1;
    if (e == 0 && rename(w->temp, w->path) != 0)
        e = errno;
    if (e != 0) {
        attn_fail(err, ATTN_EIO, "cannot write %s: %s; nothing was written over it", w->path,
                  strerror(e));
        filewrite_abort(w);
        return ATTN_EIO;
    }
    writing = NULL;
    free(w->temp);
    w->temp = NULL;
    filewrite_abort(w);
    return ATTN_OK;
}

void
filewrite_abort(struct filewrite *w)
{
    if (w->temp != NULL && writing == w->temp)
        writing = NULL;
    if (w->fd >= 0)
        close(w->fd);
    if (w->temp != NULL)
        unlink(w->temp);
    free(w->temp);
    free(w->path);
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

void
filewrite_remove_temporary(void)
{
    const char *t = writing;

    if (t != NULL)
        (void)unlink(t);
}
