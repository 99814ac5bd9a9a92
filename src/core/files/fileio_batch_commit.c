/*
 * fileio_batch_commit.c: a batch's files put in place at once: what the
 * target holds of the user's carried over, the staging folder exchanged
 * with the target (or its files renamed in one by one), the manifest
 * written (see fileio_batch.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"
#include "fileio_batch_internal.h"

/* Links made into the staging folder by carry_over, to be undone if it cannot finish. */
struct carried {
    char **path;
    int count;
    char **made; /* subfolders made in the staging folder for an earlier export's stale ones */
    int made_count;
};

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
        char *final = batch_join_path(b->target, batch_base_name(b->sub_stage[i]));
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

static int
remember(char ***list, int *count, const char *a, const char *b)
{
    char **more = realloc(*list, ((size_t)*count + 1) * sizeof *more);
    char *p = b != NULL ? batch_join_path(a, b) : strdup(a);

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
    char *from = batch_join_path(b->target, sub);
    char *to = batch_join_path(b->stage, sub);
    DIR *d = from != NULL ? opendir(from) : NULL;
    struct dirent *e;
    struct stat sb;
    int rc = from != NULL && to != NULL && d != NULL ? 0 : -1;

    while (rc == 0 && (e = readdir(d)) != NULL) {
        char *link_path;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            batch_writes_in(b, sub, e->d_name) || batch_was_written(b, sub, e->d_name))
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
        link_path = batch_join_path(to, e->d_name);
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
            batch_is_old_temporary(e->d_name) || strcmp(e->d_name, FILEIO_MANIFEST) == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            /* One of ours (written now, or by an earlier export): its other files; else no. */
            if (batch_is_our_name(b, e->d_name) || batch_made_folder(b, e->d_name))
                rc = carry_sub(b, e->d_name, &c);
            else
                rc = -1;
        } else if (!batch_is_our_name(b, e->d_name)) {
            char *to = batch_join_path(b->stage, e->d_name);
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
    char *parent = batch_parent_of(b->stage);
    int at = parent ? open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

    /* Everything in it was replaced or carried over (linked) into the new one. */
    if (at >= 0) {
        batch_remove_folder_files(at, batch_base_name(b->stage));
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
        if (batch_writes_in(b, sub, slash + 1))
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
                          batch_base_name(b->entry[0].final_path), batch_base_name(b->entry[i - 1].final_path));
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
    batch_remove_leftovers(b->target, STAGE_TAG, true);
    batch_sync_folder(b->target);
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
    qsort(names, (size_t)n, sizeof *names, batch_by_string);
    st = batch_open_entry(b, FILEIO_MANIFEST, &f, err);
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
        batch_manifest_read(b);
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
    parent = batch_parent_of(b->target);
    if (parent == NULL) {
        fileio_batch_abort(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    /* From here to the end a signal waits: the folder is never left half-replaced. */
    batch_hold_signals(&held);
    batch_sync_folder(b->stage); /* its entries as well as its files, before it can become the target */
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
                if (!batch_is_our_name(b, e->d_name) && e->d_name[0] != '.')
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
        batch_sync_folder(parent);
    batch_release_signals(&held);
    free(parent);
    fileio_batch_abort(b);
    return st;
}
