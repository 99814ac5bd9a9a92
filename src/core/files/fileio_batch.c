/* fileio_batch.c: all-or-nothing batches of files, begun, written and abandoned (see fileio_batch.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"
#include "fileio_batch_internal.h"

/*
 * The batch being written, so that a signal handler can remove its
 * temporary files (fileio_batch_remove_temporaries()).  attnscope writes one batch
 * at a time, from one thread; the entry array is replaced, never realloc'ed
 * in place, so a handler that interrupts the batch sees a whole array.
 */
static struct fileio_batch *volatile active;

const char *
batch_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

char *
batch_join_path(const char *dir, const char *name)
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
void
batch_hold_signals(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, old);
}

void
batch_release_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

/* Makes a folder's entries durable (renames, links, removals). */
void
batch_sync_folder(const char *path)
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
char *
batch_parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Whether the batch writes name: one of its files, or the subfolder some are in. */
bool
batch_is_our_name(const struct fileio_batch *b, const char *name)
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
bool
batch_writes_in(const struct fileio_batch *b, const char *sub, const char *name)
{
    const size_t ns = strlen(sub);

    for (int i = 0; i < b->count; i++) {
        const char *ours = b->entry[i].name;
        if (strncmp(ours, sub, ns) == 0 && ours[ns] == '/' && strcmp(ours + ns + 1, name) == 0)
            return true;
    }
    return false;
}

int
batch_by_string(const void *a, const void *b)
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
void
batch_manifest_read(struct fileio_batch *b)
{
    char *path = batch_join_path(b->target, FILEIO_MANIFEST);
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
    qsort(b->old, (size_t)b->old_count, sizeof *b->old, batch_by_string);
}

/* Whether an earlier export (the manifest) wrote sub/name and this batch replaces it. */
bool
batch_was_written(const struct fileio_batch *b, const char *sub, const char *name)
{
    char key[2 * NAME_MAX + 2];
    const char *k = key;

    if (!b->replaces || b->old_count == 0 || snprintf(key, sizeof key, "%s/%s", sub, name) >= (int)sizeof key)
        return false;
    return bsearch(&k, b->old, (size_t)b->old_count, sizeof *b->old, batch_by_string) != NULL;
}

/* Whether the manifest lists a file in the subfolder sub: a folder an earlier export made. */
bool
batch_made_folder(const struct fileio_batch *b, const char *sub)
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
bool
batch_is_old_temporary(const char *name)
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

void
batch_remove_folder_files(int at, const char *name)
{
    remove_tree(at, name, 1);
}

/*
 * Removes what killed exports left in folder: staging folders whose names
 * start with prefix and whose process is gone, and (in_target) the old
 * per-file temporaries.  A live process's staging folder is left alone.
 */
void
batch_remove_leftovers(const char *folder, const char *prefix, bool in_target)
{
    DIR *d = opendir(folder);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        long pid = stage_owner(e->d_name, prefix);
        if (pid > 0 && pid <= INT_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            batch_remove_folder_files(dirfd(d), e->d_name);
        else if (in_target && pid == 0 && batch_is_old_temporary(e->d_name))
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
    const char *base = batch_base_name(target);
    struct stat up;
    struct stat here;

    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(target, "/") == 0)
        return false;
    if (stat(".", &here) == 0 && here.st_dev == st->st_dev && here.st_ino == st->st_ino)
        return false;
    return stat(parent, &up) == 0 && up.st_dev == st->st_dev && access(parent, W_OK | X_OK) == 0 &&
           access(target, R_OK | X_OK) == 0;
}

/* Makes the staging folder from template tmpl (freed on failure); signals held. */
static int
make_stage(struct fileio_batch *b, char *tmpl)
{
    sigset_t held;
    int ok;

    batch_hold_signals(&held);
    ok = mkdtemp(tmpl) != NULL;
    if (ok) {
        b->stage = tmpl;
        active = b;
    }
    batch_release_signals(&held);
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
    parent = batch_parent_of(b->target);
    if (parent == NULL) {
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    snprintf(prefix, sizeof prefix, ".%.*s" STAGE_TAG, NAME_MAX, batch_base_name(b->target));
    b->swap = !b->existed || can_swap(b->target, parent, &st);
    if (b->swap) {
        batch_remove_leftovers(parent, prefix, false);
        tmpl = stage_template(parent, batch_base_name(b->target));
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
        batch_remove_leftovers(b->target, STAGE_TAG, true);
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
        const char *sub = batch_base_name(b->sub_stage[i]);
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
    batch_hold_signals(&held);
    b->sub_stage[b->sub_count++] = path;
    batch_release_signals(&held);
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

enum attn_status
fileio_batch_open(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err)
{
    *f = NULL;
    if (!batch_name_ok(name))
        return attn_fail(err, ATTN_EVALUE, "'%s' is not a plain file name", name);
    return batch_open_entry(b, name, f, err);
}

/* Opens the batch's file name (checked by the caller: the manifest's name is hidden). */
enum attn_status
batch_open_entry(struct fileio_batch *b, const char *name, FILE **f, struct attn_error *err)
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
        e->final_path = batch_join_path(b->dir, name);
        e->temp_path = batch_join_path(b->stage, name);
        if (e->name == NULL || e->final_path == NULL || e->temp_path == NULL) {
            free(e->name);
            free(e->final_path);
            free(e->temp_path);
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        }
        /* Counted before it exists, so that a signal handler removes it. */
        batch_hold_signals(&held);
        b->count++;
        batch_release_signals(&held);
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
fileio_batch_remove_temporaries(void)
{
    struct fileio_batch *b = active;

    if (b != NULL)
        remove_files(b);
}
