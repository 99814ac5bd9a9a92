/*
 * model_locate.c: where --model's name leads (see model.h, model_locate):
 * a folder, a weights file, a model that ships with attnscope, the Hugging
 * Face cache, LM Studio's folders or an Ollama model (ollama.c), and what
 * a name found nowhere is told.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/models/model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/tensors.h"
#include "model_internal.h"

/* a and b (and c) into out, or false when they do not fit. */
bool
model_path_join(char *out, size_t size, const char *a, const char *b, const char *c)
{
    int n = snprintf(out, size, "%s%s%s", a, b, c);

    return n >= 0 && (size_t)n < size;
}

bool
model_is_dir(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool
model_has_file(const char *dir, const char *name)
{
    char path[MODEL_PATH_MAX + 64];
    struct stat sb;

    return model_path_join(path, sizeof path, dir, "/", name) && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The last part of a path or repository id, without trailing slashes. */
static void
short_name(const char *what, char *name, size_t size)
{
    size_t len = strlen(what);
    const char *start;

    while (len > 1 && what[len - 1] == '/')
        len--;
    start = what + len;
    while (start > what && start[-1] != '/')
        start--;
    snprintf(name, size, "%.*s", (int)(len - (size_t)(start - what)), start);
}

/*
 * In a cached repository folder, the snapshot to read: the one refs/main
 * names, or else the newest holding a config.json.  0, or -1 when none
 * (why then says what the folder holds: an incomplete download is not an
 * absent one).
 */
static int
pick_snapshot(const char *repo, char *dir, size_t size, char *why, size_t why_size)
{
    char path[MODEL_PATH_MAX];
    char *rev = NULL;
    size_t len;
    struct attn_error ignored;
    DIR *d;
    struct dirent *e;
    time_t newest = 0;
    bool found = false;
    int snapshots = 0;

    why[0] = '\0';
    /*
     * refs/main through the regular-file check: a FIFO there must not hold
     * the program up.  A revision it names must be there: another snapshot
     * (of another revision, maybe another model's sizes) is not read in its
     * place.
     */
    if (model_path_join(path, sizeof path, repo, "/refs/main", "") &&
        fileio_read_regular(path, 256, &rev, &len, &ignored) == ATTN_OK) {
        rev[strcspn(rev, "\r\n")] = '\0';
        if (rev[0] != '\0' && strchr(rev, '/') == NULL && strcmp(rev, "..") != 0 &&
            strcmp(rev, ".") != 0 && model_path_join(dir, size, repo, "/snapshots/", rev) &&
            model_has_file(dir, "config.json")) {
            free(rev);
            return 0;
        }
        (void)attn_fail_text(why, why_size,
                             "its refs/main names the snapshot %.64s, which %s", rev,
                             rev[0] == '\0' || strchr(rev, '/') != NULL || rev[0] == '.'
                                 ? "is not a revision"
                                 : "snapshots/ lacks or holds without a config.json");
        free(rev);
        return -1;
    }
    free(rev);
    d = model_path_join(path, sizeof path, repo, "/snapshots", "") ? opendir(path) : NULL;
    if (d == NULL) {
        snprintf(why, why_size, "it has no snapshots/ folder");
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char snap[MODEL_PATH_MAX + 300];
        struct stat sb;
        if (e->d_name[0] == '.')
            continue;
        snapshots++;
        if (!model_path_join(snap, sizeof snap, path, "/", e->d_name) || !model_has_file(snap, "config.json") ||
            stat(snap, &sb) != 0)
            continue;
        if ((!found || sb.st_mtime > newest) && model_path_join(dir, size, snap, "", "")) {
            newest = sb.st_mtime;
            found = true;
        }
    }
    closedir(d);
    if (!found && snapshots > 0)
        snprintf(why, why_size,
                 "none of its %d snapshot%s has a config.json (a file missing, or a link to a blob "
                 "that is not there: an incomplete download?)",
                 snapshots, snapshots == 1 ? "" : "s");
    else if (!found)
        snprintf(why, why_size, "its snapshots/ folder is empty");
    return found ? 0 : -1;
}

/* The Hugging Face cache folders to look in, in the order huggingface_hub uses them. */
static int
cache_roots(char roots[][MODEL_PATH_MAX], int max)
{
    const char *hub = getenv("HF_HUB_CACHE");
    const char *home = getenv("HF_HOME");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *user = getenv("HOME");
    int n = 0;

    if (hub != NULL && hub[0] != '\0' && n < max)
        snprintf(roots[n++], MODEL_PATH_MAX, "%s", hub);
    if (home != NULL && home[0] != '\0' && n < max)
        snprintf(roots[n++], MODEL_PATH_MAX, "%s/hub", home);
    if (xdg != NULL && xdg[0] != '\0' && n < max)
        snprintf(roots[n++], MODEL_PATH_MAX, "%s/huggingface/hub", xdg);
    if (user != NULL && user[0] != '\0' && n < max)
        snprintf(roots[n++], MODEL_PATH_MAX, "%s/.cache/huggingface/hub", user);
    return n;
}

/* Whether what can be a repository id: NAME or ORG/NAME of letters, digits, '-', '_', '.'. */
static bool
repo_id(const char *what)
{
    int slashes = 0;

    if (what[0] == '\0' || what[0] == '.' || what[0] == '/')
        return false;
    for (const char *c = what; *c != '\0'; c++) {
        if (*c == '/') {
            if (++slashes > 1 || c[1] == '\0' || c[1] == '.')
                return false;
        } else if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.')) {
            return false;
        }
    }
    return true;
}

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/attnscope"
#endif

/*
 * Whether what names a weights file: a regular file, or a TensorFlow
 * checkpoint's prefix (what.index is there).
 */
static bool
weights_file(const char *what)
{
    char index[MODEL_PATH_MAX + 8];
    struct stat sb;

    if (stat(what, &sb) == 0)
        return S_ISREG(sb.st_mode);
    return model_path_join(index, sizeof index, what, ".index", "") && stat(index, &sb) == 0 &&
           S_ISREG(sb.st_mode);
}

/* Whether nothing is at dir/name. */
bool
model_absent_in(const char *dir, const char *name)
{
    char path[MODEL_PATH_MAX + 64];

    return model_path_join(path, sizeof path, dir, "/", name) && fileio_absent(path);
}

/*
 * A model that ships with attnscope, by its folder's name: under
 * $ATTNSCOPE_MODELS, the installed samples, beside the program (a build in
 * a clone), or samples/models here.  0 with dir set, or -1.
 */
static void
shipped_roots(const char *roots[4], char beside[MODEL_PATH_MAX])
{
    fileio_beside_program("samples/models", beside, MODEL_PATH_MAX);
    roots[0] = getenv("ATTNSCOPE_MODELS");
    roots[1] = PKGDATADIR "/samples/models";
    roots[2] = beside;
    roots[3] = "samples/models";
}

static bool
is_shipped(const char *dir)
{
    return model_has_file(dir, "config.json") || model_has_file(dir, "model.gguf") ||
           model_has_file(dir, "model.pth");
}

static int
shipped_model(const char *what, char *dir, size_t size)
{
    char beside[MODEL_PATH_MAX];
    const char *roots[4];

    shipped_roots(roots, beside);
    if (strchr(what, '/') != NULL)
        return -1;
    for (int i = 0; i < 4; i++)
        if (roots[i] != NULL && roots[i][0] != '\0' && model_path_join(dir, size, roots[i], "/", what) &&
            is_shipped(dir))
            return 0;
    return -1;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
model_shipped_names(char *buf, size_t size)
{
    char beside[MODEL_PATH_MAX];
    const char *roots[4];
    char *names[64];
    int n = 0;
    size_t at = 0;

    shipped_roots(roots, beside);
    buf[0] = '\0';
    for (int i = 0; i < 4 && n == 0; i++) {
        DIR *d = roots[i] != NULL && roots[i][0] != '\0' ? opendir(roots[i]) : NULL;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL && n < 64) {
            char dir[MODEL_PATH_MAX];
            if (e->d_name[0] != '.' && model_path_join(dir, sizeof dir, roots[i], "/", e->d_name) &&
                is_shipped(dir) && (names[n] = strdup(e->d_name)) != NULL)
                n++;
        }
        if (d != NULL)
            closedir(d);
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        attn_appendf(buf, size, &at, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", names[i]);
        free(names[i]);
    }
    return n;
}

/*
 * The cached repository of what (a repository id) under the roots: 0 with
 * dir set, or -1 with *seen set when a repository folder is there but no
 * usable snapshot (why says what is wrong with it).
 */
static int
find_cached(const char *what, char roots[][MODEL_PATH_MAX], int nroots, char *dir, size_t size,
            char *seen, size_t seen_size, char *why, size_t why_size)
{
    static const char *const orgs[] = { "", "openai-community/", "distilbert/" };
    char repo[MODEL_PATH_MAX + 300];

    for (int r = 0; r < nroots; r++)
        for (size_t o = 0; o < sizeof orgs / sizeof orgs[0]; o++) {
            char id[600];
            char reason[200];
            if (o > 0 && strchr(what, '/') != NULL)
                break;
            snprintf(id, sizeof id, "%s%s", orgs[o], what);
            for (char *c = id; *c != '\0'; c++)
                if (*c == '/') {
                    memmove(c + 2, c + 1, strlen(c + 1) + 1);
                    c[0] = c[1] = '-';
                    c++;
                }
            if (!model_path_join(repo, sizeof repo, roots[r], "/models--", id) || !model_is_dir(repo))
                continue;
            if (pick_snapshot(repo, dir, size, reason, sizeof reason) == 0)
                return 0;
            if (seen[0] == '\0') {
                snprintf(seen, seen_size, "%s", repo);
                snprintf(why, why_size, "%s", reason);
            }
        }
    return -1;
}

enum attn_status
model_locate(const char *what, struct model_place *where, struct attn_error *err)
{
    char roots[4][MODEL_PATH_MAX];
    char cached[MODEL_PATH_MAX];
    char seen[MODEL_PATH_MAX + 300] = "";
    char why[256] = "";
    char searched[1024] = "";
    char lmstudio[MODEL_PATH_MAX], ollama[1024], tagged[256];
    int found;
    size_t at = 0;
    int nroots;
    bool have_cached = false;

    memset(where, 0, sizeof *where);
    if (what == NULL || what[0] == '\0')
        return attn_fail(err, ATTN_EVALUE, "--model: give a model folder or a Hugging Face name");
    if (fileio_odd_kind(what) != NULL)
        return attn_fail(err, ATTN_EIO, "--model %s: is %s, not a model's folder or file", what,
                         fileio_odd_kind(what));
    nroots = cache_roots(roots, 4);
    if (repo_id(what))
        have_cached = shipped_model(what, cached, sizeof cached) == 0 ||
                      find_cached(what, roots, nroots, cached, sizeof cached, seen, sizeof seen,
                                  why, sizeof why) == 0;
    if (model_is_dir(what)) {
        /*
         * A folder of that name here is read, as a path would be; where it
         * shadows a model of the same name elsewhere, the note says so.  A
         * folder that is not a model (no config.json) gives way to the model.
         */
        if (have_cached && model_absent_in(what, "config.json")) {
            snprintf(where->dir, sizeof where->dir, "%s", cached);
            short_name(what, where->name, sizeof where->name);
            (void)attn_fail_text(where->note, sizeof where->note,
                     "./%.100s is a folder without config.json: reading the model %.100s from "
                     "%.240s instead",
                     what, what, cached);
            return ATTN_OK;
        }
        if (!model_path_join(where->dir, sizeof where->dir, what, "", ""))
            return attn_fail(err, ATTN_EIO, "--model: the folder's name is too long");
        short_name(what, where->name, sizeof where->name);
        if (have_cached)
            (void)attn_fail_text(where->note, sizeof where->note,
                     "reading the folder ./%.100s here, not the model %.100s in %.230s (give that "
                     "path to read it)",
                     what, what, cached);
        return ATTN_OK;
    }
    if (weights_file(what)) {
        /* A weights file (model.pth, a checkpoint's prefix): its folder holds the rest. */
        const char *slash = strrchr(what, '/');
        if (!model_path_join(where->weights, sizeof where->weights, what, "", ""))
            return attn_fail(err, ATTN_EIO, "--model: the file's name is too long");
        if (slash == NULL)
            snprintf(where->dir, sizeof where->dir, ".");
        else
            snprintf(where->dir, sizeof where->dir, "%.*s", slash == what ? 1 : (int)(slash - what),
                     what);
        short_name(what, where->name, sizeof where->name);
        return ATTN_OK;
    }
    if (have_cached) {
        snprintf(where->dir, sizeof where->dir, "%s", cached);
        short_name(what, where->name, sizeof where->name);
        return ATTN_OK;
    }
    /* LM Studio's publisher/model, then Ollama's NAME[:TAG]. */
    /* Each place answers 0 (found), -1 (err said why not) or 1 (not there: the next). */
    if ((found = model_lmstudio(what, where, lmstudio, sizeof lmstudio, err)) == 1)
        found = model_ollama(what, where, err);
    if (found != 1)
        return found == 0 ? ATTN_OK : err->status;
    /*
     * A bare name whose tags Ollama has (`--model qwen3`
     * beside qwen3:0.6b): one of them is what was meant, not a download.
     */
    if (model_ollama_looked(what, ollama, sizeof ollama, tagged, sizeof tagged) > 0 &&
        strchr(what, ':') == NULL)
        return attn_fail(err, ATTN_EIO, "--model %s: %s: name the tag, as in `--model %s`", what,
                         ollama, tagged);
    if (!repo_id(what))
        return attn_fail(err, ATTN_EIO, "--model %s: no such file or folder, and no Ollama model "
                                        "of that name%s%s",
                         what, ollama[0] != '\0' ? ": " : "", ollama);
    if (seen[0] != '\0')
        return attn_fail(err, ATTN_EIO,
                         "--model %s: %s is in the Hugging Face cache, but %s: download it again "
                         "(for example `huggingface-cli download %s`)",
                         what, seen, why, strchr(what, '/') != NULL ? what : "openai-community/gpt2");
    for (int r = 0; r < nroots; r++)
        attn_appendf(searched, sizeof searched, &at, "%s%s", r > 0 ? ", " : "", roots[r]);
    /* (a repository's id is its own example; a bare name, GPT-2's) */
    return attn_fail(err, ATTN_EIO,
                     "--model %s: no such folder, and no download of it in the Hugging Face cache "
                     "(looked in %s)%s%s%s%s: give the folder, or download it first (for "
                     "example `huggingface-cli download %s`)",
                     what, nroots > 0 ? searched : "no cache folder: HOME is not set",
                     lmstudio[0] != '\0' ? ", nor in " : "", lmstudio,
                     ollama[0] != '\0' ? "; " : "", ollama,
                     strchr(what, '/') != NULL ? what : "openai-community/gpt2");
}
