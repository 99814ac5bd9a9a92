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

#include "attnscope/bpe.h"
#include "attnscope/fileio.h"
#include "attnscope/jsonfile.h"
#include "attnscope/utf8.h"

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

/* Adds key -> value; 1 if key was there already, -1 when out of memory. */
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
    if (t->keys[i] != NULL)
        return 1;
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
    for (int c = 0; c < 256; c++)
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
    char joined[512];

    if (na == 0 || nc == 0 || memchr(a, ' ', na) != NULL || memchr(c, ' ', nc) != NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' is not a merge (two tokens and a space)",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    /* A merge makes a token of the vocabulary, or encoding would find none. */
    if (na + 1 + nc >= sizeof joined)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' makes a token the vocabulary lacks",
                         where, 20, a, 20, c);
    memcpy(joined, a, na);
    memcpy(joined + na, c, nc);
    if (table_get(b->ids, joined, na + nc) < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' makes a token the vocabulary lacks",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    /* The ranks' keys are "a c", as merges.txt spells them. */
    joined[na] = ' ';
    memcpy(joined + na + 1, c, nc);
    if (table_put(b->ranks, joined, na + 1 + nc, b->merges) < 0)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    b->merges++;
    return ATTN_OK;
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

/* An empty tokenizer with GPT-2's byte-to-character table. */
static void
begin(struct bpe *b)
{
    memset(b, 0, sizeof *b);
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
        rc = attn_fail(err, ATTN_EPARSE, "%s: model.type is not \"BPE\": not GPT-2's tokenizer",
                       path);
    else {
        char where[PATH_MAX + 16];
        snprintf(where, sizeof where, "%s: model.vocab", path);
        rc = vocab_from_object(b, json_object_get(model, "vocab"), where, err);
        if (rc == ATTN_OK)
            rc = merges_from_array(b, json_object_get(model, "merges"), path, err);
    }
    json_decref(root);
    return finish(b, rc, err);
}

void
bpe_destroy(struct bpe *b)
{
    if (b->token != NULL)
        for (int i = 0; i < b->vocab_size; i++)
            free(b->token[i]);
    free(b->token);
    table_destroy(b->ids);
    table_destroy(b->ranks);
    if (b->re != NULL)
        pcre2_code_free(b->re);
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

/*
 * Merges the adjacent pair of lowest rank, everywhere it occurs, until no
 * pair is a merge; w holds the symbols' text, pair room for two of them.
 * Returns the symbols left; step (may be NULL) hears of every merge.
 */
static size_t
merge_symbols(const struct bpe *b, const char *w, struct symbol *sym, size_t count_sym, char *pair,
              merge_step_fn step, void *ctx)
{
    while (count_sym > 1) {
        int best = -1;
        size_t first = 0;
        size_t second_len = 0;
        size_t out = 0;
        for (size_t i = 0; i + 1 < count_sym; i++) {
            size_t pl = sym[i].len + 1 + sym[i + 1].len;
            int r;
            memcpy(pair, w + sym[i].at, sym[i].len);
            pair[sym[i].len] = ' ';
            memcpy(pair + sym[i].len + 1, w + sym[i + 1].at, sym[i + 1].len);
            r = table_get(b->ranks, pair, pl);
            if (r >= 0 && (best < 0 || r < best)) {
                best = r;
                first = i;
                second_len = sym[i + 1].len;
            }
        }
        if (best < 0)
            break;
        {
            const size_t flen = sym[first].len;
            const char *fs = w + sym[first].at;
            const char *ss = w + sym[first + 1].at;
            if (step != NULL)
                step(ctx, fs, flen, ss, second_len, best);
            for (size_t i = 0; i < count_sym; i++) {
                if (i + 1 < count_sym && sym[i].len == flen && sym[i + 1].len == second_len &&
                    memcmp(w + sym[i].at, fs, flen) == 0 &&
                    memcmp(w + sym[i + 1].at, ss, second_len) == 0) {
                    sym[out].at = sym[i].at;
                    sym[out].len = flen + second_len;
                    out++;
                    i++;
                } else {
                    sym[out++] = sym[i];
                }
            }
        }
        count_sym = out;
    }
    return count_sym;
}

static enum attn_status
encode_piece(const struct bpe *b, const unsigned char *piece, size_t n, int **ids, int *count,
             size_t *cap, struct attn_error *err)
{
    char *w = malloc(2 * n + 1);
    struct symbol *sym = malloc((n + 1) * sizeof *sym);
    char *pair = malloc(4 * n + 2);
    size_t len = 0;
    size_t count_sym = n;
    enum attn_status rc = ATTN_OK;

    if (w == NULL || sym == NULL || pair == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t cl = strlen(b->byte_char[piece[i]]);
        sym[i].at = len;
        sym[i].len = cl;
        memcpy(w + len, b->byte_char[piece[i]], cl);
        len += cl;
    }
    count_sym = merge_symbols(b, w, sym, count_sym, pair, NULL, NULL);
    for (size_t i = 0; i < count_sym; i++) {
        int id = table_get(b->ids, w + sym[i].at, sym[i].len);
        if (id < 0) {
            rc = attn_fail(err, ATTN_EPARSE, "the vocabulary has no token '%.*s'", (int)sym[i].len,
                           w + sym[i].at);
            goto done;
        }
        if ((size_t)*count == *cap) {
            int *more = realloc(*ids, (*cap * 2 + 16) * sizeof *more);
            if (more == NULL) {
                rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
                goto done;
            }
            *ids = more;
            *cap = *cap * 2 + 16;
        }
        (*ids)[(*count)++] = id;
    }
done:
    free(w);
    free(sym);
    free(pair);
    return rc;
}

enum attn_status
bpe_encode(const struct bpe *b, const char *text, size_t len, int **ids, int *count,
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
    md = pcre2_match_data_create_from_pattern(b->re, NULL);
    if (md == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    while (at < len && rc == ATTN_OK) {
        int m = pcre2_match(b->re, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, md, NULL);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (m < 0 || ov[0] != at || ov[1] <= at) {
            rc = attn_fail(err, ATTN_EPARSE, "byte %zu of the text matches no piece of GPT-2's pattern",
                           at);
            break;
        }
        rc = encode_piece(b, (const unsigned char *)text + at, ov[1] - at, ids, count, &cap, err);
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
    const char *t;
    size_t n = 0;

    if (id < 0 || id >= b->vocab_size || size == 0)
        return -1;
    for (t = b->token[id]; *t;) {
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
    merge_symbols(b, w, sym, (size_t)n, pair, story_step, &s);
    story_add(&s, " -> %s (id %d)", b->token[id], id);
    return (int)s.len;
}
