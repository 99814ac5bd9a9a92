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
#include "attnscope/models/model.h"
#include "model_internal.h"
#include "attnscope/files/digest.h"
#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/tensors.h"
#include "attnscope/files/jsonfile.h"


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
    if (!model_path_join(m->tokenizer, sizeof m->tokenizer, dir, "/", best))
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
        bool a = !model_absent_in(dir, pairs[i][0]);
        bool b = !model_absent_in(dir, pairs[i][1]);
        if (!a && !b)
            continue;
        if (a != b)
            return attn_fail(err, ATTN_EIO, "%s/%s: missing (%s is there; they come as a pair)",
                             dir, pairs[i][a ? 1 : 0], pairs[i][a ? 0 : 1]);
        if (!model_path_join(m->tokenizer, sizeof m->tokenizer, dir, "/", pairs[i][0]) ||
            !model_path_join(merges, sizeof merges, dir, "/", pairs[i][1]))
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        return bpe_load(&m->bpe, m->tokenizer, merges, err);
    }
    if (!model_absent_in(dir, "tokenizer.json")) {
        if (!model_path_join(m->tokenizer, sizeof m->tokenizer, dir, "/tokenizer.json", ""))
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

    if (!model_path_join(gpt2, sizeof gpt2, dir, "/gpt2", "") || !model_is_dir(gpt2) ||
        (n = scandir(gpt2, &names, NULL, alphasort)) < 0)
        return false;
    for (int i = 0; i < n; i++) {
        if (!found && names[i]->d_name[0] != '.' &&
            model_path_join(out, size, gpt2, "/", names[i]->d_name) && model_has_file(out, "encoder.json") &&
            model_has_file(out, "vocab.bpe"))
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
        if (!model_path_join(folder, sizeof folder, tmp, "/data-gym-cache", ""))
            return ATTN_EABSENT;
        dir = folder;
    }
    if (dir[0] == '\0' || !model_has_file(dir, encoder_sha1) || !model_has_file(dir, bpe_sha1) ||
        !model_path_join(m->tokenizer, sizeof m->tokenizer, dir, "/", encoder_sha1) ||
        !model_path_join(merges, sizeof merges, dir, "/", bpe_sha1))
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
        if (roots[i][0] != '\0' && model_path_join(dir, size, roots[i], "/gpt2", "") &&
            model_has_file(dir, "encoder.json") && model_has_file(dir, "vocab.bpe"))
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
    if (d->left_alone[0] != '\0')
        attn_appendf(m->about, sizeof m->about, &at, "; not read: %s", d->left_alone);
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

/* A router's column names, "e0" ... (none without experts); -1 with err set. */
static int
label_experts(struct model *m, struct attn_error *err)
{
    const int E = m->dec.cfg.moe.n_experts;

    if (E <= 0)
        return 0;
    if ((m->expert_labels = calloc((size_t)E, sizeof *m->expert_labels)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory naming %d experts", E), -1;
    for (int e = 0; e < E; e++) {
        char label[16];
        snprintf(label, sizeof label, "e%d", e);
        if ((m->expert_labels[e] = strdup(label)) == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory naming %d experts", E), -1;
    }
    return 0;
}

/*
 * The int8 arithmetic (said asks for it) put in every matrix of m that it
 * reads, and said in m's name ("NAME [int8]"), description and note; 0, or
 * -1 when m has none.
 */
static int
use_int8(struct model *m, const char *said, struct attn_error *err)
{
    int of;
    const int put = decoder_use_int8(&m->dec, &of);
    size_t at = strlen(m->about), noted = strlen(m->note);

    if (put == 0)
        return attn_fail(err, ATTN_EVALUE,
                         "%s: %s has no matrix in Q4_0, Q8_0, Q4_K or Q6_K blocks, the ones the "
                         "int8 arithmetic reads: its products are exact already",
                         said, m->name);
    attn_appendf(m->about, sizeof m->about, &at,
                 "; int8 arithmetic (%s, llama.cpp's: not exact) in %d of its %d matrices%s", said,
                 put, of, put < of ? ", the rest exact" : "");
    attn_appendf(m->note, sizeof m->note, &noted,
                 "%s%s: llama.cpp's arithmetic in %d of %d matrices, not the exact one",
                 noted > 0 ? "; " : "", said, put, of);
    /* (named so wherever the model is: the same file exact and in int8 told apart) */
    at = strlen(m->name);
    attn_appendf(m->name, sizeof m->name, &at, " [int8]");
    return 0;
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
    m->first_token = -1;
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
    if (o != NULL && o->int8 != NULL && use_int8(m, o->int8, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    if (label_experts(m, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    /* What --bos puts first: the config's bos_token_id (a Llama's), else <|endoftext|>. */
    if (m->dec.bos_token >= 0 && m->dec.bos_token < m->bpe.vocab_size &&
        m->dec.bos_token < m->dec.cfg.vocab_size)
        m->first_token = m->dec.bos_token;
    for (int id = 0; id < m->bpe.vocab_size && id < m->dec.cfg.vocab_size && m->first_token < 0; id++)
        if (strcmp(m->bpe.token[id], "<|endoftext|>") == 0)
            m->first_token = id;
    if (read_hints(m, err) != 0 || model_read_end_tokens(m, err) != 0) {
        rc = err->status;
        model_close(m);
        return rc;
    }
    model_take_params(m);
    if (model_read_chat_template(m, place_template, err) != 0) {
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

    if (!model_has_file(m->dir, "attnscope.json") ||
        !model_path_join(path, sizeof path, m->dir, "/", "attnscope.json"))
        return 0;
    /* (Through the capped reader: jansson takes many times a file's size in memory.) */
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
    for (int e = 0; m->expert_labels != NULL && e < m->dec.cfg.moe.n_experts; e++)
        free(m->expert_labels[e]);
    free(m->expert_labels);
    free(m->chat_template);
    free(m->chat_text);
    decoder_destroy(&m->dec);
    bpe_destroy(&m->bpe);
    memset(m, 0, sizeof *m);
    m->first_token = -1;
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
    if (id == m->first_token)
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

bool
model_tokenizer_inside(const struct model *m)
{
    return m->tokenizer[0] != '\0' && gguf_file_is(m->tokenizer);
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
