/* fileio.c: bounded reads of whole files, and a model's files opened safely (see fileio.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"

void
fileio_beside_program(const char *sub, char *buf, size_t size)
{
    ssize_t len = size > 34 ? readlink("/proc/self/exe", buf, size - 34) : -1;
    char *slash;

    if (len <= 0) {
        if (size > 0)
            buf[0] = '\0';
        return;
    }
    buf[len] = '\0';
    slash = strrchr(buf, '/');
    if (slash != NULL)
        snprintf(slash, size - (size_t)(slash - buf), "/%.32s", sub);
}

/* Reads the open fd (path for messages) into a NUL-terminated buffer of at most max_bytes. */
static enum attn_status
read_fd(int fd, const char *path, size_t max_bytes, char **buf, size_t *len,
        struct attn_error *err)
{
    size_t cap = 4096;
    size_t used = 0;
    char *data = malloc(cap);

    if (data == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    for (;;) {
        ssize_t got;
        if (used + 1 >= cap) {
            char *bigger;
            /* Never more than the limit and two bytes: the byte past it is enough to refuse. */
            size_t next = cap > max_bytes / 2 ? max_bytes + 2 : cap * 2;
            if (used > max_bytes) {
                free(data);
                return attn_fail(err, ATTN_ELIMIT, "%s: longer than attnscope reads (%zu bytes)",
                                 path, max_bytes);
            }
            bigger = realloc(data, next);
            if (bigger == NULL) {
                free(data);
                return attn_fail(err, ATTN_ENOMEM, "%s: out of memory reading it (%zu bytes so far)",
                                 path, used);
            }
            data = bigger;
            cap = next;
        }
        got = read(fd, data + used, cap - used - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(data);
            return attn_fail(err, ATTN_EIO, "%s: cannot read: %s", path, strerror(e));
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
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

enum attn_status
fileio_read_all(const char *path, size_t max_bytes, char **buf, size_t *len,
                struct attn_error *err)
{
    struct stat st;
    enum attn_status rc;
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
    rc = read_fd(fd, path, max_bytes, buf, len, err);
    close(fd);
    return rc;
}

/* What a file type is, for "is X, not a file". */
static const char *
kind_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a regular file";
}

enum attn_status
fileio_open_regular(const char *path, int *fd, struct attn_error *err)
{
    struct stat st;
    struct stat lst;
    int flags;

    *fd = -1;
    /* stat first: a FIFO or a device is named without opening it (open() could block or act). */
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
            return attn_fail(err, ATTN_EIO, "%s: is a symbolic link to nothing (an incomplete "
                                            "download?)",
                             path);
        if (e == ELOOP)
            return attn_fail(err, ATTN_EIO, "%s: a loop of symbolic links", path);
        return attn_fail(err, ATTN_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode))
        return attn_fail(err, ATTN_EIO, "%s: is %s, not a file", path, kind_name(st.st_mode));
    /* O_NONBLOCK too: a FIFO put there since the stat still cannot hold open() up. */
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return attn_fail(err, ATTN_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return attn_fail(err, ATTN_EIO, "%s: is %s, not a file", path, kind_name(st.st_mode));
    }
    flags = fcntl(*fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
    return ATTN_OK;
}

enum attn_status
fileio_read_regular(const char *path, size_t max_bytes, char **buf, size_t *len,
                    struct attn_error *err)
{
    struct stat st;
    enum attn_status rc;
    int fd;

    *buf = NULL;
    *len = 0;
    if ((rc = fileio_open_regular(path, &fd, err)) != ATTN_OK)
        return rc;
    if (fstat(fd, &st) == 0 && (uintmax_t)st.st_size > (uintmax_t)max_bytes) {
        close(fd);
        return attn_fail(err, ATTN_ELIMIT, "%s: %jd bytes; attnscope reads at most %zu of such a "
                                           "file",
                         path, (intmax_t)st.st_size, max_bytes);
    }
    rc = read_fd(fd, path, max_bytes, buf, len, err);
    close(fd);
    return rc;
}

enum attn_status
fileio_pread(int fd, const char *path, void *buf, size_t len, uint64_t offset,
             struct attn_error *err)
{
    unsigned char *p = buf;

    while (len > 0) {
        ssize_t got = pread(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return attn_fail(err, ATTN_EIO, "%s: cannot read: %s", path, strerror(errno));
        if (got == 0)
            return attn_fail(err, ATTN_EIO,
                             "%s: the file ends at byte %llu, before the data its header names: "
                             "it was truncated or replaced while attnscope read it",
                             path, (unsigned long long)offset);
        p += got;
        len -= (size_t)got;
        offset += (uint64_t)got;
    }
    return ATTN_OK;
}

const char *
fileio_odd_kind(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return NULL;
    return kind_name(st.st_mode);
}

bool
fileio_absent(const char *path)
{
    struct stat st;

    return lstat(path, &st) != 0 && errno == ENOENT;
}

/*
 * The process's umask, read without changing it (/proc/self/status, Linux
 * 4.7 and later), else by setting it and back: mkdtemp makes folders 0700
 * whatever the umask, and a new export folder must be what mkdir makes.
 */
mode_t
fileio_umask(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    mode_t m;

    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned int v;
        if (sscanf(line, "Umask: %o", &v) == 1) {
            fclose(f);
            return (mode_t)v;
        }
    }
    if (f != NULL)
        fclose(f);
    m = umask(022);
    umask(m);
    return m;
}
