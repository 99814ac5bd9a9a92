/* bpe.c: GPT-2's byte-level BPE tokenizer (see bpe.h). */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/bpe.h"
#include "attnscope/fileio.h"
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

static enum attn_status
load_vocab(struct bpe *b, const char *path, struct attn_error *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    const char *key;
    json_t *value;
    enum attn_status rc = ATTN_EPARSE;

    if (root == NULL)
        return attn_fail(err, jerr.line < 0 ? ATTN_EIO : ATTN_EPARSE, "%s: %s%s", path,
                         jerr.line > 0 ? "not JSON: " : "", jerr.text);
    if (!json_is_object(root) || json_object_size(root) == 0 ||
        json_object_size(root) > (1u << 24)) {
        attn_fail(err, ATTN_EPARSE, "%s: not an object of tokens and their ids", path);
        goto done;
    }
    b->vocab_size = (int)json_object_size(root);
    b->token = calloc((size_t)b->vocab_size, sizeof *b->token);
    b->ids = table_create((size_t)b->vocab_size);
    if (b->token == NULL || b->ids == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    json_object_foreach(root, key, value)
    {
        json_int_t id = json_is_integer(value) ? json_integer_value(value) : -1;
        if (id < 0 || id >= b->vocab_size) {
            attn_fail(err, ATTN_EPARSE, "%s: token '%s' has id %s, not one from 0 to %d", path, key,
                      json_is_integer(value) ? "out of range" : "that is not a number",
                      b->vocab_size - 1);
            goto done;
        }
        if (b->token[id] != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tokens '%s' and '%s' have the same id %lld", path,
                      b->token[id], key, (long long)id);
            goto done;
        }
        b->token[id] = strdup(key);
        if (b->token[id] == NULL || table_put(b->ids, key, strlen(key), (int)id) < 0) {
            rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
            goto done;
        }
    }
    /* Every byte must have its token, or some text could not be encoded. */
    for (int c = 0; c < 256; c++)
        if (table_get(b->ids, b->byte_char[c], strlen(b->byte_char[c])) < 0) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: no token for the byte 0x%02x ('%s'): not a byte-level BPE vocabulary",
                      path, c, b->byte_char[c]);
            goto done;
        }
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}

static enum attn_status
load_merges(struct bpe *b, const char *path, struct attn_error *err)
{
    char *text;
    size_t len;
    char *line;
    int number = 0;
    enum attn_status rc = fileio_read_all(path, BPE_FILE_MAX, &text, &len, err);

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
        if (space == NULL || space == line || space == line + n - 1 ||
            memchr(space + 1, ' ', (size_t)(line + n - space - 1)) != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s:%d: '%.*s' is not a merge (two tokens and a space)", path,
                      number, (int)(n > 40 ? 40 : n), line);
            free(text); /* (after the message, which quotes it) */
            return ATTN_EPARSE;
        }
        /* A merge makes a token of the vocabulary, or encoding would find none. */
        {
            char joined[512];
            size_t a = (size_t)(space - line);
            size_t c = n - a - 1;
            if (a + c < sizeof joined) {
                memcpy(joined, line, a);
                memcpy(joined + a, space + 1, c);
            }
            if (a + c >= sizeof joined || table_get(b->ids, joined, a + c) < 0) {
                attn_fail(err, ATTN_EPARSE, "%s:%d: '%.*s' makes a token the vocabulary lacks",
                          path, number, (int)(n > 40 ? 40 : n), line);
                free(text); /* (after the message, which quotes it) */
                return ATTN_EPARSE;
            }
        }
        if (table_put(b->ranks, line, n, b->merges) < 0) {
            free(text);
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        }
        b->merges++;
        line += n + (end != NULL) + (line[n] == '\r');
    }
    free(text);
    if (b->merges == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no merges: every word would be spelled byte by byte",
                         path);
    return ATTN_OK;
}

enum attn_status
bpe_load(struct bpe *b, const char *vocab_path, const char *merges_path, struct attn_error *err)
{
    int code;
    PCRE2_SIZE offset;
    enum attn_status rc;

    memset(b, 0, sizeof *b);
    for (int c = 0; c < 324; c++)
        b->char_byte[c] = -1;
    for (int c = 0; c < 256; c++) {
        b->byte_char[c][utf8_encode(byte_to_char(c), b->byte_char[c])] = '\0';
        b->char_byte[byte_to_char(c)] = (short)c;
    }
    if ((rc = load_vocab(b, vocab_path, err)) != ATTN_OK ||
        (rc = load_merges(b, merges_path, err)) != ATTN_OK) {
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
    /* Merge the adjacent pair of lowest rank, everywhere it occurs, until none is a merge. */
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
