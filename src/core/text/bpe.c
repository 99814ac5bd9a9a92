/* bpe.c: GPT-2's byte-level BPE tokenizer (see bpe.h). */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <limits.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/text/bpe.h"
#include "attnscope/text/tokjson.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/base/progress.h"
#include "attnscope/base/utf8.h"

/* The largest vocabulary and merges files attnscope reads. */
#define BPE_FILE_MAX ((size_t)256 << 20)

/* ------------------------------------------------- string -> int, hashed */

struct bpe_table {
    size_t cap; /* a power of two */
    size_t count;
    char **keys;
    int *values;
};

static uint64_t
hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static struct bpe_table *
table_create(size_t expected)
{
    struct bpe_table *t = calloc(1, sizeof *t);

    if (t == NULL)
        return NULL;
    t->cap = 16;
    while (t->cap < 2 * expected + 16)
        t->cap *= 2;
    t->keys = calloc(t->cap, sizeof *t->keys);
    t->values = calloc(t->cap, sizeof *t->values);
    if (t->keys == NULL || t->values == NULL) {
        free(t->keys);
        free(t->values);
        free(t);
        return NULL;
    }
    return t;
}

static void
table_destroy(struct bpe_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->values);
    free(t);
}

/* The slot of key (n bytes): where it is, or the empty one where it would go. */
static size_t
table_slot(const struct bpe_table *t, const char *key, size_t n)
{
    size_t i = (size_t)hash(key, n) & (t->cap - 1);

    while (t->keys[i] != NULL && (strlen(t->keys[i]) != n || memcmp(t->keys[i], key, n) != 0))
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int
table_get(const struct bpe_table *t, const char *key, size_t n)
{
    size_t i = table_slot(t, key, n);

    return t->keys[i] != NULL ? t->values[i] : -1;
}

/*
 * key -> value, the value replaced when key was there already (1 then); -1
 * when out of memory.  (Python's dict and Rust's HashMap, which the
 * reference tokenizers build their tables with, keep the last value given.)
 */
static int
table_put(struct bpe_table *t, const char *key, size_t n, int value)
{
    size_t i;

    if (2 * (t->count + 1) > t->cap) {
        struct bpe_table bigger = { t->cap * 2, 0, calloc(t->cap * 2, sizeof(char *)),
                                    calloc(t->cap * 2, sizeof(int)) };
        if (bigger.keys == NULL || bigger.values == NULL) {
            free(bigger.keys);
            free(bigger.values);
            return -1;
        }
        for (size_t k = 0; k < t->cap; k++)
            if (t->keys[k] != NULL) {
                size_t j = table_slot(&bigger, t->keys[k], strlen(t->keys[k]));
                bigger.keys[j] = t->keys[k];
                bigger.values[j] = t->values[k];
            }
        free(t->keys);
        free(t->values);
        t->keys = bigger.keys;
        t->values = bigger.values;
        t->cap = bigger.cap;
    }
    i = table_slot(t, key, n);
    if (t->keys[i] != NULL) {
        t->values[i] = value;
        return 1;
    }
    t->keys[i] = strndup(key, n);
    if (t->keys[i] == NULL)
        return -1;
    t->values[i] = value;
    t->count++;
    return 0;
}

/* ------------------------------------------------------------- loading */

/* GPT-2's table: the printable bytes stand for themselves, the others for U+0100 onwards. */
static uint32_t
byte_to_char(int b)
{
    int n = 0;

    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))
        return (uint32_t)b;
    for (int k = 0; k < b; k++)
        if (!((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || (k >= 0xAE && k <= 0xFF)))
            n++;
    return 256u + (uint32_t)n;
}

/* A vocabulary's JSON file (capped, never a FIFO), or an error naming it. */
static json_t *
load_json(const char *path, struct attn_error *err)
{
    return jsonfile_load(path, JSONFILE_VOCAB_MAX, err);
}

/* The vocabulary from root, a token -> id object (where: its place, for messages). */
static enum attn_status
vocab_from_object(struct bpe *b, json_t *root, const char *where, struct attn_error *err)
{
    const char *key;
    json_t *value;
    const char *path = where;

    if (!json_is_object(root) || json_object_size(root) == 0 ||
        json_object_size(root) > (1u << 24))
        return attn_fail(err, ATTN_EPARSE, "%s: not an object of tokens and their ids", path);
    b->vocab_size = (int)json_object_size(root);
    b->token = calloc((size_t)b->vocab_size, sizeof *b->token);
    b->ids = table_create((size_t)b->vocab_size);
    if (b->token == NULL || b->ids == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    json_object_foreach(root, key, value)
    {
        json_int_t id = json_is_integer(value) ? json_integer_value(value) : -1;
        if (id < 0 || id >= b->vocab_size)
            return attn_fail(err, ATTN_EPARSE, "%s: token '%s' has id %s, not one from 0 to %d",
                             path, key,
                             json_is_integer(value) ? "out of range" : "that is not a number",
                             b->vocab_size - 1);
        if (b->token[id] != NULL)
            return attn_fail(err, ATTN_EPARSE, "%s: tokens '%s' and '%s' have the same id %lld",
                             path, b->token[id], key, (long long)id);
        b->token[id] = strdup(key);
        if (b->token[id] == NULL || table_put(b->ids, key, strlen(key), (int)id) < 0)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    }
    /* Every byte must have its token, or some text could not be encoded. */
    for (int c = 0; b->byte_level && c < 256; c++)
        if (table_get(b->ids, b->byte_char[c], strlen(b->byte_char[c])) < 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: no token for the byte 0x%02x ('%s'): not a byte-level BPE "
                             "vocabulary",
                             path, c, b->byte_char[c]);
    return ATTN_OK;
}

static enum attn_status
load_vocab(struct bpe *b, const char *path, struct attn_error *err)
{
    json_t *root = load_json(path, err);
    enum attn_status rc;

    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    rc = vocab_from_object(b, root, path, err);
    json_decref(root);
    return rc;
}

/*
 * Adds the merge of tokens a and c (na and nc bytes), the next rank; where
 * names it in messages ("merges.txt:12").
 */
static enum attn_status
add_merge(struct bpe *b, const char *a, size_t na, const char *c, size_t nc, const char *where,
          struct attn_error *err)
{
    char small[512];
    char *joined = small;
    enum attn_status rc = ATTN_OK;

    if (na == 0 || nc == 0 || memchr(a, ' ', na) != NULL || memchr(c, ' ', nc) != NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' is not a merge (two tokens and a space)",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    /* Tokens of any length the file holds: a long one takes memory of its own. */
    if (na + 1 + nc >= sizeof small && (joined = malloc(na + 1 + nc)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    memcpy(joined, a, na);
    memcpy(joined + na, c, nc);
    /* A merge makes a token of the vocabulary, or encoding would find none. */
    if (table_get(b->ids, joined, na + nc) < 0) {
        rc = attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' makes a token the vocabulary lacks",
                       where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    } else {
        /* The ranks' keys are "a c", as merges.txt spells them; a merge listed twice has the
           later rank (as GPT-2's encoder's dict and Hugging Face's HashMap keep it). */
        joined[na] = ' ';
        memcpy(joined + na + 1, c, nc);
        if (table_put(b->ranks, joined, na + 1 + nc, b->merges) < 0)
            rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
        else
            b->merges++;
    }
    if (joined != small)
        free(joined);
    return rc;
}

static enum attn_status
load_merges(struct bpe *b, const char *path, struct attn_error *err)
{
    char *text;
    size_t len;
    char *line;
    int number = 0;
    char where[PATH_MAX + 32];
    enum attn_status rc = fileio_read_regular(path, BPE_FILE_MAX, &text, &len, err);

    if (rc != ATTN_OK)
        return rc;
    b->ranks = table_create(len / 8);
    if (b->ranks == NULL) {
        free(text);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    }
    line = text;
    while (line < text + len) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = end != NULL ? (size_t)(end - line) : (size_t)(text + len - line);
        char *space;
        number++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (n == 0 || (number == 1 && n >= 8 && strncmp(line, "#version", 8) == 0)) {
            line += n + (end != NULL) + (n > 0 && line[n] == '\r');
            continue;
        }
        space = memchr(line, ' ', n);
        snprintf(where, sizeof where, "%s:%d", path, number);
        if (space == NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: '%.*s' is not a merge (two tokens and a space)",
                      where, (int)(n > 40 ? 40 : n), line);
            free(text); /* (after the message, which quotes it) */
            return ATTN_EPARSE;
        }
        rc = add_merge(b, line, (size_t)(space - line), space + 1, (size_t)(line + n - space - 1),
                       where, err);
        if (rc != ATTN_OK) {
            free(text); /* (after the message, which quotes it) */
            return rc;
        }
        line += n + (end != NULL) + (line[n] == '\r');
    }
    free(text);
    if (b->merges == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no merges: every word would be spelled byte by byte",
                         path);
    return ATTN_OK;
}

static int spell_bytes(const struct bpe *b, const char *spelling, char *buf, size_t size);

/*
 * The bytes a token of a model that is not byte-level stands for: "▁"
 * (U+2581, SentencePiece's space) a space, "<0xNN>" the byte NN, the rest
 * itself; into buf (room for the spelling); their count.
 */
static int
spell_plain(const char *spelling, char *buf)
{
    size_t n = strlen(spelling), out = 0;
    unsigned int byte;

    if (n == 6 && sscanf(spelling, "<0x%2X>", &byte) == 1 && spelling[5] == '>') {
        buf[0] = (char)byte;
        buf[1] = '\0';
        return 1;
    }
    for (size_t i = 0; i < n;) {
        if (strncmp(spelling + i, "\xe2\x96\x81", 3) == 0) {
            buf[out++] = ' ';
            i += 3;
        } else
            buf[out++] = spelling[i++];
    }
    buf[out] = '\0';
    return (int)out;
}

/* An empty tokenizer with GPT-2's byte-to-character table. */
static void
begin(struct bpe *b)
{
    memset(b, 0, sizeof *b);
    b->byte_level = true;
    b->unk = -1;
    for (int c = 0; c < 256; c++)
        b->byte_token[c] = -1;
    for (int c = 0; c < 324; c++)
        b->char_byte[c] = -1;
    for (int c = 0; c < 256; c++) {
        b->byte_char[c][utf8_encode(byte_to_char(c), b->byte_char[c])] = '\0';
        b->char_byte[byte_to_char(c)] = (short)c;
    }
}

/* Compiles the pattern once the vocabulary and merges are in (b destroyed on failure). */
static enum attn_status
finish(struct bpe *b, enum attn_status rc, struct attn_error *err)
{
    int code;
    PCRE2_SIZE offset;

    if (rc != ATTN_OK) {
        bpe_destroy(b);
        return rc;
    }
    /* Every token's bytes, once: no token is too long to be shown or written. */
    b->raw = calloc((size_t)b->vocab_size, sizeof *b->raw);
    b->raw_len = calloc((size_t)b->vocab_size, sizeof *b->raw_len);
    if (b->raw == NULL || b->raw_len == NULL) {
        bpe_destroy(b);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the tokens' bytes");
    }
    for (int id = 0; id < b->vocab_size; id++) {
        size_t room = strlen(b->token[id]) + 1; /* (a token has no more bytes than its spelling) */
        b->raw[id] = malloc(room);
        if (b->raw[id] == NULL) {
            bpe_destroy(b);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the tokens' bytes");
        }
        if (b->added != NULL && b->added[id]) { /* (an added token's bytes are its text) */
            b->raw_len[id] = (int)room - 1;
            memcpy(b->raw[id], b->token[id], room);
        } else if (b->byte_level)
            b->raw_len[id] = spell_bytes(b, b->token[id], b->raw[id], room);
        else
            b->raw_len[id] = spell_plain(b->token[id], b->raw[id]);
        if ((size_t)(b->raw_len[id] >= 0 ? b->raw_len[id] : 0) > b->longest)
            b->longest = (size_t)b->raw_len[id];
    }
    if (b->longest == 0)
        b->longest = 1;
    b->re = pcre2_compile((PCRE2_SPTR)BPE_GPT2_PATTERN, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                          &code, &offset, NULL);
    if (b->re == NULL) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(code, msg, sizeof msg);
        bpe_destroy(b);
        return attn_fail(err, ATTN_EPARSE, "GPT-2's pattern does not compile with this PCRE2: %s",
                         (const char *)msg);
    }
    return ATTN_OK;
}

enum attn_status
bpe_load(struct bpe *b, const char *vocab_path, const char *merges_path, struct attn_error *err)
{
    enum attn_status rc;

    begin(b);
    rc = load_vocab(b, vocab_path, err);
    if (rc == ATTN_OK)
        rc = load_merges(b, merges_path, err);
    return finish(b, rc, err);
}

/* tokenizer.json's merges: "a b" strings (older files) or ["a", "b"] pairs (newer ones). */
static enum attn_status
merges_from_array(struct bpe *b, json_t *merges, const char *path, struct attn_error *err)
{
    size_t i;
    json_t *m;
    char where[PATH_MAX + 48];

    if (!json_is_array(merges))
        return attn_fail(err, ATTN_EPARSE, "%s: model.merges is not a list of merges", path);
    b->ranks = table_create(json_array_size(merges) + 1);
    if (b->ranks == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    json_array_foreach(merges, i, m)
    {
        const char *a;
        const char *c;
        size_t na;
        size_t nc;
        enum attn_status rc;
        snprintf(where, sizeof where, "%s: model.merges[%zu]", path, i);
        if (json_is_string(m)) {
            const char *space;
            a = json_string_value(m);
            space = strchr(a, ' ');
            if (space == NULL)
                return attn_fail(err, ATTN_EPARSE, "%s: '%.40s' is not a merge (two tokens and a "
                                 "space)", where, a);
            na = (size_t)(space - a);
            c = space + 1;
            nc = strlen(c);
        } else if (json_is_array(m) && json_array_size(m) == 2 &&
                   json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
            a = json_string_value(json_array_get(m, 0));
            c = json_string_value(json_array_get(m, 1));
            na = strlen(a);
            nc = strlen(c);
        } else {
            return attn_fail(err, ATTN_EPARSE, "%s: neither \"a b\" nor [\"a\", \"b\"]", where);
        }
        rc = add_merge(b, a, na, c, nc, where, err);
        if (rc != ATTN_OK)
            return rc;
    }
    if (b->merges == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no merges: every word would be spelled byte by byte",
                         path);
    return ATTN_OK;
}

/* Whether a pre-tokenizer (or a Sequence of them) of a tokenizer.json is ByteLevel. */
static bool
has_byte_level(json_t *pre)
{
    json_t *type = json_object_get(pre, "type");
    json_t *list = json_object_get(pre, "pretokenizers");

    if (json_is_string(type) && strcmp(json_string_value(type), "ByteLevel") == 0)
        return true;
    for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++)
        if (has_byte_level(json_array_get(list, i)))
            return true;
    return false;
}

/* The model's options: how unknown characters are spelled, whether merges are skipped. */
static enum attn_status
model_options(struct bpe *b, json_t *model, const char *path, struct attn_error *err)
{
    static const char *const affixes[] = { "continuing_subword_prefix", "end_of_word_suffix" };
    json_t *unk = json_object_get(model, "unk_token");
    json_t *dropout = json_object_get(model, "dropout");

    b->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    b->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
    b->fuse_unk = json_is_true(json_object_get(model, "fuse_unk"));
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(model, affixes[i]);
        if (json_is_string(v) && json_string_value(v)[0] != '\0')
            return attn_fail(err, ATTN_EPARSE, "%s: model.%s \"%s\" is not supported yet", path,
                             affixes[i], json_string_value(v));
    }
    if (dropout != NULL && !json_is_null(dropout) &&
        !(json_is_number(dropout) && json_number_value(dropout) == 0.0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: model.dropout: BPE dropout draws merges at random; attnscope encodes "
                         "as inference does, without it (set it to null)",
                         path);
    if (json_is_string(unk)) {
        b->unk = table_get(b->ids, json_string_value(unk), strlen(json_string_value(unk)));
        if (b->unk < 0)
            return attn_fail(err, ATTN_EPARSE, "%s: model.unk_token '%s' is not in the vocabulary",
                             path, json_string_value(unk));
    }
    for (int c = 0; c < 256 && b->byte_fallback; c++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", c);
        b->byte_token[c] = table_get(b->ids, name, 6);
        if (b->byte_token[c] < 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: model.byte_fallback is true but the vocabulary has no %s", path,
                             name);
    }
    return ATTN_OK;
}

enum attn_status
bpe_load_tokenizer_json(struct bpe *b, const char *path, struct attn_error *err)
{
    json_t *root;
    json_t *model;
    json_t *type;
    enum attn_status rc;

    begin(b);
    root = load_json(path, err);
    if (root == NULL)
        return finish(b, err != NULL ? err->status : ATTN_EPARSE, err);
    model = json_object_get(root, "model");
    type = json_object_get(model, "type");
    if (!json_is_object(model))
        rc = attn_fail(err, ATTN_EPARSE, "%s: no \"model\" object: not a tokenizers file", path);
    else if (type != NULL && !(json_is_string(type) && strcmp(json_string_value(type), "BPE") == 0))
        rc = attn_fail(err, ATTN_EPARSE,
                       "%s: model.type %s is not supported yet; supported: BPE", path,
                       json_is_string(type) ? json_string_value(type) : "(not a string)");
    else {
        char where[PATH_MAX + 16];
        /* GPT-2's byte characters, or (no ByteLevel pre-tokenizer) the text's own characters. */
        json_t *pre = json_object_get(root, "pre_tokenizer");
        /* A file of the model alone (no pre_tokenizer key at all) is read as GPT-2's files are. */
        const bool model_only = pre == NULL;
        b->byte_level = model_only || has_byte_level(pre);
        snprintf(where, sizeof where, "%s: model.vocab", path);
        rc = vocab_from_object(b, json_object_get(model, "vocab"), where, err);
        if (rc == ATTN_OK)
            rc = merges_from_array(b, json_object_get(model, "merges"), path, err);
        if (rc == ATTN_OK)
            rc = model_options(b, model, path, err);
        if (rc == ATTN_OK && !model_only)
            rc = tokjson_parse(b, root, path, &b->pipeline, err);
        /* (After the pipeline: what it does not interpret is the first thing to say.) */
        if (rc == ATTN_OK && !b->byte_level && !b->byte_fallback && b->unk < 0)
            rc = attn_fail(err, ATTN_EPARSE,
                           "%s: a BPE model that is not byte-level has neither byte_fallback nor "
                           "an unk_token: some text could not be encoded",
                           path);
    }
    json_decref(root);
    return finish(b, rc, err);
}

bool
bpe_spells_back(const struct bpe *b)
{
    return (b->pipeline == NULL || tokjson_keeps_text(b->pipeline)) &&
           (b->byte_level || b->byte_fallback);
}

enum attn_status
bpe_add_token(struct bpe *b, const char *text, int id, struct attn_error *err)
{
    if (id < 0 || id >= (1 << 24))
        return attn_fail(err, ATTN_EPARSE, "added token '%.40s' has id %d", text, id);
    if (id >= b->vocab_size) {
        /* The vocabulary grows to hold it; the ids between (none in real files) are unused. */
        char **token = realloc(b->token, ((size_t)id + 1) * sizeof *token);
        if (token == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        b->token = token;
        for (int i = b->vocab_size; i <= id; i++) {
            char name[32];
            snprintf(name, sizeof name, "<unused %d>", i);
            b->token[i] = strdup(name);
            if (b->token[i] == NULL)
                return attn_fail(err, ATTN_ENOMEM, "out of memory");
        }
        {
            unsigned char *added = realloc(b->added, (size_t)id + 1);
            if (added == NULL)
                return attn_fail(err, ATTN_ENOMEM, "out of memory");
            memset(added + (b->added != NULL ? b->vocab_size : 0), 0,
                   (size_t)id + 1 - (size_t)(b->added != NULL ? b->vocab_size : 0));
            if (b->added == NULL)
                memset(added, 0, (size_t)id + 1);
            b->added = added;
        }
        b->vocab_size = id + 1;
    }
    if (b->added == NULL) {
        b->added = calloc((size_t)b->vocab_size, 1);
        if (b->added == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    if (strcmp(b->token[id], text) != 0) {
        char *copy = strdup(text);
        if (copy == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        free(b->token[id]);
        b->token[id] = copy;
    }
    b->added[id] = 1;
    if (table_get(b->ids, text, strlen(text)) < 0 && table_put(b->ids, text, strlen(text), id) < 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    return ATTN_OK;
}

void
bpe_destroy(struct bpe *b)
{
    if (b->token != NULL)
        for (int i = 0; i < b->vocab_size; i++)
            free(b->token[i]);
    free(b->token);
    if (b->raw != NULL)
        for (int i = 0; i < b->vocab_size; i++)
            free(b->raw[i]);
    free(b->raw);
    free(b->raw_len);
    table_destroy(b->ids);
    table_destroy(b->ranks);
    if (b->re != NULL)
        pcre2_code_free(b->re);
    tokjson_destroy(b->pipeline);
    free(b->added);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ encoding */

struct symbol {
    size_t at, len; /* in the piece's spelling */
};

/* Appends the ids of one piece (its bytes spelled with the byte table, merged) to out. */
/* Called for each merge applied: the two symbols and the merge's rank. */
typedef void (*merge_step_fn)(void *ctx, const char *a, size_t na, const char *c, size_t nc,
                              int rank);

/* A symbol of a piece being merged: a span of its spelling, in a list. */
struct node {
    size_t at, len;
    int prev, next;    /* -1 at the ends */
    unsigned version;  /* changes when the symbol does (a candidate pair naming it is then stale) */
    bool alive;
};

/* A candidate merge: the pair starting at node left, as both its symbols were when it was found. */
struct candidate {
    int rank;
    int left;
    unsigned left_version, right_version;
};

static bool
before(const struct candidate *x, const struct candidate *y)
{
    /* The lowest rank first; of one rank (one pair), the leftmost, as GPT-2 merges them. */
    return x->rank < y->rank || (x->rank == y->rank && x->left < y->left);
}

static void
heap_push(struct candidate *h, size_t *n, struct candidate c)
{
    size_t i = (*n)++;

    while (i > 0 && before(&c, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = c;
}

static struct candidate
heap_pop(struct candidate *h, size_t *n)
{
    struct candidate top = h[0];
    struct candidate last = h[--*n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

/* The rank of merging node i with the node after it, or -1; pair is room for the two. */
static int
pair_rank(const struct bpe *b, const char *w, const struct node *nd, int i, char *pair)
{
    const int j = nd[i].next;

    if (j < 0)
        return -1;
    memcpy(pair, w + nd[i].at, nd[i].len);
    pair[nd[i].len] = ' ';
    memcpy(pair + nd[i].len + 1, w + nd[j].at, nd[j].len);
    return table_get(b->ranks, pair, nd[i].len + 1 + nd[j].len);
}

/* Adds node i and its successor as a candidate, if they are a merge. */
static void
offer(const struct bpe *b, const char *w, const struct node *nd, int i, char *pair,
      struct candidate *h, size_t *n)
{
    int r;

    if (i < 0 || (r = pair_rank(b, w, nd, i, pair)) < 0)
        return;
    heap_push(h, n, (struct candidate){ r, i, nd[i].version, nd[nd[i].next].version });
}

/*
 * Merges the adjacent pair of lowest rank, everywhere it occurs (leftmost
 * first, never overlapping), until no pair is a merge: GPT-2's algorithm,
 * with the candidate pairs in a heap so that a piece of n symbols takes
 * O(n log n) work instead of a scan of every pair per merge (a word of a
 * million letters took minutes).  w holds the symbols' text, pair room for
 * two of them.  Returns the symbols left, compacted in sym; step (may be
 * NULL) hears of each merge once, when its rank first applies.
 * -1 when out of memory.
 */
static long
merge_symbols(const struct bpe *b, const char *w, struct symbol *sym, size_t count_sym, char *pair,
              merge_step_fn step, void *ctx)
{
    struct node *nd;
    struct candidate *h;
    size_t n = 0;
    size_t out = 0;
    int told = -1;

    if (count_sym < 2)
        return (long)count_sym;
    nd = malloc(count_sym * sizeof *nd);
    /* Every candidate ever pushed: one per adjacent pair, and two per merge. */
    h = malloc(3 * count_sym * sizeof *h);
    if (nd == NULL || h == NULL) {
        free(nd);
        free(h);
        return -1;
    }
    for (size_t i = 0; i < count_sym; i++)
        nd[i] = (struct node){ sym[i].at, sym[i].len, (int)i - 1,
                               i + 1 < count_sym ? (int)i + 1 : -1, 0, true };
    for (size_t i = 0; i + 1 < count_sym; i++)
        offer(b, w, nd, (int)i, pair, h, &n);
    while (n > 0) {
        struct candidate c = heap_pop(h, &n);
        const int i = c.left;
        const int j = nd[i].next;
        if (!nd[i].alive || nd[i].version != c.left_version || j < 0 ||
            nd[j].version != c.right_version)
            continue; /* a symbol of it was merged into another since */
        if (step != NULL && c.rank != told) {
            step(ctx, w + nd[i].at, nd[i].len, w + nd[j].at, nd[j].len, c.rank);
            told = c.rank;
        }
        nd[i].len += nd[j].len;
        nd[i].version++;
        nd[i].next = nd[j].next;
        if (nd[j].next >= 0)
            nd[nd[j].next].prev = i;
        nd[j].alive = false;
        offer(b, w, nd, nd[i].prev, pair, h, &n);
        offer(b, w, nd, i, pair, h, &n);
    }
    for (int i = 0; i >= 0; i = nd[i].next)
        sym[out++] = (struct symbol){ nd[i].at, nd[i].len };
    free(nd);
    free(h);
    return (long)out;
}

enum attn_status
bpe_append_id(int **ids, int *count, size_t *cap, int id, struct attn_error *err)
{
    if ((size_t)*count == *cap) {
        int *more = realloc(*ids, (*cap * 2 + 16) * sizeof *more);
        if (more == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        *ids = more;
        *cap = *cap * 2 + 16;
    }
    (*ids)[(*count)++] = id;
    return ATTN_OK;
}

/*
 * The ids of the n bytes of a piece: spelled with GPT-2's byte characters
 * (byte-level) or as its own UTF-8 characters, merged by rank; a symbol
 * the vocabulary lacks (never, byte-level) is its bytes' <0xNN> tokens
 * (byte fallback) or the unknown token.
 */
enum attn_status
bpe_encode_piece(const struct bpe *b, const char *text, size_t n, int **ids, int *count,
                 size_t *cap, struct attn_error *err)
{
    const unsigned char *piece = (const unsigned char *)text;
    char *w = malloc(2 * n + 1);
    struct symbol *sym = malloc((n + 1) * sizeof *sym);
    char *pair = malloc(4 * n + 2);
    size_t len = 0;
    size_t count_sym = 0;
    bool last_unk = false;
    enum attn_status rc = ATTN_OK;

    if (w == NULL || sym == NULL || pair == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n;) {
        size_t cl;
        if (b->byte_level) {
            cl = strlen(b->byte_char[piece[i]]);
            memcpy(w + len, b->byte_char[piece[i]], cl);
            i++;
        } else {
            int l = utf8_length(piece + i, n - i);
            cl = l > 0 ? (size_t)l : 1;
            memcpy(w + len, piece + i, cl);
            i += cl;
        }
        sym[count_sym].at = len;
        sym[count_sym].len = cl;
        count_sym++;
        len += cl;
    }
    /* ignore_merges: a piece that is a token is that token. */
    if (b->ignore_merges) {
        int id = table_get(b->ids, w, len);
        if (id >= 0) {
            rc = bpe_append_id(ids, count, cap, id, err);
            goto done;
        }
    }
    {
        long left = merge_symbols(b, w, sym, count_sym, pair, NULL, NULL);
        if (left < 0) {
            rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
            goto done;
        }
        count_sym = (size_t)left;
    }
    for (size_t i = 0; i < count_sym && rc == ATTN_OK; i++) {
        int id = table_get(b->ids, w + sym[i].at, sym[i].len);
        if (id >= 0) {
            rc = bpe_append_id(ids, count, cap, id, err);
            last_unk = false;
        } else if (b->byte_fallback) {
            for (size_t k = 0; k < sym[i].len && rc == ATTN_OK; k++)
                rc = bpe_append_id(ids, count, cap, b->byte_token[(unsigned char)w[sym[i].at + k]], err);
        } else if (b->unk >= 0) {
            if (!(b->fuse_unk && last_unk))
                rc = bpe_append_id(ids, count, cap, b->unk, err);
            last_unk = true;
        } else
            rc = attn_fail(err, ATTN_EPARSE, "the vocabulary has no token '%.*s'",
                           (int)sym[i].len, w + sym[i].at);
    }
done:
    free(w);
    free(sym);
    free(pair);
    return rc;
}

enum attn_status
bpe_encode(const struct bpe *b, const char *text, size_t len, int max_tokens, int **ids, int *count,
           struct attn_error *err)
{
    pcre2_match_data *md;
    size_t at = 0;
    size_t cap = 0;
    enum attn_status rc = ATTN_OK;

    *ids = NULL;
    *count = 0;
    for (size_t i = 0; i < len;) {
        int l = utf8_length((const unsigned char *)text + i, len - i);
        if (l == 0)
            return attn_fail(err, ATTN_EPARSE, "byte %zu of the text is not UTF-8", i);
        i += (size_t)l;
    }
    if (b->pipeline != NULL)
        return tokjson_encode(b, b->pipeline, text, len, max_tokens, ids, count, err);
    md = pcre2_match_data_create_from_pattern(b->re, NULL);
    if (md == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    while (at < len && rc == ATTN_OK) {
        int m;
        if (progress_stopped()) {
            rc = attn_fail(err, ATTN_ESTOPPED, "stopped at byte %zu of %zu of the text", at, len);
            break;
        }
        m = pcre2_match(b->re, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, md, NULL);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (m < 0 || ov[0] != at || ov[1] <= at) {
            rc = attn_fail(err, ATTN_EPARSE, "byte %zu of the text matches no piece of GPT-2's pattern",
                           at);
            break;
        }
        /* A piece of more bytes than the tokens left can hold is over the limit unmerged. */
        if (max_tokens > 0 && (ov[1] - at) > b->longest * (size_t)(max_tokens - *count))
            *count = max_tokens + 1;
        else
            rc = bpe_encode_piece(b, text + at, ov[1] - at, ids, count, &cap, err);
        if (rc == ATTN_OK && max_tokens > 0 && *count > max_tokens) {
            rc = attn_fail(err, ATTN_ELIMIT, "the text is more than %d tokens", max_tokens);
            break;
        }
        at = ov[1];
    }
    pcre2_match_data_free(md);
    if (rc != ATTN_OK) {
        free(*ids);
        *ids = NULL;
        *count = 0;
    }
    return rc;
}

int
bpe_token_bytes(const struct bpe *b, int id, char *buf, size_t size)
{
    int n;
    const char *raw = bpe_token_raw(b, id, &n);

    if (raw == NULL || size == 0 || (size_t)n + 1 > size)
        return -1;
    memcpy(buf, raw, (size_t)n);
    buf[n] = '\0';
    return n;
}

const char *
bpe_token_raw(const struct bpe *b, int id, int *len)
{
    *len = 0;
    if (id < 0 || id >= b->vocab_size || b->raw == NULL || b->raw_len[id] < 0)
        return NULL;
    *len = b->raw_len[id];
    return b->raw[id];
}

/* The bytes GPT-2's characters in spelling stand for, into buf; their count, or -1. */
static int
spell_bytes(const struct bpe *b, const char *spelling, char *buf, size_t size)
{
    const char *t;
    size_t n = 0;

    for (t = spelling; *t;) {
        uint32_t cp;
        int l = utf8_decode(t, &cp);
        int byte = cp < 324 ? b->char_byte[cp] : -1;
        if (byte < 0 || n + 1 >= size)
            return -1;
        buf[n++] = (char)byte;
        t += l;
    }
    buf[n] = '\0';
    return (int)n;
}

/* Appends to a story, whole pieces only. */
struct story {
    char *buf;
    size_t size;
    size_t len;
};

static void
story_add(struct story *s, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (s->len >= s->size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(s->buf + s->len, s->size - s->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= s->size - s->len)
        s->buf[s->len] = '\0'; /* (cut: the pieces so far stay) */
    else
        s->len += (size_t)n;
}

static void
story_step(void *ctx, const char *a, size_t na, const char *c, size_t nc, int rank)
{
    story_add(ctx, " %.*s+%.*s (%d)", (int)na, a, (int)nc, c, rank);
}

int
bpe_token_story(const struct bpe *b, int id, char *buf, size_t size)
{
    unsigned char bytes[256];
    int n = bpe_token_bytes(b, id, (char *)bytes, sizeof bytes);
    char w[2 * 256 + 1];
    char pair[4 * 256 + 2];
    struct symbol sym[256];
    size_t len = 0;
    struct story s = { buf, size, 0 };

    if (size == 0)
        return -1;
    buf[0] = '\0';
    if (n <= 0 || n > 255)
        return -1;
    story_add(&s, "bytes");
    for (int i = 0; i < n; i++)
        story_add(&s, " %02x", bytes[i]);
    story_add(&s, "; as characters");
    for (int i = 0; i < n; i++) {
        const size_t cl = strlen(b->byte_char[bytes[i]]);
        story_add(&s, " %s", b->byte_char[bytes[i]]);
        sym[i].at = len;
        sym[i].len = cl;
        memcpy(w + len, b->byte_char[bytes[i]], cl);
        len += cl;
    }
    story_add(&s, n > 1 ? "; merged by rank:" : "; a byte token: no merges");
    if (merge_symbols(b, w, sym, (size_t)n, pair, story_step, &s) < 0)
        return -1;
    story_add(&s, " -> %s (id %d)", b->token[id], id);
    return (int)s.len;
}
