/*
 * walkthrough_find.c: finding a lesson by file or by the name of an
 * installed one (see walkthrough.h).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "render/view.h"
#include "front/lessons/walkthrough.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/attnscope"
#endif

/* ---------------------------------------------------------------- finding */

static bool
is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A regular file that can be read: a FIFO or a device in a lessons folder is skipped, not opened. */
static bool
is_readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

int
walkthrough_dirs(const char **dirs, int max)
{
    static char beside_exe[4096];
    const char *candidates[4];
    int n = 0;

    /* Beside the program: a build in a clone finds its samples without installing. */
    fileio_beside_program("samples/walkthroughs", beside_exe, sizeof beside_exe);
    candidates[0] = getenv("ATTNSCOPE_WALKTHROUGHS");
    candidates[1] = PKGDATADIR "/samples/walkthroughs";
    candidates[2] = beside_exe;
    candidates[3] = "samples/walkthroughs";
    for (int i = 0; i < 4 && n < max; i++)
        if (candidates[i] != NULL && candidates[i][0] != '\0' && is_dir(candidates[i]))
            dirs[n++] = candidates[i];
    return n;
}

int
walkthrough_find(const char *name, char *buf, size_t size)
{
    const char *dirs[4];
    int n;

    if (access(name, R_OK) == 0 || strchr(name, '/') != NULL) {
        snprintf(buf, size, "%s", name);
        return 0;
    }
    n = walkthrough_dirs(dirs, 4);
    for (int i = 0; i < n; i++) {
        snprintf(buf, size, "%s/%s", dirs[i], name);
        if (is_readable_file(buf))
            return 0;
        snprintf(buf, size, "%s/%s.walk", dirs[i], name);
        if (is_readable_file(buf))
            return 0;
    }
    snprintf(buf, size, "%s", name);
    return -1;
}

/* For sorting names with qsort. */
static int
by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t
walkthrough_names(char *buf, size_t size)
{
    const char *dirs[4];
    char *names[256];
    int count = 0;
    int n = walkthrough_dirs(dirs, 4);
    size_t used = 0;

    if (size > 0)
        buf[0] = '\0';
    for (int d = 0; d < n; d++) {
        DIR *dir = opendir(dirs[d]);
        struct dirent *e;
        if (dir == NULL)
            continue;
        while ((e = readdir(dir)) != NULL && count < 256) {
            size_t len = strlen(e->d_name);
            bool seen = false;
            if (len < 6 || strcmp(e->d_name + len - 5, ".walk") != 0)
                continue;
            for (int i = 0; i < count && !seen; i++)
                seen = strncmp(names[i], e->d_name, len - 5) == 0 && names[i][len - 5] == '\0';
            if (!seen && (names[count] = strndup(e->d_name, len - 5)) != NULL)
                count++;
        }
        closedir(dir);
    }
    qsort(names, (size_t)count, sizeof names[0], by_name);
    for (int i = 0; i < count; i++) {
        attn_appendf(buf, size, &used, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    return (size_t)count;
}

int
walkthrough_model_given(const char *name, const char *what, char *msg, size_t size)
{
    char path[4096];
    char lesson[256];
    struct walkthrough w;
    struct attn_error err;
    int same;

    attn_error_clear(&err);
    if (walkthrough_find(name, path, sizeof path) != 0)
        return attn_fail_text(msg, size, "--walkthrough %s: no such file, and no lesson of that "
                                         "name", name), -1;
    if (walkthrough_load(&w, path, &err) != ATTN_OK)
        return attn_fail_text(msg, size, "%s", err.msg), -1;
    same = walkthrough_same_model(&w, what, lesson, sizeof lesson, &err);
    walkthrough_destroy(&w);
    if (same < 0)
        return attn_fail_text(msg, size, "%s", err.msg), -1;
    if (same == 0 && lesson[0] == '\0')
        attn_fail_text(msg, size, "--walkthrough %s is a lesson on the book's classes; drop "
                                  "--model %s", name, what);
    else if (same == 0)
        attn_fail_text(msg, size, "--walkthrough %s opens its own model, %s; --model %s is "
                                  "another: drop --model, or give the lesson's", name,
                       strrchr(lesson, '/') != NULL ? strrchr(lesson, '/') + 1 : lesson, what);
    return same;
}
