/* fileio.c: bounded reads and all-or-nothing batches of files (see fileio.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/fileio.h"

/*
 * The batch being written, so that a signal handler can remove its
 * temporary files (fileio_remove_temporaries()).  attnscope writes one batch
 * at a time, from one thread; the entry array is replaced, never realloc'ed
 * in place, so a handler that interrupts the batch sees a whole array.
 */
static struct fileio_batch *volatile active;

enum attn_status
fileio_read_all(const char *path, size_t max_bytes, char **buf, size_t *len,
                struct attn_error *err)
{
    struct stat st;
    size_t cap = 4096;
    size_t used = 0;
    char *data;
    int fd;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return attn_fail(err, ATTN_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return attn_fail(err, ATTN_EIO, "%s: is a folder, not a file", path);
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > (uintmax_t)max_bytes) {
        close(fd);
        return attn_fail(err, ATTN_ELIMIT, "%s: %jd bytes is more than attnscope reads (%zu bytes)",
                         path, (intmax_t)st.st_size, max_bytes);
    }
    data = malloc(cap);
    if (data == NULL) {
        close(fd);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        ssize_t got;
        if (used + 1 >= cap) {
            char *bigger;
            if (cap > max_bytes) {
                free(data);
                close(fd);
                return attn_fail(err, ATTN_ELIMIT, "%s: longer than attnscope reads (%zu bytes)",
                                 path, max_bytes);
            }
            bigger = realloc(data, cap * 2);
            if (bigger == NULL) {
                free(data);
                close(fd);
                return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
            }
            data = bigger;
            cap *= 2;
        }
        got = read(fd, data + used, cap - used - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(data);
            close(fd);
            return attn_fail(err, ATTN_EIO, "%s: cannot read: %s", path, strerror(e));
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    if (used > max_bytes) {
        free(data);
        return attn_fail(err, ATTN_ELIMIT, "%s: longer than attnscope reads (%zu bytes)",
                         path, max_bytes);
    }
    data[used] = '\0';
    *buf = data;
    *len = used;
    return ATTN_OK;
}

static const char *
base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

static char *
join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir);
    size_t b = strlen(name);
    char *p = malloc(a + b + 2);

    if (p == NULL)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* Holds the signals that end a batch (their handler removes its temporaries) until released. */
static void
hold_signals(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void
release_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

enum attn_status
fileio_batch_begin(struct fileio_batch *b, const char *dir, struct attn_error *err)
{
    struct stat st;
    sigset_t held;
    int saved;

    memset(b, 0, sizeof *b);
    b->open_index = -1;
    if (dir[0] == '\0')
        return attn_fail(err, ATTN_EVALUE, "the export folder name is empty");
    b->dir = strdup(dir);
    if (b->dir == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    /* A signal between making the folder and recording it would leave it behind. */
    hold_signals(&held);
    if (stat(dir, &st) != 0) {
        saved = errno;
        if (saved == ENOENT && mkdir(dir, 0777) == 0) {
            b->created = 1;
        } else {
            saved = saved == ENOENT ? errno : saved;
            release_signals(&held);
            fileio_batch_abort(b);
            return attn_fail(err, ATTN_EIO, "%s: cannot create the folder: %s", dir, strerror(saved));
        }
    } else if (!S_ISDIR(st.st_mode)) {
        release_signals(&held);
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_EIO, "%s: exists and is not a folder", dir);
    }
    active = b;
    release_signals(&held);
    if (access(dir, W_OK | X_OK) != 0) {
        saved = errno;
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_EIO, "%s: cannot write into the folder: %s", dir, strerror(saved));
    }
    return ATTN_OK;
}

enum attn_status
fileio_batch_open(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err)
{
    struct fileio_entry *e;
    char *tmpl;
    size_t len;
    int fd;
    sigset_t held;

    *f = NULL;
    if (strchr(name, '/') != NULL || name[0] == '\0' || name[0] == '.')
        return attn_fail(err, ATTN_EVALUE, "'%s' is not a plain file name", name);
    if (b->count == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        struct fileio_entry *bigger = malloc((size_t)cap * sizeof *bigger);
        struct fileio_entry *old = b->entry;
        if (bigger == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        if (b->count > 0)
            memcpy(bigger, old, (size_t)b->count * sizeof *bigger);
        b->entry = bigger;
        b->cap = cap;
        free(old);
    }
    e = &b->entry[b->count];
    e->final_path = join_path(b->dir, name);
    len = strlen(b->dir) + strlen(name) + 32;
    tmpl = malloc(len);
    if (e->final_path == NULL || tmpl == NULL) {
        free(e->final_path);
        free(tmpl);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    /* Hidden, in the same folder (so rename() is atomic), and unique. */
    snprintf(tmpl, len, "%s/.%s.XXXXXX", b->dir, name);
    /*
     * A signal between creating the file and counting it would leave it
     * behind (fileio_remove_temporaries() would not know it): hold them.
     */
    hold_signals(&held);
    fd = mkstemp(tmpl);
    if (fd >= 0) {
        e->temp_path = tmpl;
        b->count++;
    }
    release_signals(&held);
    if (fd < 0) {
        int saved = errno;
        free(e->final_path);
        free(tmpl);
        return attn_fail(err, ATTN_EIO, "%s/%s: cannot create: %s; nothing was written", b->dir,
                         name, strerror(saved));
    }
    /* mkstemp makes the file 0600; exports are ordinary files. */
    {
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);
    }
    b->open = fdopen(fd, "w");
    if (b->open == NULL) {
        close(fd);
        return attn_fail(err, ATTN_ENOMEM, "%s: cannot open a stream", e->final_path);
    }
    b->open_index = b->count - 1;
    *f = b->open;
    return ATTN_OK;
}

enum attn_status
fileio_batch_close(struct fileio_batch *b, struct attn_error *err)
{
    FILE *f = b->open;
    int failed;

    if (f == NULL)
        return ATTN_OK;
    b->open = NULL;
    failed = ferror(f) != 0;
    if (fflush(f) != 0)
        failed = 1;
    if (!failed && fsync(fileno(f)) != 0 && errno != EINVAL)
        failed = 1;
    if (fclose(f) != 0)
        failed = 1;
    if (failed)
        return attn_fail(err, ATTN_EIO, "%s: cannot write: %s; nothing was written",
                         b->entry[b->open_index].final_path, strerror(errno));
    return ATTN_OK;
}

enum attn_status
fileio_batch_commit(struct fileio_batch *b, struct attn_error *err)
{
    enum attn_status st = fileio_batch_close(b, err);

    if (st != ATTN_OK) {
        fileio_batch_abort(b);
        return st;
    }
    /* Refuse before moving anything if a name is taken by a folder. */
    for (int i = 0; i < b->count; i++) {
        struct stat sb;
        if (lstat(b->entry[i].final_path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            attn_fail(err, ATTN_EIO, "%s: is a folder; nothing was written",
                      b->entry[i].final_path);
            fileio_batch_abort(b);
            return ATTN_EIO;
        }
    }
    for (int i = 0; i < b->count; i++) {
        struct fileio_entry *e = &b->entry[i];
        char *temp = e->temp_path;
        if (rename(temp, e->final_path) != 0) {
            int saved = errno;
            if (i == 0)
                attn_fail(err, ATTN_EIO, "%s: cannot move into place: %s; nothing was written",
                          e->final_path, strerror(saved));
            else
                attn_fail(err, ATTN_EIO,
                          "%s: cannot move into place: %s; %d of %d files were written (%s to %s)",
                          e->final_path, strerror(saved), i, b->count,
                          base_name(b->entry[0].final_path), base_name(b->entry[i - 1].final_path));
            b->committed = i > 0;
            fileio_batch_abort(b);
            return ATTN_EIO;
        }
        e->temp_path = NULL;
        free(temp);
    }
    b->committed = 1;
    fileio_batch_abort(b);
    return ATTN_OK;
}

/*
 * Unlinks b's temporary files, and the folder b made if nothing was moved
 * into it.  Only unlink() and rmdir(): a signal handler calls this.
 */
static void
remove_files(const struct fileio_batch *b)
{
    for (int i = 0; i < b->count; i++)
        if (b->entry[i].temp_path != NULL)
            (void)unlink(b->entry[i].temp_path);
    if (b->created && !b->committed && b->dir != NULL)
        (void)rmdir(b->dir);
}

void
fileio_batch_abort(struct fileio_batch *b)
{
    if (b->open != NULL) {
        fclose(b->open);
        b->open = NULL;
    }
    remove_files(b);
    for (int i = 0; i < b->count; i++) {
        free(b->entry[i].temp_path);
        free(b->entry[i].final_path);
    }
    if (active == b)
        active = NULL;
    free(b->entry);
    free(b->dir);
    memset(b, 0, sizeof *b);
    b->open_index = -1;
}

void
fileio_remove_temporaries(void)
{
    struct fileio_batch *b = active;

    if (b != NULL)
        remove_files(b);
}
