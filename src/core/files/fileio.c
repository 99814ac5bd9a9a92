/* fileio.c: bounded reads and all-or-nothing batches of files (see fileio.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "attnscope/files/fileio.h"

/*
 * The batch being written, so that a signal handler can remove its
 * temporary files (fileio_remove_temporaries()).  attnscope writes one batch
 * at a time, from one thread; the entry array is replaced, never realloc'ed
 * in place, so a handler that interrupts the batch sees a whole array.
 */
static struct fileio_batch *volatile active;

/* What a staging folder's name holds after the dot and the target's name. */
#define STAGE_TAG ".attnscope-"

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

bool
fileio_absent(const char *path)
{
    struct stat st;

    return lstat(path, &st) != 0 && errno == ENOENT;
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

/* Makes a folder's entries durable (renames, links, removals). */
static void
sync_folder(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* path with its trailing slashes removed ("/" stays "/"). */
static char *
trimmed(const char *path)
{
    size_t len = strlen(path);
    char *p;

    while (len > 1 && path[len - 1] == '/')
        len--;
    p = malloc(len + 1);
    if (p != NULL) {
        memcpy(p, path, len);
        p[len] = '\0';
    }
    return p;
}

/* The folder that holds path ("." for a bare name). */
static char *
parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Whether the batch writes name: one of its files, or the subfolder some are in. */
static bool
is_our_name(const struct fileio_batch *b, const char *name)
{
    const size_t n = strlen(name);

    for (int i = 0; i < b->count; i++) {
        const char *ours = b->entry[i].name;
        if (strncmp(ours, name, n) == 0 && (ours[n] == '\0' || ours[n] == '/'))
            return true;
    }
    return false;
}

/* A file name of a batch: "name" or "folder/name", each part plain (no leading dot). */
static bool
batch_name_ok(const char *name)
{
    const char *slash = strchr(name, '/');

    if (name[0] == '\0' || name[0] == '.')
        return false;
    return slash == NULL ||
           (slash[1] != '\0' && slash[1] != '.' && strchr(slash + 1, '/') == NULL);
}

/* Whether the batch writes the file sub/name (name inside its subfolder sub). */
static bool
writes_in(const struct fileio_batch *b, const char *sub, const char *name)
{
    const size_t ns = strlen(sub);

    for (int i = 0; i < b->count; i++) {
        const char *ours = b->entry[i].name;
        if (strncmp(ours, sub, ns) == 0 && ours[ns] == '/' && strcmp(ours + ns + 1, name) == 0)
            return true;
    }
    return false;
}

static int
by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The manifest an earlier export left in the target: the files it wrote
 * into subfolders ("layer2/weights.h0.csv"), one a line after a comment.
 * Only names an export could have written are taken (a subfolder and a
 * .csv file, each part plain): a manifest someone edited can make attnscope
 * drop no other file.  Missing or unreadable: none.
 */
static void
manifest_read(struct fileio_batch *b)
{
    char *path = join_path(b->target, FILEIO_MANIFEST);
    char *text = NULL;
    size_t len = 0;
    struct attn_error ignored;
    struct stat st;

    if (path == NULL)
        return;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        fileio_read_regular(path, (size_t)16 << 20, &text, &len, &ignored) != ATTN_OK) {
        free(path);
        return;
    }
    free(path);
    for (char *line = text; line < text + len;) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = end != NULL ? (size_t)(end - line) : (size_t)(text + len - line);
        const char *slash = memchr(line, '/', n);
        line[n] = '\0';
        if (line[0] != '#' && slash != NULL && n > 4 && strcmp(line + n - 4, ".csv") == 0 &&
            batch_name_ok(line)) {
            char **more = realloc(b->old, ((size_t)b->old_count + 1) * sizeof *more);
            char *copy = strdup(line);
            if (more != NULL)
                b->old = more;
            if (more != NULL && copy != NULL)
                b->old[b->old_count++] = copy;
            else
                free(copy);
        }
        line += n + 1;
    }
    free(text);
    qsort(b->old, (size_t)b->old_count, sizeof *b->old, by_string);
}

/* Whether an earlier export (the manifest) wrote sub/name and this batch replaces it. */
static bool
was_written(const struct fileio_batch *b, const char *sub, const char *name)
{
    char key[2 * NAME_MAX + 2];
    const char *k = key;

    if (!b->replaces || b->old_count == 0 || snprintf(key, sizeof key, "%s/%s", sub, name) >= (int)sizeof key)
        return false;
    return bsearch(&k, b->old, (size_t)b->old_count, sizeof *b->old, by_string) != NULL;
}

/* Whether the manifest lists a file in the subfolder sub: a folder an earlier export made. */
static bool
made_folder(const struct fileio_batch *b, const char *sub)
{
    const size_t n = strlen(sub);

    if (!b->replaces)
        return false;
    for (int i = 0; i < b->old_count; i++)
        if (strncmp(b->old[i], sub, n) == 0 && b->old[i][n] == '/')
            return true;
    return false;
}

/*
 * A hidden temporary an earlier attnscope left when it was killed: the
 * per-file ".NAME.csv.XXXXXX" of versions before the staging folder.
 */
static bool
is_old_temporary(const char *name)
{
    size_t len = strlen(name);

    return name[0] == '.' && len > 12 && strncmp(name + len - 11, ".csv.", 5) == 0;
}

/*
 * The process id in a staging folder name that starts with prefix
 * ("PID-XXXXXX" follows), or 0 if name is not one.
 */
static long
stage_owner(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end;
    long pid;

    if (strncmp(name, prefix, n) != 0)
        return 0;
    errno = 0;
    pid = strtol(name + n, &end, 10);
    if (errno != 0 || pid <= 0 || *end != '-' || strlen(end + 1) != 6)
        return 0;
    return pid;
}

/*
 * Removes a folder's files and then the folder, with subfolders depth
 * levels down (batches make one level); a deeper subfolder keeps it.
 */
static void
remove_tree(int at, const char *name, int depth)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;

    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (unlinkat(fd, e->d_name, 0) != 0 && errno == EISDIR && depth > 0)
            remove_tree(fd, e->d_name, depth - 1);
    }
    closedir(d);
    (void)unlinkat(at, name, AT_REMOVEDIR);
}

static void
remove_folder_files(int at, const char *name)
{
    remove_tree(at, name, 1);
}

/*
 * Removes what killed exports left in folder: staging folders whose names
 * start with prefix and whose process is gone, and (in_target) the old
 * per-file temporaries.  A live process's staging folder is left alone.
 */
static void
remove_leftovers(const char *folder, const char *prefix, bool in_target)
{
    DIR *d = opendir(folder);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        long pid = stage_owner(e->d_name, prefix);
        if (pid > 0 && pid <= INT_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            remove_folder_files(dirfd(d), e->d_name);
        else if (in_target && pid == 0 && is_old_temporary(e->d_name))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/*
 * Whether target can be replaced whole by a sibling folder: a plain folder
 * name (not "." or ".."), not the working folder (a shell in it would be
 * left in a removed folder), not a mount point.  A subfolder the batch
 * does not write cannot be carried over by a hard link: carry_over() finds
 * it at commit and the files then move one by one.
 */
static bool
can_swap(const char *target, const char *parent, const struct stat *st)
{
    const char *base = base_name(target);
    struct stat up;
    struct stat here;

    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(target, "/") == 0)
        return false;
    if (stat(".", &here) == 0 && here.st_dev == st->st_dev && here.st_ino == st->st_ino)
        return false;
    return stat(parent, &up) == 0 && up.st_dev == st->st_dev && access(parent, W_OK | X_OK) == 0 &&
           access(target, R_OK | X_OK) == 0;
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

/* Makes the staging folder from template tmpl (freed on failure); signals held. */
static int
make_stage(struct fileio_batch *b, char *tmpl)
{
    sigset_t held;
    int ok;

    hold_signals(&held);
    ok = mkdtemp(tmpl) != NULL;
    if (ok) {
        b->stage = tmpl;
        active = b;
    }
    release_signals(&held);
    if (!ok)
        free(tmpl);
    return ok ? 0 : -1;
}

static char *
stage_template(const char *folder, const char *base)
{
    size_t len = strlen(folder) + strlen(base) + sizeof STAGE_TAG + 40;
    char *t = malloc(len);

    if (t != NULL)
        snprintf(t, len, "%s/.%s" STAGE_TAG "%ld-XXXXXX", folder, base, (long)getpid());
    return t;
}

enum attn_status
fileio_batch_begin(struct fileio_batch *b, const char *dir, struct attn_error *err)
{
    struct stat st;
    char prefix[NAME_MAX + 32];
    char *parent = NULL;
    char *tmpl;
    int saved;

    memset(b, 0, sizeof *b);
    b->open_index = -1;
    if (dir[0] == '\0')
        return attn_fail(err, ATTN_EVALUE, "the export folder name is empty");
    b->dir = strdup(dir);
    b->target = trimmed(dir);
    if (b->dir == NULL || b->target == NULL) {
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    if (stat(b->target, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fileio_batch_abort(b);
            return attn_fail(err, ATTN_EIO, "%s: exists and is not a folder", dir);
        }
        if (access(b->target, W_OK | X_OK) != 0) {
            saved = errno;
            fileio_batch_abort(b);
            return attn_fail(err, ATTN_EIO, "%s: cannot write into the folder: %s", dir,
                             strerror(saved));
        }
        b->existed = 1;
        /* A symbolic link to a folder: the folder it names is the one replaced. */
        {
            char *real = realpath(b->target, NULL);
            struct stat lst;
            if (lstat(b->target, &lst) == 0 && S_ISLNK(lst.st_mode) && real != NULL) {
                free(b->target);
                b->target = real;
            } else {
                free(real);
            }
        }
    } else if (errno != ENOENT) {
        saved = errno;
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_EIO, "%s: cannot create the folder: %s", dir, strerror(saved));
    }
    parent = parent_of(b->target);
    if (parent == NULL) {
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    snprintf(prefix, sizeof prefix, ".%.*s" STAGE_TAG, NAME_MAX, base_name(b->target));
    b->swap = !b->existed || can_swap(b->target, parent, &st);
    if (b->swap) {
        remove_leftovers(parent, prefix, false);
        tmpl = stage_template(parent, base_name(b->target));
        if (tmpl != NULL && make_stage(b, tmpl) == 0 && !b->existed)
            (void)chmod(b->stage, 0777 & ~fileio_umask()); /* as mkdir would make it */
        else if (!b->existed) {
            saved = errno;
            free(parent);
            fileio_batch_abort(b);
            return attn_fail(err, ATTN_EIO, "%s: cannot create the folder: %s", dir,
                             strerror(saved));
        }
        b->swap = b->stage != NULL;
    }
    free(parent);
    if (b->existed)
        remove_leftovers(b->target, STAGE_TAG, true);
    if (b->stage == NULL) {
        /* Inside the folder: the files are moved into place one by one. */
        tmpl = stage_template(b->target, "");
        if (tmpl == NULL || make_stage(b, tmpl) != 0) {
            saved = errno;
            fileio_batch_abort(b);
            return attn_fail(err, ATTN_EIO, "%s: cannot write into the folder: %s", dir,
                             strerror(saved));
        }
    }
    return ATTN_OK;
}

/* The staging folder's subfolder for name ("layer0/..."), made once; 0 or -1 (errno). */
static int
make_sub_stage(struct fileio_batch *b, const char *name)
{
    const size_t n = (size_t)(strchr(name, '/') - name);
    size_t len = strlen(b->stage) + n + 2;
    char *path;
    sigset_t held;

    for (int i = 0; i < b->sub_count; i++) {
        const char *sub = base_name(b->sub_stage[i]);
        if (strlen(sub) == n && strncmp(sub, name, n) == 0)
            return 0;
    }
    if (b->sub_count == b->sub_cap) {
        int cap = b->sub_cap ? b->sub_cap * 2 : 16;
        char **bigger = malloc((size_t)cap * sizeof *bigger);
        char **old = b->sub_stage;
        if (bigger == NULL) {
            errno = ENOMEM;
            return -1;
        }
        if (b->sub_count > 0)
            memcpy(bigger, old, (size_t)b->sub_count * sizeof *bigger);
        b->sub_stage = bigger;
        b->sub_cap = cap;
        free(old);
    }
    path = malloc(len);
    if (path == NULL) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(path, len, "%s/%.*s", b->stage, (int)n, name);
    /* Counted before it exists, so that a signal handler removes it. */
    hold_signals(&held);
    b->sub_stage[b->sub_count++] = path;
    release_signals(&held);
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

static enum attn_status open_entry(struct fileio_batch *b, const char *name, FILE **f,
                                   struct attn_error *err);

enum attn_status
fileio_batch_open(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err)
{
    *f = NULL;
    if (!batch_name_ok(name))
        return attn_fail(err, ATTN_EVALUE, "'%s' is not a plain file name", name);
    return open_entry(b, name, f, err);
}

/* Opens the batch's file name (checked by the caller: the manifest's name is hidden). */
static enum attn_status
open_entry(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err)
{
    struct fileio_entry *e = NULL;
    sigset_t held;
    int fd;

    *f = NULL;
    for (int i = 0; i < b->count; i++)
        if (strcmp(b->entry[i].name, name) == 0)
            e = &b->entry[i]; /* the same file asked for twice: written again */
    if (e == NULL && strchr(name, '/') != NULL && make_sub_stage(b, name) != 0)
        return attn_fail(err, ATTN_EIO, "%s: cannot create a folder: %s; nothing was written",
                         b->dir, strerror(errno));
    if (e == NULL && b->count == b->cap) {
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
    if (e == NULL) {
        e = &b->entry[b->count];
        e->name = strdup(name);
        e->final_path = join_path(b->dir, name);
        e->temp_path = join_path(b->stage, name);
        if (e->name == NULL || e->final_path == NULL || e->temp_path == NULL) {
            free(e->name);
            free(e->final_path);
            free(e->temp_path);
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        }
        /* Counted before it exists, so that a signal handler removes it. */
        hold_signals(&held);
        b->count++;
        release_signals(&held);
    }
    fd = open(e->temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return attn_fail(err, ATTN_EIO, "%s: cannot create: %s; nothing was written",
                         e->final_path, strerror(errno));
    b->open = fdopen(fd, "w");
    if (b->open == NULL) {
        close(fd);
        return attn_fail(err, ATTN_ENOMEM, "%s: cannot open a stream", e->final_path);
    }
    b->open_index = (int)(e - b->entry);
    *f = b->open;
    return ATTN_OK;
}

void
fileio_batch_replaces(struct fileio_batch *b)
{
    b->replaces = 1;
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

/*
 * Refuses, before anything moves, a name the batch writes that the target
 * holds as a folder or as a file that cannot be replaced (immutable or
 * append-only), and a subfolder it writes that the target holds as
 * anything but a folder it may write in (a file, or a symbolic link that
 * would take the files elsewhere): moving the rest would mix old and new
 * files, or write outside the folder.
 */
static enum attn_status
check_replaceable(const struct fileio_batch *b, struct attn_error *err)
{
    for (int i = 0; i < b->sub_count; i++) {
        char *final = join_path(b->target, base_name(b->sub_stage[i]));
        struct stat sb;
        enum attn_status st = ATTN_OK;
        if (final == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        if (lstat(final, &sb) == 0 && S_ISLNK(sb.st_mode))
            st = attn_fail(err, ATTN_EIO,
                           "%s: is a symbolic link where the export puts a folder; nothing was "
                           "written",
                           final);
        else if (lstat(final, &sb) == 0 && !S_ISDIR(sb.st_mode))
            st = attn_fail(err, ATTN_EIO,
                           "%s: is a file where the export puts a folder; nothing was written",
                           final);
        else if (lstat(final, &sb) == 0 && access(final, W_OK | X_OK) != 0)
            st = attn_fail(err, ATTN_EIO, "%s: cannot write into the folder: %s; nothing was "
                                          "written",
                           final, strerror(errno));
        free(final);
        if (st != ATTN_OK)
            return st;
    }
    for (int i = 0; i < b->count; i++) {
        const char *final = b->entry[i].final_path;
        struct stat sb;
        int fd;
        if (lstat(final, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            return attn_fail(err, ATTN_EIO, "%s: is a folder; nothing was written", final);
        if (!S_ISREG(sb.st_mode))
            continue;
        fd = open(final, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            int flags = 0;
            bool fixed = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                         (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)) != 0;
            close(fd);
            if (fixed)
                return attn_fail(err, ATTN_EIO,
                                 "%s: cannot be replaced (immutable or append-only); nothing was "
                                 "written",
                                 final);
        }
    }
    return ATTN_OK;
}

/* Links made into the staging folder by carry_over, to be undone if it cannot finish. */
struct carried {
    char **path;
    int count;
    char **made; /* subfolders made in the staging folder for an earlier export's stale ones */
    int made_count;
};

static int
remember(char ***list, int *count, const char *a, const char *b)
{
    char **more = realloc(*list, ((size_t)*count + 1) * sizeof *more);
    char *p = b != NULL ? join_path(a, b) : strdup(a);

    if (more != NULL)
        *list = more;
    if (more == NULL || p == NULL) {
        free(p);
        return -1;
    }
    (*list)[(*count)++] = p;
    return 0;
}

static void
undo_carried(struct carried *c, bool undo)
{
    for (int i = 0; i < c->count; i++) {
        if (undo)
            (void)unlink(c->path[i]);
        free(c->path[i]);
    }
    for (int i = c->made_count - 1; i >= 0; i--) {
        if (undo)
            (void)rmdir(c->made[i]);
        free(c->made[i]);
    }
    free(c->path);
    free(c->made);
    memset(c, 0, sizeof *c);
}

/*
 * Into the staging folder's sub (made if need be), a link to each entry of
 * the target's folder sub that neither this batch nor an earlier export
 * (the manifest) wrote: the user's own files in a layer folder stay.
 * -1 when one cannot be carried (a folder inside it, a refused link).
 */
static int
carry_sub(struct fileio_batch *b, const char *sub, struct carried *c)
{
    char *from = join_path(b->target, sub);
    char *to = join_path(b->stage, sub);
    DIR *d = from != NULL ? opendir(from) : NULL;
    struct dirent *e;
    struct stat sb;
    int rc = from != NULL && to != NULL && d != NULL ? 0 : -1;

    while (rc == 0 && (e = readdir(d)) != NULL) {
        char *link_path;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            writes_in(b, sub, e->d_name) || was_written(b, sub, e->d_name))
            continue;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(sb.st_mode)) {
            rc = -1;
            break;
        }
        if (lstat(to, &sb) != 0) {
            if (mkdir(to, 0777) != 0 || remember(&c->made, &c->made_count, to, NULL) != 0) {
                rc = -1;
                break;
            }
        }
        link_path = join_path(to, e->d_name);
        if (link_path == NULL || linkat(dirfd(d), e->d_name, AT_FDCWD, link_path, 0) != 0 ||
            remember(&c->path, &c->count, link_path, NULL) != 0)
            rc = -1;
        free(link_path);
    }
    if (d != NULL)
        closedir(d);
    free(from);
    free(to);
    return rc;
}

/*
 * Hard-links every file of the target the batch does not write into the
 * staging folder, so that the exchanged folder keeps them (the same files,
 * not copies); in the subfolders the batch writes, and in those an earlier
 * export made, every file neither wrote.  What an earlier export wrote and
 * this one does not (a layer of a larger model) is not carried: it goes
 * with the old folder.  0, or -1 (links undone) when one cannot be carried:
 * a folder of the user's, or the link refused (another user's file).
 */
static int
carry_over(struct fileio_batch *b)
{
    DIR *d = opendir(b->target);
    int stage = open(b->stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct carried c = { NULL, 0, NULL, 0 };
    struct dirent *e;
    int rc = 0;

    if (d == NULL || stage < 0) {
        if (d != NULL)
            closedir(d);
        if (stage >= 0)
            close(stage);
        return -1;
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        struct stat sb;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            is_old_temporary(e->d_name) || strcmp(e->d_name, FILEIO_MANIFEST) == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            /* One of ours (written now, or by an earlier export): its other files; else no. */
            if (is_our_name(b, e->d_name) || made_folder(b, e->d_name))
                rc = carry_sub(b, e->d_name, &c);
            else
                rc = -1;
        } else if (!is_our_name(b, e->d_name)) {
            char *to = join_path(b->stage, e->d_name);
            if (to == NULL || linkat(dirfd(d), e->d_name, stage, e->d_name, 0) != 0 ||
                remember(&c.path, &c.count, to, NULL) != 0)
                rc = -1;
            free(to);
        }
    }
    /* Back to the batch's own files only, if anything could not be carried. */
    undo_carried(&c, rc != 0);
    closedir(d);
    close(stage);
    return rc;
}

/* After the exchange the old folder is at the staging name: remove it. */
static void
remove_old_folder(struct fileio_batch *b)
{
    char *parent = parent_of(b->stage);
    int at = parent ? open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

    /* Everything in it was replaced or carried over (linked) into the new one. */
    if (at >= 0) {
        remove_folder_files(at, base_name(b->stage));
        close(at);
    }
    free(parent);
}

/*
 * After files moved one by one: what an earlier export wrote into
 * subfolders and this one did not (the manifest) is removed, regular files
 * only, and then those subfolders if nothing else is left in them.
 */
static void
remove_stale(const struct fileio_batch *b)
{
    int at = open(b->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (at < 0 || b->sub_count == 0 || !b->replaces) {
        if (at >= 0)
            close(at);
        return;
    }
    for (int i = 0; i < b->old_count; i++) {
        const char *slash = strchr(b->old[i], '/');
        char sub[NAME_MAX + 1];
        struct stat sb;
        snprintf(sub, sizeof sub, "%.*s", (int)(slash - b->old[i]), b->old[i]);
        if (writes_in(b, sub, slash + 1))
            continue;
        if (fstatat(at, b->old[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
            (void)unlinkat(at, b->old[i], 0);
        (void)unlinkat(at, sub, AT_REMOVEDIR); /* (kept while something else is in it) */
    }
    close(at);
}

/* Moves the files one by one (the folder could not be exchanged whole). */
static enum attn_status
move_each(struct fileio_batch *b, struct attn_error *err)
{
    for (int i = 0; i < b->count; i++) {
        struct fileio_entry *e = &b->entry[i];
        char *slash = strrchr(e->final_path, '/');
        if (strchr(e->name, '/') != NULL && slash != NULL) {
            /* Its subfolder in the target, made as the first of its files moves. */
            *slash = '\0';
            (void)mkdir(e->final_path, 0777);
            *slash = '/';
        }
        if (rename(e->temp_path, e->final_path) != 0) {
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
            return ATTN_EIO;
        }
        free(e->temp_path);
        e->temp_path = NULL;
    }
    b->committed = 1;
    for (int i = 0; i < b->sub_count; i++)
        (void)rmdir(b->sub_stage[i]);
    (void)rmdir(b->stage);
    remove_stale(b);
    remove_leftovers(b->target, STAGE_TAG, true);
    sync_folder(b->target);
    return ATTN_OK;
}

/* The exchanged (or new) folder takes the old one's permissions. */
static void
keep_mode(const struct fileio_batch *b)
{
    struct stat st;

    if (stat(b->target, &st) == 0)
        (void)chmod(b->stage, st.st_mode & 07777);
}

/*
 * A batch with subfolders (a model's layers) ends with its manifest: the
 * files it wrote into them, so that the next export into the folder knows
 * which of the layer folders' files were attnscope's (see manifest_read).
 */
static enum attn_status
write_manifest(struct fileio_batch *b, struct attn_error *err)
{
    char **names;
    int n = 0;
    FILE *f;
    enum attn_status st;

    if (b->sub_count == 0)
        return ATTN_OK;
    names = malloc(((size_t)b->count + (size_t)b->old_count + 1) * sizeof *names);
    if (names == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    for (int i = 0; i < b->count; i++)
        if (strchr(b->entry[i].name, '/') != NULL)
            names[n++] = b->entry[i].name;
    /* One layer's files added to a folder: the earlier ones stay listed (and stay). */
    for (int i = 0; !b->replaces && i < b->old_count; i++) {
        bool again = false;
        for (int k = 0; k < b->count && !again; k++)
            again = strcmp(b->entry[k].name, b->old[i]) == 0;
        if (!again)
            names[n++] = b->old[i];
    }
    qsort(names, (size_t)n, sizeof *names, by_string);
    st = open_entry(b, FILEIO_MANIFEST, &f, err);
    if (st == ATTN_OK) {
        fputs("# attnscope: the files its last export wrote into these subfolders; the next "
              "export\n# into this folder replaces them (and keeps every other file)\n",
              f);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s\n", names[i]);
        st = fileio_batch_close(b, err);
    }
    free(names);
    return st;
}

enum attn_status
fileio_batch_commit(struct fileio_batch *b, struct attn_error *err)
{
    enum attn_status st = fileio_batch_close(b, err);
    sigset_t held;
    char *parent;
    bool whole = false; /* the staging folder itself went into place */

    if (st == ATTN_OK && b->existed && b->sub_count > 0)
        manifest_read(b);
    if (st == ATTN_OK)
        st = write_manifest(b, err);
    if (st != ATTN_OK) {
        fileio_batch_abort(b);
        return st;
    }
    st = check_replaceable(b, err);
    if (st != ATTN_OK) {
        fileio_batch_abort(b);
        return st;
    }
    parent = parent_of(b->target);
    if (parent == NULL) {
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    /* From here to the end a signal waits: the folder is never left half-replaced. */
    hold_signals(&held);
    sync_folder(b->stage); /* its entries as well as its files, before it can become the target */
    if (b->swap && !b->existed) {
        if (rename(b->stage, b->target) == 0) {
            b->committed = 1;
            whole = true;
        } else {
            st = attn_fail(err, ATTN_EIO, "%s: cannot move into place: %s; nothing was written",
                           b->dir, strerror(errno));
        }
    } else if (b->swap && carry_over(b) == 0) {
        keep_mode(b);
        if (renameat2(AT_FDCWD, b->stage, AT_FDCWD, b->target, RENAME_EXCHANGE) == 0) {
            b->committed = 1;
            whole = true;
            remove_old_folder(b);
        } else {
            /* No exchange here (an old kernel, a file system without it): one by one. */
            int stage = open(b->stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            DIR *d = stage >= 0 ? fdopendir(stage) : NULL;
            struct dirent *e;
            while (d != NULL && (e = readdir(d)) != NULL)
                if (!is_our_name(b, e->d_name) && e->d_name[0] != '.')
                    (void)unlinkat(stage, e->d_name, 0);
            if (d != NULL)
                closedir(d);
            else if (stage >= 0)
                close(stage);
            st = move_each(b, err);
        }
    } else {
        st = move_each(b, err);
    }
    if (whole) {
        /* The files went with the folder: nothing of the staging folder is left to remove. */
        for (int i = 0; i < b->count; i++) {
            free(b->entry[i].temp_path);
            b->entry[i].temp_path = NULL;
        }
        for (int i = 0; i < b->sub_count; i++) {
            free(b->sub_stage[i]);
            b->sub_stage[i] = NULL;
        }
        free(b->stage);
        b->stage = NULL;
    }
    if (b->committed)
        sync_folder(parent);
    release_signals(&held);
    free(parent);
    fileio_batch_abort(b);
    return st;
}

/*
 * Unlinks b's temporary files and its staging folder.  Only unlink() and
 * rmdir(): a signal handler calls this.
 */
static void
remove_files(const struct fileio_batch *b)
{
    for (int i = 0; i < b->count; i++)
        if (b->entry[i].temp_path != NULL)
            (void)unlink(b->entry[i].temp_path);
    for (int i = 0; i < b->sub_count; i++)
        if (b->sub_stage[i] != NULL)
            (void)rmdir(b->sub_stage[i]);
    if (b->stage != NULL)
        (void)rmdir(b->stage);
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
        free(b->entry[i].name);
        free(b->entry[i].temp_path);
        free(b->entry[i].final_path);
    }
    for (int i = 0; i < b->sub_count; i++)
        free(b->sub_stage[i]);
    free(b->sub_stage);
    for (int i = 0; i < b->old_count; i++)
        free(b->old[i]);
    free(b->old);
    if (active == b)
        active = NULL;
    free(b->entry);
    free(b->dir);
    free(b->target);
    free(b->stage);
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
