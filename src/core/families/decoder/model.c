/* model.c: a model folder, or a name in the Hugging Face cache (see model.h). */
#include "config.h"

#include <dirent.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/base/utf8.h"
#include "attnscope/families/decoder/model.h"
#include "attnscope/files/digest.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/gguf.h"
#include "attnscope/files/tensors.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/text/chat.h"
#include "attnscope/text/tokjson.h"

/* a and b (and c) into out, or false when they do not fit. */
static bool
join(char *out, size_t size, const char *a, const char *b, const char *c)
{
    int n = snprintf(out, size, "%s%s%s", a, b, c);

    return n >= 0 && (size_t)n < size;
}

static bool
is_dir(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool
is_file(const char *dir, const char *name)
{
    char path[MODEL_PATH_MAX + 64];
    struct stat sb;

    return join(path, sizeof path, dir, "/", name) && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
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
     * place (issue 35).
     */
    if (join(path, sizeof path, repo, "/refs/main", "") &&
        fileio_read_regular(path, 256, &rev, &len, &ignored) == ATTN_OK) {
        rev[strcspn(rev, "\r\n")] = '\0';
        if (rev[0] != '\0' && strchr(rev, '/') == NULL && strcmp(rev, "..") != 0 &&
            strcmp(rev, ".") != 0 && join(dir, size, repo, "/snapshots/", rev) &&
            is_file(dir, "config.json")) {
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
    d = join(path, sizeof path, repo, "/snapshots", "") ? opendir(path) : NULL;
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
        if (!join(snap, sizeof snap, path, "/", e->d_name) || !is_file(snap, "config.json") ||
            stat(snap, &sb) != 0)
            continue;
        if ((!found || sb.st_mtime > newest) && join(dir, size, snap, "", "")) {
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
    return join(index, sizeof index, what, ".index", "") && stat(index, &sb) == 0 &&
           S_ISREG(sb.st_mode);
}

/* Whether nothing is at dir/name. */
static bool
fileio_absent_in(const char *dir, const char *name)
{
    char path[MODEL_PATH_MAX + 64];

    return join(path, sizeof path, dir, "/", name) && fileio_absent(path);
}

/*
 * A model that ships with attnscope, by its folder's name: under
 * $ATTNSCOPE_MODELS, the installed samples, beside the program (a build in
 * a clone), or samples/models here.  0 with dir set, or -1.
 */
static int
shipped_model(const char *what, char *dir, size_t size)
{
    char beside[MODEL_PATH_MAX];
    const char *roots[4];

    fileio_beside_program("samples/models", beside, sizeof beside);
    roots[0] = getenv("ATTNSCOPE_MODELS");
    roots[1] = PKGDATADIR "/samples/models";
    roots[2] = beside;
    roots[3] = "samples/models";
    if (strchr(what, '/') != NULL)
        return -1;
    for (int i = 0; i < 4; i++)
        if (roots[i] != NULL && roots[i][0] != '\0' && join(dir, size, roots[i], "/", what) &&
            (is_file(dir, "config.json") || is_file(dir, "model.gguf")))
            return 0;
    return -1;
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
            if (!join(repo, sizeof repo, roots[r], "/models--", id) || !is_dir(repo))
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
    char lmstudio[MODEL_PATH_MAX], ollama[1024];
    size_t at = 0;
    int nroots;
    bool have_cached = false;

    memset(where, 0, sizeof *where);
    if (what == NULL || what[0] == '\0')
        return attn_fail(err, ATTN_EVALUE, "--model: give a model folder or a Hugging Face name");
    nroots = cache_roots(roots, 4);
    if (repo_id(what))
        have_cached = shipped_model(what, cached, sizeof cached) == 0 ||
                      find_cached(what, roots, nroots, cached, sizeof cached, seen, sizeof seen,
                                  why, sizeof why) == 0;
    if (is_dir(what)) {
        /*
         * A folder of that name here is read, as a path would be; where it
         * shadows a model of the same name elsewhere, the note says so.  A
         * folder that is not a model (no config.json) gives way to the model.
         */
        if (have_cached && fileio_absent_in(what, "config.json")) {
            snprintf(where->dir, sizeof where->dir, "%s", cached);
            short_name(what, where->name, sizeof where->name);
            (void)attn_fail_text(where->note, sizeof where->note,
                     "./%.100s is a folder without config.json: reading the model %.100s from "
                     "%.240s instead",
                     what, what, cached);
            return ATTN_OK;
        }
        if (!join(where->dir, sizeof where->dir, what, "", ""))
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
        if (!join(where->weights, sizeof where->weights, what, "", ""))
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
    switch (model_lmstudio(what, where, lmstudio, sizeof lmstudio, err)) {
    case 0:
        return ATTN_OK;
    case -1:
        return err->status;
    default:
        break;
    }
    switch (model_ollama(what, where, err)) {
    case 0:
        return ATTN_OK;
    case -1:
        return err->status;
    default:
        break;
    }
    model_ollama_looked(what, ollama, sizeof ollama);
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

/*
 * "Build a Reasoning Model (From Scratch)" saves its Qwen3 files beside
 * tokenizer-base.json and tokenizer-reasoning.json, not tokenizer.json: the
 * tokenizer-TAG.json whose TAG the weights file's name holds
 * (qwen3-0.6B-reasoning.pth: tokenizer-reasoning.json), else the only one,
 * else tokenizer-base.json (a checkpoint of the book's RL training, which
 * starts from the base model); m->note says which was taken and why.
 * ATTN_EABSENT when the folder has none.
 */
static enum attn_status
paired_tokenizer(struct model *m, const char *dir, struct attn_error *err)
{
    const char *base = strrchr(m->weights, '/');
    DIR *d = opendir(dir);
    struct dirent *e;
    char best[256] = "", only[256] = "";
    int count = 0;
    bool has_base = false;
    const char *why;

    if (d == NULL)
        return ATTN_EABSENT;
    base = base != NULL ? base + 1 : m->weights;
    while ((e = readdir(d)) != NULL) {
        const size_t n = strlen(e->d_name);
        char tag[256];
        if (n <= 15 || strncmp(e->d_name, "tokenizer-", 10) != 0 ||
            strcmp(e->d_name + n - 5, ".json") != 0 || n - 15 >= sizeof tag)
            continue;
        snprintf(tag, sizeof tag, "%.*s", (int)(n - 15), e->d_name + 10);
        count++;
        snprintf(only, sizeof only, "%s", e->d_name);
        has_base |= strcmp(tag, "base") == 0;
        /* (the longest tag the name holds: "reasoning" over "r") */
        if (strstr(base, tag) != NULL && strlen(e->d_name) > strlen(best))
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (count == 0)
        return ATTN_EABSENT;
    if (best[0] != '\0')
        why = "the one its name pairs with";
    else if (count == 1)
        snprintf(best, sizeof best, "%s", only), why = "the only one beside it";
    else if (has_base)
        snprintf(best, sizeof best, "tokenizer-base.json"),
            why = "its name names no other; the book's RL checkpoints start from the base model";
    else
        return attn_fail(err, ATTN_EIO,
                         "%s: no tokenizer.json, and %d tokenizer-*.json files none of which %s's "
                         "name pairs with: rename the one it was trained with tokenizer.json",
                         dir, count, base);
    if (!join(m->tokenizer, sizeof m->tokenizer, dir, "/", best))
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    (void)attn_fail_text(m->note, sizeof m->note, "%.200s's tokenizer: %.100s (%s)", base, best,
                         why);
    return bpe_load_tokenizer_json(&m->bpe, m->tokenizer, err);
}

/*
 * The tokenizer's files in dir, in whichever of their three forms it has:
 * ATTN_EABSENT when none (a pair half there is an error).
 */
static enum attn_status
tokenizer_in(struct model *m, const char *dir, struct attn_error *err)
{
    static const char *const pairs[][2] = { { "vocab.json", "merges.txt" },
                                            { "encoder.json", "vocab.bpe" } };
    char merges[MODEL_PATH_MAX + 32];

    for (size_t i = 0; i < 2; i++) {
        /* Present is anything there: a FIFO or a loop of links is then named for what it is. */
        bool a = !fileio_absent_in(dir, pairs[i][0]);
        bool b = !fileio_absent_in(dir, pairs[i][1]);
        if (!a && !b)
            continue;
        if (a != b)
            return attn_fail(err, ATTN_EIO, "%s/%s: missing (%s is there; they come as a pair)",
                             dir, pairs[i][a ? 1 : 0], pairs[i][a ? 0 : 1]);
        if (!join(m->tokenizer, sizeof m->tokenizer, dir, "/", pairs[i][0]) ||
            !join(merges, sizeof merges, dir, "/", pairs[i][1]))
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        return bpe_load(&m->bpe, m->tokenizer, merges, err);
    }
    if (!fileio_absent_in(dir, "tokenizer.json")) {
        if (!join(m->tokenizer, sizeof m->tokenizer, dir, "/tokenizer.json", ""))
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        return bpe_load_tokenizer_json(&m->bpe, m->tokenizer, err);
    }
    if (m->weights[0] != '\0' && strcmp(dir, m->dir) == 0)
        return paired_tokenizer(m, dir, err);
    return ATTN_EABSENT;
}

/*
 * The tokenizer inside the weights when they are a GGUF file (a model's
 * own, whatever lies beside it); ATTN_EABSENT when they are not GGUF.  A
 * file named is known by its magic; a folder's weights are opened only when
 * the folder holds no tokenizer files (LM Studio's: one .gguf).
 */
static enum attn_status
gguf_tokenizer(struct model *m, struct attn_error *err)
{
    struct tensor_source src;
    const struct gguf *g;
    enum attn_status rc = ATTN_EABSENT;

    if (m->weights[0] != '\0' && !gguf_file_is(m->weights))
        return ATTN_EABSENT;
    memset(&src, 0, sizeof src);
    /* (weights that cannot be read: their problem is what to say, not the tokenizer's) */
    if ((rc = tensors_open(&src, m->weights[0] != '\0' ? m->weights : m->dir, err)) != ATTN_OK)
        return rc;
    rc = ATTN_EABSENT;
    if ((g = tensors_gguf(&src)) != NULL) {
        snprintf(m->tokenizer, sizeof m->tokenizer, "%s", g->path);
        rc = bpe_load_gguf(&m->bpe, g, err);
    }
    tensors_close(&src);
    return rc;
}

/* A gpt2/SIZE/ folder of dir with OpenAI's tokenizer (chapter 5's download), into out. */
static bool
sibling_gpt2(const char *dir, char *out, size_t size)
{
    char gpt2[MODEL_PATH_MAX + 8];
    struct dirent **names = NULL;
    int n;
    bool found = false;

    if (!join(gpt2, sizeof gpt2, dir, "/gpt2", "") || !is_dir(gpt2) ||
        (n = scandir(gpt2, &names, NULL, alphasort)) < 0)
        return false;
    for (int i = 0; i < n; i++) {
        if (!found && names[i]->d_name[0] != '.' &&
            join(out, size, gpt2, "/", names[i]->d_name) && is_file(out, "encoder.json") &&
            is_file(out, "vocab.bpe"))
            found = true;
        free(names[i]);
    }
    free(names);
    return found;
}

/*
 * tiktoken's cache of GPT-2's files, as tiktoken itself looks for it:
 * $TIKTOKEN_CACHE_DIR, else $DATA_GYM_CACHE_DIR, else the temporary
 * folder's data-gym-cache/; each file is named by the SHA-1 of its URL
 * (https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/ +
 * encoder.json, vocab.bpe).  The temporary folder is anyone's to write
 * to, so the files are read only when their SHA-256 sums are those of
 * OpenAI's published files (samples/tokenizers/gpt2/README.md lists them,
 * and tiktoken checks its downloads against them); files that differ are
 * passed over, and m->note says so.  Loads them; ATTN_EABSENT when they
 * are not there or not OpenAI's.
 */
static enum attn_status
tiktoken_cache(struct model *m, struct attn_error *err)
{
    static const char encoder_sha1[] = "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6";
    static const char bpe_sha1[] = "6d1cbeee0f20b3d9449abfede4726ed8212e3aee";
    static const char encoder_sha256[] =
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783";
    static const char bpe_sha256[] =
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5";
    const char *dir = getenv("TIKTOKEN_CACHE_DIR");
    char folder[MODEL_PATH_MAX];
    char merges[MODEL_PATH_MAX + 64];

    if (dir == NULL)
        dir = getenv("DATA_GYM_CACHE_DIR");
    if (dir == NULL) {
        const char *tmp = getenv("TMPDIR");
        if (tmp == NULL || tmp[0] == '\0')
            tmp = getenv("TEMP");
        if (tmp == NULL || tmp[0] == '\0')
            tmp = getenv("TMP");
        if (tmp == NULL || tmp[0] == '\0')
            tmp = "/tmp";
        if (!join(folder, sizeof folder, tmp, "/data-gym-cache", ""))
            return ATTN_EABSENT;
        dir = folder;
    }
    if (dir[0] == '\0' || !is_file(dir, encoder_sha1) || !is_file(dir, bpe_sha1) ||
        !join(m->tokenizer, sizeof m->tokenizer, dir, "/", encoder_sha1) ||
        !join(merges, sizeof merges, dir, "/", bpe_sha1))
        return ATTN_EABSENT;
    if (!digest_file_is(m->tokenizer, JSONFILE_VOCAB_MAX, encoder_sha256) ||
        !digest_file_is(merges, JSONFILE_VOCAB_MAX, bpe_sha256)) {
        char said[400];
        size_t at = strlen(m->note);
        (void)attn_fail_text(said, sizeof said,
                             "GPT-2's tokenizer in %s was passed over: its files are not "
                             "OpenAI's (their SHA-256 sums differ)",
                             dir);
        attn_appendf(m->note, sizeof m->note, &at, "%s%s", at > 0 ? "; " : "", said);
        m->tokenizer[0] = '\0';
        return ATTN_EABSENT;
    }
    return bpe_load(&m->bpe, m->tokenizer, merges, err);
}

/*
 * GPT-2's tokenizer as installed with attnscope, into dir: under
 * $ATTNSCOPE_TOKENIZERS (when set, the only place), the installed
 * samples/tokenizers, beside the program (a build in a clone), or
 * samples/tokenizers here; each a gpt2/ folder of encoder.json and vocab.bpe.
 */
static bool
shipped_tokenizer(char *dir, size_t size)
{
    char beside[MODEL_PATH_MAX];
    const char *env = getenv("ATTNSCOPE_TOKENIZERS");
    const char *roots[3];
    int count = 3;

    fileio_beside_program("samples/tokenizers", beside, sizeof beside);
    roots[0] = PKGDATADIR "/samples/tokenizers";
    roots[1] = beside;
    roots[2] = "samples/tokenizers";
    if (env != NULL) {
        roots[0] = env;
        count = 1;
    }
    for (int i = 0; i < count; i++)
        if (roots[i][0] != '\0' && join(dir, size, roots[i], "/gpt2", "") &&
            is_file(dir, "encoder.json") && is_file(dir, "vocab.bpe"))
            return true;
    return false;
}

/*
 * The tokenizer: the model folder's own, else GPT-2's from the places a
 * reader of the book has it (see model.h); where it came from into from.
 */
static enum attn_status
open_tokenizer(struct model *m, bool may_borrow, char *from, size_t from_size,
               struct attn_error *err)
{
    char dir[MODEL_PATH_MAX];
    struct model_place cached;
    struct attn_error ignored;
    enum attn_status rc = m->weights[0] != '\0' ? gguf_tokenizer(m, err) : ATTN_EABSENT;

    from[0] = '\0';
    if (rc == ATTN_EABSENT)
        rc = tokenizer_in(m, m->dir, err);
    if (rc == ATTN_EABSENT && m->weights[0] == '\0')
        rc = gguf_tokenizer(m, err);
    if (rc != ATTN_EABSENT)
        return rc;
    if (!may_borrow)
        return attn_fail(err, ATTN_EIO,
                         "%s: no tokenizer.json: a Llama-style model's tokenizer is its own (put "
                         "the tokenizer.json of its repository beside the weights)",
                         m->dir);
    if (sibling_gpt2(m->dir, dir, sizeof dir)) {
        snprintf(from, from_size, "GPT-2's, from %s (beside the weights)", dir);
        return tokenizer_in(m, dir, err);
    }
    if ((rc = tiktoken_cache(m, err)) != ATTN_EABSENT) {
        snprintf(from, from_size, "GPT-2's, from tiktoken's cache");
        return rc;
    }
    attn_error_clear(&ignored);
    if (model_locate("gpt2", &cached, &ignored) == ATTN_OK && cached.weights[0] == '\0' &&
        strcmp(cached.dir, m->dir) != 0 &&
        (rc = tokenizer_in(m, cached.dir, err)) != ATTN_EABSENT) {
        snprintf(from, from_size, "GPT-2's, from %s", cached.dir);
        return rc;
    }
    if (shipped_tokenizer(dir, sizeof dir)) {
        snprintf(from, from_size, "GPT-2's, as installed with attnscope (%s)", dir);
        return tokenizer_in(m, dir, err);
    }
    return attn_fail(err, ATTN_EIO,
                     "%s: no tokenizer: attnscope reads vocab.json and merges.txt (Hugging Face), "
                     "encoder.json and vocab.bpe (OpenAI's, as the book's chapter 5 downloads), or "
                     "tokenizer.json, and found no copy of GPT-2's to borrow",
                     m->dir);
}

/* --classes a,b,...: the classifier's names (default "class 0", ...); -1 with err set. */
static int
name_classes(struct model *m, const char *classes, struct attn_error *err)
{
    const int n = m->dec.cfg.n_classes;
    int k = 0;

    if (classes != NULL && n == 0) {
        attn_fail(err, ATTN_EVALUE,
                  "--classes: %s is not a classifier: its head scores the vocabulary's next tokens",
                  m->name);
        return -1;
    }
    for (int i = 0; i < n && i < MODEL_CLASSES_MAX; i++)
        snprintf(m->class_names[i], sizeof m->class_names[i], "class %d", i);
    if (classes == NULL)
        return 0;
    for (const char *at = classes;; k++) {
        size_t len = strcspn(at, ",");
        if (len == 0 || len >= sizeof m->class_names[0]) {
            attn_fail(err, ATTN_EVALUE, "--classes %s: name %d is %s", classes, k + 1,
                      len == 0 ? "empty" : "longer than 47 bytes");
            return -1;
        }
        if (k < MODEL_CLASSES_MAX)
            snprintf(m->class_names[k], sizeof m->class_names[k], "%.*s", (int)len, at);
        if (at[len] == '\0')
            break;
        at += len + 1;
    }
    if (k + 1 != n) {
        attn_fail(err, ATTN_EVALUE, "--classes names %d class%s; %s's head has %d", k + 1,
                  k == 0 ? "" : "es", m->name, n);
        return -1;
    }
    return 0;
}

/* m->about: the weights' format and file, what gave the sizes, the tokenizer. */
static void
describe_model(struct model *m, const char *tokenizer_from)
{
    const struct decoder_model *d = &m->dec;
    size_t at = 0;

    attn_appendf(m->about, sizeof m->about, &at, "weights: %s (%s); sizes: %s", d->source,
                 d->format, d->described_by);
    if (d->heads_from[0] != '\0')
        attn_appendf(m->about, sizeof m->about, &at, ", %s", d->heads_from);
    if (d->cfg.n_classes > 0)
        attn_appendf(m->about, sizeof m->about, &at, "; a classifier of %d classes",
                     d->cfg.n_classes);
    attn_appendf(m->about, sizeof m->about, &at, "; tokenizer: %s",
                 tokenizer_from[0] != '\0' ? tokenizer_from : m->tokenizer);
    if (m->bpe.vocab_size > d->cfg.vocab_size)
        attn_appendf(m->about, sizeof m->about, &at,
                     " (%d tokens: ids from %d have no row in the embedding, and a text that "
                     "uses one is refused)",
                     m->bpe.vocab_size, d->cfg.vocab_size);
    at = 0;
    if (tokenizer_from[0] != '\0')
        attn_appendf(m->borrowed, sizeof m->borrowed, &at, "tokenizer: %s", tokenizer_from);
    if (d->heads_from[0] != '\0')
        attn_appendf(m->borrowed, sizeof m->borrowed, &at, "%s%s", at > 0 ? "; " : "",
                     d->heads_from);
}

static int read_hints(struct model *m, struct attn_error *err);

/*
 * The end tokens a Hugging Face folder names, as its generate stops:
 * generation_config.json's eos_token_id (an id or a list of them), else
 * config.json's (what Hugging Face makes the generation config of when the
 * folder has none).  0, or -1 with err naming the file and the key when
 * it holds something else or an id outside the vocabulary.
 */
static int
read_end_tokens(struct model *m, struct attn_error *err)
{
    static const char *const files[] = { "generation_config.json", "config.json" };
    struct decoder_model *d = &m->dec;
    const char *dot = strrchr(m->weights, '.');

    /* A GGUF names its own (architecture_gguf.c); the book's .pth files none, as the book. */
    if (d->n_end_tokens > 0 || strncmp(d->format, "GGUF", 4) == 0 ||
        (dot != NULL && strcmp(dot, ".pth") == 0))
        return 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[MODEL_PATH_MAX + 32];
        json_t *root, *eos;
        struct stat st;
        size_t count;
        snprintf(path, sizeof path, "%s/%s", m->dir, files[f]);
        if (stat(path, &st) != 0)
            continue;
        root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
        if (root == NULL)
            return -1;
        eos = json_is_object(root) ? json_object_get(root, "eos_token_id") : NULL;
        if (eos == NULL || json_is_null(eos)) {
            json_decref(root);
            continue;
        }
        count = json_is_array(eos) ? json_array_size(eos) : 1;
        for (size_t i = 0; i < count; i++) {
            json_t *v = json_is_array(eos) ? json_array_get(eos, i) : eos;
            json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
            if (id < 0 || id >= d->cfg.vocab_size || i >= DECODER_END_MAX) {
                json_decref(root);
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: eos_token_id: give a token id from 0 to %d, or a list of "
                                 "at most %d", path, d->cfg.vocab_size - 1, DECODER_END_MAX),
                       -1;
            }
            d->end_tokens[d->n_end_tokens++] = (int)id;
        }
        snprintf(d->end_from, sizeof d->end_from, "%s's eos_token_id", files[f]);
        json_decref(root);
        return 0;
    }
    return 0;
}

int
model_token_find(const struct model *m, const char *text)
{
    const size_t len = strlen(text);

    /* As the vocabulary spells it ("<|im_end|>", "Ġthe") first, then by its bytes (" the"). */
    for (int id = 0; id < m->bpe.vocab_size; id++)
        if (m->bpe.token[id] != NULL && strcmp(m->bpe.token[id], text) == 0)
            return id;
    for (int id = 0; id < m->bpe.vocab_size; id++) {
        int n = 0;
        const char *raw = bpe_token_raw(&m->bpe, id, &n);
        if (raw != NULL && (size_t)n == len && memcmp(raw, text, len) == 0)
            return id;
    }
    return -1;
}

/* tokenizer_config.json's bos_token (a string, or an added token's {"content": ...}) into m. */
static void
config_bos(struct model *m, json_t *config)
{
    json_t *bos = json_object_get(config, "bos_token");
    const char *s = json_is_string(bos) ? json_string_value(bos)
                                         : json_string_value(json_object_get(bos, "content"));

    if (s != NULL)
        snprintf(m->chat_bos, sizeof m->chat_bos, "%s", s);
}

/*
 * m's chat template, if its files have one: Ollama's template layer
 * (ollama, a blob's path, or ""), a GGUF's tokenizer.chat_template, a
 * folder's chat_template.jinja, or tokenizer_config.json's chat_template
 * (a string, or a list of named ones: "default" or the first).  And the
 * bos_token text it puts first.  None is no error (--chat says so); 0, or
 * -1 with err set when a file is damaged.
 */
static int
read_chat_template(struct model *m, const char *ollama, struct attn_error *err)
{
    char path[MODEL_PATH_MAX + 64];
    size_t len = 0;
    const char *weights = m->weights[0] != '\0' ? m->weights : NULL;

    if (m->dec.bos_token >= 0 && m->dec.bos_token < m->bpe.vocab_size &&
        m->bpe.token[m->dec.bos_token] != NULL)
        snprintf(m->chat_bos, sizeof m->chat_bos, "%s", m->bpe.token[m->dec.bos_token]);
    if (ollama[0] != '\0') {
        if (fileio_read_all(ollama, JSONFILE_CONFIG_MAX, &m->chat_template, &len, err) != ATTN_OK)
            return -1;
        snprintf(m->chat_from, sizeof m->chat_from, "Ollama's template layer");
        return 0;
    }
    if (weights != NULL && gguf_file_is(weights)) {
        struct gguf g;
        const char *s;
        if (gguf_open(&g, weights, err) != ATTN_OK)
            return -1;
        s = gguf_string(&g, "tokenizer.chat_template");
        m->chat_template = s != NULL ? strdup(s) : NULL;
        gguf_close(&g);
        if (s != NULL && m->chat_template == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
        snprintf(m->chat_from, sizeof m->chat_from, "its GGUF's tokenizer.chat_template");
        return 0;
    }
    snprintf(path, sizeof path, "%s/chat_template.jinja", m->dir);
    if (access(path, F_OK) == 0) {
        if (fileio_read_all(path, JSONFILE_CONFIG_MAX, &m->chat_template, &len, err) != ATTN_OK)
            return -1;
        snprintf(m->chat_from, sizeof m->chat_from, "chat_template.jinja");
    }
    snprintf(path, sizeof path, "%s/tokenizer_config.json", m->dir);
    if (access(path, F_OK) == 0) {
        json_t *config = jsonfile_load(path, JSONFILE_VOCAB_MAX, err), *ct;
        const char *s = NULL;
        if (config == NULL)
            return -1;
        config_bos(m, config);
        ct = json_object_get(config, "chat_template");
        if (json_is_string(ct))
            s = json_string_value(ct);
        for (size_t i = 0; json_is_array(ct) && i < json_array_size(ct); i++) {
            json_t *one = json_array_get(ct, i);
            const char *name = json_string_value(json_object_get(one, "name"));
            if (s == NULL || (name != NULL && strcmp(name, "default") == 0))
                s = json_string_value(json_object_get(one, "template"));
        }
        if (s != NULL && m->chat_template == NULL) {
            if ((m->chat_template = strdup(s)) == NULL) {
                json_decref(config);
                return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
            }
            snprintf(m->chat_from, sizeof m->chat_from, "tokenizer_config.json's chat_template");
        }
        json_decref(config);
    }
    return 0;
}

char *
model_chat(const struct model *m, const char *text, const char *date, const char **kind,
           struct attn_error *err)
{
    struct chat_template t;
    char what[MODEL_PATH_MAX + 200];
    char *out;

    if (m->chat_template == NULL)
        return attn_fail(err, ATTN_EVALUE,
                         "--chat: %s has no chat template (no chat_template.jinja, no "
                         "chat_template in tokenizer_config.json, none in a GGUF): it is not an "
                         "instruction model, or its template was left behind; give the text "
                         "with -s",
                         m->name),
               NULL;
    snprintf(what, sizeof what, "--chat: %s's %s", m->name, m->chat_from);
    if (chat_detect(m->chat_template, what, &t, err) != 0)
        return NULL;
    /* A tokenizer that puts the BOS first itself (Gemma's) is not given it twice. */
    if (t.bos && m->bpe.pipeline != NULL && tokjson_first_id(m->bpe.pipeline) >= 0)
        t.bos = false;
    out = chat_render(&t, m->chat_bos, date, text);
    if (out == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory"), NULL;
    *kind = t.name;
    return out;
}

/*
 * An Ollama model's params layer (m->params), the part the model itself
 * takes: its stop strings that are one token each end the writing beside
 * the file's own end tokens (as Ollama stops at both), num_ctx shortens the
 * context; said in m->note with the sampling settings the front end takes
 * as the writing's defaults (the command line wins).
 */
static void
take_params(struct model *m)
{
    struct model_params *p = &m->params;
    struct decoder_model *d = &m->dec;
    size_t at = strlen(m->note);
    char num[32];
    bool stops = false;

    if (p->from[0] == '\0')
        return;
    attn_appendf(m->note, sizeof m->note, &at, "%sOllama's params for %.60s:", at > 0 ? "; " : "",
                 m->name);
    if (p->has_temperature) {
        attn_shortest(num, sizeof num, p->temperature);
        attn_appendf(m->note, sizeof m->note, &at, " temperature %s", num);
    }
    if (p->has_top_k)
        attn_appendf(m->note, sizeof m->note, &at, " top_k %d", p->top_k);
    if (p->has_top_p) {
        attn_shortest(num, sizeof num, p->top_p);
        attn_appendf(m->note, sizeof m->note, &at, " top_p %s", num);
    }
    for (int i = 0; i < p->n_stop; i++) {
        const int id = model_token_find(m, p->stop[i]);
        char shown[160];
        attn_escape_text(shown, sizeof shown, p->stop[i]);
        attn_appendf(m->note, sizeof m->note, &at, "%s%s%s", i == 0 ? " stop " : ", ", shown,
                     id < 0 ? " (not one token: not taken)" : "");
        if (id < 0 || id >= d->cfg.vocab_size || d->n_end_tokens == DECODER_END_MAX)
            continue;
        for (int k = 0; k < d->n_end_tokens; k++)
            if (d->end_tokens[k] == id)
                goto next;
        d->end_tokens[d->n_end_tokens++] = id;
        stops = true;
    next:;
    }
    if (stops) {
        size_t e = strlen(d->end_from);
        attn_appendf(d->end_from, sizeof d->end_from, &e, "%sthe stop of Ollama's params",
                     e > 0 ? " and " : "");
    }
    if (p->num_ctx > 0) {
        attn_appendf(m->note, sizeof m->note, &at, " num_ctx %d", p->num_ctx);
        if (p->num_ctx < d->cfg.n_positions) {
            d->cfg.n_positions = p->num_ctx;
            snprintf(d->context_from, sizeof d->context_from, "num_ctx in Ollama's params");
        }
    }
    attn_appendf(m->note, sizeof m->note, &at, " (the command line wins)");
}

/*
 * --verify: weights named by their SHA-256 (an Ollama blob, sha256-HEX)
 * hashed and compared with the name; a file not so named is refused (there
 * is nothing to check it against).
 */
static enum attn_status
verify_blob(const struct model *m, struct attn_error *err)
{
    const char *base = strrchr(m->weights, '/');
    char hex[65];
    enum attn_status rc;

    base = base != NULL ? base + 1 : m->weights;
    if (strncmp(base, "sha256-", 7) != 0 || strlen(base) != 7 + 64)
        return attn_fail(err, ATTN_EVALUE,
                         "--verify: %s is not named by its SHA-256 (an Ollama blob is: "
                         "sha256-HEX), so there is nothing to check it against",
                         m->weights[0] != '\0' ? m->weights : m->dir);
    if ((rc = digest_sha256_file(m->weights, SIZE_MAX, hex, err)) != ATTN_OK)
        return rc;
    if (strcmp(hex, base + 7) != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: its SHA-256 is %s, not the one it is named by: the file is damaged "
                         "(pull it again)",
                         m->weights, hex);
    return ATTN_OK;
}

enum attn_status
model_open(struct model *m, const char *what, const struct model_options *o,
           struct attn_error *err)
{
    char tokenizer_from[MODEL_PATH_MAX + 64];
    char place_template[MODEL_PATH_MAX + 100];
    const struct architecture *arch;
    enum attn_status rc;

    memset(m, 0, sizeof *m);
    m->eot = -1;
    {
        struct model_place place;
        rc = model_locate(what, &place, err);
        if (rc != ATTN_OK)
            return rc;
        memcpy(m->dir, place.dir, sizeof m->dir);
        memcpy(m->weights, place.weights, sizeof m->weights);
        memcpy(m->name, place.name, sizeof m->name);
        memcpy(m->note, place.note, sizeof m->note);
        m->params = place.params;
        snprintf(place_template, sizeof place_template, "%s", place.template_path);
    }
    /*
     * The tokenizer first: its JSON tree (a hundred megabytes for GPT-2's
     * 50,257 tokens) is freed before the weights are read, so the two never
     * add up in the peak.
     */
    if (o != NULL && o->verify) {
        size_t at = strlen(m->note);
        const char *base = strrchr(m->weights, '/');
        if ((rc = verify_blob(m, err)) != ATTN_OK)
            return rc;
        /* Said, so that a check that passed is told from one that never ran. */
        attn_appendf(m->note, sizeof m->note, &at,
                     "%s--verify: %.80s's SHA-256 is the one it is named by: the weights are "
                     "whole", at > 0 ? "; " : "", base != NULL ? base + 1 : m->weights);
    }
    /* The architecture first: only GPT-2's may borrow GPT-2's tokenizer. */
    if (architecture_find(m->dir, m->weights[0] != '\0' ? m->weights : NULL, &arch, err) != 0)
        return err->status;
    rc = open_tokenizer(m, arch == NULL || !arch->own_tokenizer, tokenizer_from,
                        sizeof tokenizer_from, err);
    if (rc == ATTN_OK) {
        const struct arch_options ao = { m->weights[0] != '\0' ? m->weights : NULL,
                                         o != NULL ? o->heads : 0, false };
#ifdef __GLIBC__
        malloc_trim(0);
#endif
        rc = architecture_read(&m->dec, arch, m->dir, &ao, err);
    }
    if (rc != ATTN_OK) {
        bpe_destroy(&m->bpe);
        return rc;
    }
    /*
     * A model's own tokenizer may list more tokens than its embedding has
     * rows (Gemma 3's image token): Hugging Face loads the pair, and only a
     * text that uses one is refused.  A borrowed one is attnscope's guess,
     * wrong when it is wider.
     */
    if (tokenizer_from[0] != '\0' && m->bpe.vocab_size > m->dec.cfg.vocab_size) {
        rc = attn_fail(err, ATTN_EPARSE,
                       "%s: %d tokens, but the model's vocabulary (%s) has %d: the tokenizer is "
                       "not this model's (put the model's own beside its weights)",
                       m->tokenizer, m->bpe.vocab_size, m->dec.described_by,
                       m->dec.cfg.vocab_size);
        model_close(m);
        return rc;
    }
    if (name_classes(m, o != NULL ? o->classes : NULL, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    describe_model(m, tokenizer_from);
    /* What --bos puts first: the config's bos_token_id (a Llama's), else <|endoftext|>. */
    if (m->dec.bos_token >= 0 && m->dec.bos_token < m->bpe.vocab_size &&
        m->dec.bos_token < m->dec.cfg.vocab_size)
        m->eot = m->dec.bos_token;
    for (int id = 0; id < m->bpe.vocab_size && id < m->dec.cfg.vocab_size && m->eot < 0; id++)
        if (strcmp(m->bpe.token[id], "<|endoftext|>") == 0)
            m->eot = id;
    if (read_hints(m, err) != 0 || read_end_tokens(m, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    take_params(m);
    if (read_chat_template(m, place_template, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    return ATTN_OK;
}

/*
 * The folder's attnscope.json, when there is one: {"example": TEXT, "bos":
 * true|false, "knows": TEXT}, each optional.  0, or -1 (err names the file
 * and the key) when it is not that.
 */
static int
read_hints(struct model *m, struct attn_error *err)
{
    char path[MODEL_PATH_MAX + 32];
    json_t *root, *v;
    static const struct {
        const char *key;
        size_t offset, size;
    } texts[] = { { "example", offsetof(struct model, example), sizeof m->example },
                  { "knows", offsetof(struct model, knows), sizeof m->knows } };
    const char *key;

    if (!is_file(m->dir, "attnscope.json") ||
        !join(path, sizeof path, m->dir, "/", "attnscope.json"))
        return 0;
    /* (Through the capped reader: an 80 MB file took 1.6 GB of jansson's memory, issue 35.) */
    root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    if (root == NULL)
        return -1;
    if (!json_is_object(root)) {
        json_decref(root);
        attn_fail(err, ATTN_EPARSE, "%s: not an object of hints (example, bos, knows)", path);
        return -1;
    }
    json_object_foreach(root, key, v) {
        bool known = strcmp(key, "bos") == 0;
        for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
            char *to = (char *)m + texts[t].offset;
            if (strcmp(key, texts[t].key) != 0)
                continue;
            known = true;
            if (!json_is_string(v) || strlen(json_string_value(v)) >= texts[t].size) {
                json_decref(root);
                attn_fail(err, ATTN_EPARSE, "%s: \"%s\" must be text of at most %zu bytes", path,
                          texts[t].key, texts[t].size - 1);
                return -1;
            }
            {
                /* (shown on screen: no control character, but an example's lines and tabs) */
                const unsigned char *text = (const unsigned char *)json_string_value(v);
                const size_t len = strlen(json_string_value(v));
                const size_t safe = utf8_text_span(text, len, t == 0 ? "\n\t" : "");
                if (safe < len) {
                    attn_fail(err, ATTN_EPARSE,
                              "%s: \"%s\" holds a control character at byte %zu (0x%02x)", path,
                              texts[t].key, safe, text[safe]);
                    json_decref(root);
                    return -1;
                }
            }
            snprintf(to, texts[t].size, "%s", json_string_value(v));
        }
        if (!known) {
            attn_fail(err, ATTN_EPARSE, "%s: unknown key \"%s\" (example, bos and knows are read)",
                      path, key);
            json_decref(root);
            return -1;
        }
    }
    v = json_object_get(root, "bos");
    if (v != NULL && !json_is_boolean(v)) {
        json_decref(root);
        attn_fail(err, ATTN_EPARSE, "%s: \"bos\" must be true or false", path);
        return -1;
    }
    m->example_bos = v != NULL && json_is_true(v);
    json_decref(root);
    return 0;
}

void
model_close(struct model *m)
{
    free(m->chat_template);
    decoder_destroy(&m->dec);
    bpe_destroy(&m->bpe);
    memset(m, 0, sizeof *m);
    m->eot = -1;
}

/*
 * n bytes as a label into buf: a space as a middle dot (when dots), line
 * ends and tabs as \\n, \\r, \\t, and every other control character (C0,
 * DEL, C1, the bidirectional ones) or byte that is not UTF-8 as \\xNN: a
 * model's file never drives the terminal.
 */
static void
display_bytes(const char *bytes, int n, bool dots, char *buf, size_t size)
{
    const unsigned char *s = (const unsigned char *)bytes;
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < n;) {
        const unsigned char c = s[i];
        char piece[16];
        int len = utf8_length(s + i, (size_t)(n - i));
        const int control = utf8_control_length(s + i, (size_t)(n - i));
        if (c == ' ' && dots)
            snprintf(piece, sizeof piece, "\xc2\xb7");
        else if (c == '\n' || c == '\t' || c == '\r')
            snprintf(piece, sizeof piece, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        else if (len == 0 || control > 0) {
            /* (each byte of the control character: a C1's two, a bidi mark's three) */
            len = len == 0 ? 1 : control;
            piece[0] = '\0';
            for (int k = 0; k < len; k++)
                snprintf(piece + strlen(piece), sizeof piece - strlen(piece), "\\x%02x", s[i + k]);
        } else
            snprintf(piece, sizeof piece, "%.*s", len, bytes + i);
        if (used + strlen(piece) + 1 > size)
            break;
        memcpy(buf + used, piece, strlen(piece) + 1);
        used += strlen(piece);
        i += len;
    }
}

char *
model_token_display(const struct model *m, int id, char *buf, size_t size)
{
    int n;
    const char *bytes = bpe_token_raw(&m->bpe, id, &n);

    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (bytes == NULL) {
        snprintf(buf, size, "<%d>", id);
        return buf;
    }
    if (id == m->eot)
        display_bytes(m->bpe.token[id], (int)strlen(m->bpe.token[id]), false, buf, size);
    else
        display_bytes(bytes, n, true, buf, size);
    return buf;
}

bool
model_is_classifier(const struct model *m)
{
    return m->dec.cfg.n_classes > 0;
}

char *
model_output_display(const struct model *m, int id, char *buf, size_t size)
{
    if (!model_is_classifier(m))
        return model_token_display(m, id, buf, size);
    if (id >= 0 && id < MODEL_CLASSES_MAX && id < m->dec.cfg.n_classes)
        snprintf(buf, size, "%s", m->class_names[id]);
    else
        snprintf(buf, size, "class %d", id);
    return buf;
}
