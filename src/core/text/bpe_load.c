/*
 * bpe_load.c: a BPE tokenizer's files read and checked (see bpe.h):
 * vocab.json or encoder.json, merges.txt or vocab.bpe, or a tokenizer.json's
 * model; every byte's token and every merge's token checked to be there.
 */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <limits.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/text/bpe.h"
#include "attnscope/text/tokjson.h"
#include "bpe_internal.h"

/* The largest vocabulary and merges files attnscope reads. */
#define BPE_FILE_MAX ((size_t)256 << 20)

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

/* Every byte must have its token, or some text could not be encoded. */
static enum attn_status
check_bytes(const struct bpe *b, const char *path, struct attn_error *err)
{
    for (int c = 0; b->byte_level && c < 256; c++)
        if (bpe_table_get(b->ids, b->byte_char[c], strlen(b->byte_char[c])) < 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: no token for the byte 0x%02x ('%s'): not a byte-level BPE "
                             "vocabulary",
                             path, c, b->byte_char[c]);
    return ATTN_OK;
}

/* The vocabulary from root, a token -> id object (where: its place, for messages). */
static enum attn_status
vocab_from_object(struct bpe *b, json_t *root, const char *where, struct attn_error *err)
{
    const char *key;
    json_t *value;
    const char *path = where;

    const size_t count = json_object_size(root);
    /*
     * The ids need not be 0 .. count - 1: GPT-4o's skip 199998 and go on to
     * 200018 (Hugging Face's vocabulary is a map).  Gaps are unused ids, at
     * most as many as the tokens, so that a file cannot ask for more room
     * than its size.
     */
    const json_int_t most = 2 * (json_int_t)count + 256;
    json_int_t top = -1;

    if (!json_is_object(root) || count == 0 || count > (1u << 24))
        return attn_fail(err, ATTN_EPARSE, "%s: not an object of tokens and their ids", path);
    json_object_foreach(root, key, value)
    {
        json_int_t id = json_is_integer(value) ? json_integer_value(value) : -1;
        if (id < 0 || id >= most || id >= (1 << 24))
            return attn_fail(err, ATTN_EPARSE, "%s: token '%s' has id %s, not one from 0 to %lld",
                             path, key,
                             json_is_integer(value) ? "out of range" : "that is not a number",
                             (long long)(most < (1 << 24) ? most - 1 : (1 << 24) - 1));
        top = id > top ? id : top;
    }
    b->vocab_size = (int)top + 1;
    b->token = calloc((size_t)b->vocab_size, sizeof *b->token);
    b->ids = bpe_table_create(count);
    if (b->token == NULL || b->ids == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    json_object_foreach(root, key, value)
    {
        json_int_t id = json_integer_value(value);
        if (b->token[id] != NULL)
            return attn_fail(err, ATTN_EPARSE, "%s: tokens '%s' and '%s' have the same id %lld",
                             path, b->token[id], key, (long long)id);
        b->token[id] = strdup(key);
        if (b->token[id] == NULL || bpe_table_put(b->ids, key, strlen(key), (int)id) < 0)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    }
    for (int id = 0; id < b->vocab_size; id++)
        if (b->token[id] == NULL) {
            char name[32];
            snprintf(name, sizeof name, "<unused %d>", id);
            if ((b->token[id] = strdup(name)) == NULL)
                return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        }
    return check_bytes(b, path, err);
}

/* The vocabulary from a list, token i the id i's (where: its place, for messages). */
static enum attn_status
vocab_from_list(struct bpe *b, char *const *tokens, size_t count, const char *where,
                struct attn_error *err)
{
    if (count == 0 || count > (1u << 24))
        return attn_fail(err, ATTN_EPARSE, "%s: %zu tokens", where, count);
    b->vocab_size = (int)count;
    b->token = calloc(count, sizeof *b->token);
    b->ids = bpe_table_create(count);
    if (b->token == NULL || b->ids == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    for (size_t i = 0; i < count; i++) {
        const size_t n = strlen(tokens[i]);
        const int before = bpe_table_get(b->ids, tokens[i], n);
        if (before >= 0)
            return attn_fail(err, ATTN_EPARSE, "%s: tokens %d and %zu are both '%s'", where,
                             before, i, tokens[i]);
        b->token[i] = strdup(tokens[i]);
        if (b->token[i] == NULL || bpe_table_put(b->ids, tokens[i], n, (int)i) < 0)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    }
    return check_bytes(b, where, err);
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

/* The merge of tokens a and c into made, the next rank. */
static enum attn_status
add_merge_ids(struct bpe *b, int a, int c, int made, const char *where, struct attn_error *err)
{
    /* A merge listed twice has the later rank (as GPT-2's encoder's dict and Hugging Face's
       HashMap keep it). */
    if (bpe_idmap_put(b->ranks, bpe_merge_key(a, c), (uint64_t)(uint32_t)b->merges << 32 |
                                                         (uint32_t)made) < 0)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    b->merges++;
    return ATTN_OK;
}

/*
 * Adds the merge of tokens a and c (na and nc bytes), the next rank; where
 * names it in messages ("merges.txt:12").  Both are tokens of the
 * vocabulary and so is what they make, as Hugging Face's BPE requires.
 */
static enum attn_status
add_merge(struct bpe *b, const char *a, size_t na, const char *c, size_t nc, const char *where,
          struct attn_error *err)
{
    char small[512];
    char *joined = small;
    int made, ia, ic;

    if (na == 0 || nc == 0 || memchr(a, ' ', na) != NULL || memchr(c, ' ', nc) != NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' is not a merge (two tokens and a space)",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    /* Tokens of any length the file holds: a long one takes memory of its own. */
    if (na + nc >= sizeof small && (joined = malloc(na + nc)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", where);
    memcpy(joined, a, na);
    memcpy(joined + na, c, nc);
    made = bpe_table_get(b->ids, joined, na + nc);
    if (joined != small)
        free(joined);
    /* A merge makes a token of the vocabulary, or encoding would find none. */
    if (made < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s' makes a token the vocabulary lacks",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c);
    ia = bpe_table_get(b->ids, a, na);
    ic = bpe_table_get(b->ids, c, nc);
    if (ia < 0 || ic < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.*s %.*s': '%.*s' is not a token of the vocabulary",
                         where, (int)(na > 20 ? 20 : na), a, (int)(nc > 20 ? 20 : nc), c,
                         (int)(ia < 0 ? (na > 20 ? 20 : na) : (nc > 20 ? 20 : nc)),
                         ia < 0 ? a : c);
    return add_merge_ids(b, ia, ic, made, where, err);
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
    b->ranks = bpe_idmap_create(len / 8);
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
            b->raw_len[id] = bpe_spell_bytes(b, b->token[id], b->raw[id], room);
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

/* The merge "a c" (one string, the tokens a space apart) added, the next rank. */
static enum attn_status
add_spelled_merge(struct bpe *b, const char *m, const char *where, struct attn_error *err)
{
    const char *space = strchr(m, ' ');

    if (space == NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: '%.40s' is not a merge (two tokens and a space)",
                         where, m);
    return add_merge(b, m, (size_t)(space - m), space + 1, strlen(space + 1), where, err);
}

/* ATTN_OK when merges were read: without any, every word would be spelled byte by byte. */
static enum attn_status
some_merges(const struct bpe *b, const char *path, struct attn_error *err)
{
    if (b->merges == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no merges: every word would be spelled byte by byte",
                         path);
    return ATTN_OK;
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
    b->ranks = bpe_idmap_create(json_array_size(merges) + 1);
    if (b->ranks == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    json_array_foreach(merges, i, m)
    {
        enum attn_status rc;
        snprintf(where, sizeof where, "%s: model.merges[%zu]", path, i);
        if (json_is_string(m)) {
            rc = add_spelled_merge(b, json_string_value(m), where, err);
        } else if (json_is_array(m) && json_array_size(m) == 2 &&
                   json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
            const char *a = json_string_value(json_array_get(m, 0));
            const char *c = json_string_value(json_array_get(m, 1));
            rc = add_merge(b, a, strlen(a), c, strlen(c), where, err);
        } else {
            return attn_fail(err, ATTN_EPARSE, "%s: neither \"a b\" nor [\"a\", \"b\"]", where);
        }
        if (rc != ATTN_OK)
            return rc;
    }
    return some_merges(b, path, err);
}

/*
 * Merges "a b", in rank order (a GGUF's tokenizer.ggml.merges; a message
 * names the key and the merge's text), or, merges NULL, as triples of ids
 * (bpe_lists.merge_ids).
 */
static enum attn_status
merges_from_list(struct bpe *b, char *const *merges, const int *ids, size_t count,
                 const char *path, struct attn_error *err)
{
    char where[PATH_MAX + 48];

    snprintf(where, sizeof where, "%s: tokenizer.ggml.merges", path);
    b->ranks = bpe_idmap_create(count + 1);
    if (b->ranks == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < count; i++) {
        const enum attn_status rc =
            merges != NULL ? add_spelled_merge(b, merges[i], where, err)
                           : add_merge_ids(b, ids[3 * i], ids[3 * i + 1], ids[3 * i + 2], where, err);
        if (rc != ATTN_OK)
            return rc;
    }
    return some_merges(b, path, err);
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
        b->unk = bpe_table_get(b->ids, json_string_value(unk), strlen(json_string_value(unk)));
        if (b->unk < 0)
            return attn_fail(err, ATTN_EPARSE, "%s: model.unk_token '%s' is not in the vocabulary",
                             path, json_string_value(unk));
    }
    /*
     * A vocabulary may lack some of the 256 (Gemma 2's has no <0x09>, "\t"
     * being a token of its own): a character needing one is the unknown
     * token, as Hugging Face's BPE falls back (bpe_encode_piece).
     */
    for (int c = 0; c < 256 && b->byte_fallback; c++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", c);
        b->byte_token[c] = bpe_table_get(b->ids, name, 6);
    }
    return ATTN_OK;
}

enum attn_status
bpe_load_tokenizer_json(struct bpe *b, const char *path, struct attn_error *err)
{
    json_t *root;
    enum attn_status rc;

    begin(b);
    root = load_json(path, err);
    if (root == NULL)
        return finish(b, err != NULL ? err->status : ATTN_EPARSE, err);
    rc = bpe_load_tokenizer_root(b, root, path, err);
    json_decref(root);
    return rc;
}

enum attn_status
bpe_load_tokenizer_root(struct bpe *b, json_t *root, const char *path, struct attn_error *err)
{
    return bpe_load_tokenizer_lists(b, root, NULL, path, err);
}

enum attn_status
bpe_load_tokenizer_lists(struct bpe *b, json_t *root, const struct bpe_lists *lists,
                         const char *path, struct attn_error *err)
{
    json_t *model;
    json_t *type;
    enum attn_status rc;

    begin(b);
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
        if (lists != NULL) {
            snprintf(where, sizeof where, "%s: tokenizer.ggml.tokens", path);
            rc = vocab_from_list(b, lists->tokens, lists->count, where, err);
            if (rc == ATTN_OK)
                rc = merges_from_list(b, lists->merges, lists->merge_ids, lists->merge_count,
                                      path, err);
        } else {
            rc = vocab_from_object(b, json_object_get(model, "vocab"), where, err);
            if (rc == ATTN_OK)
                rc = merges_from_array(b, json_object_get(model, "merges"), path, err);
        }
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
    if (bpe_table_get(b->ids, text, strlen(text)) < 0 && bpe_table_put(b->ids, text, strlen(text), id) < 0)
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
    bpe_table_destroy(b->ids);
    bpe_idmap_destroy(b->ranks);
    if (b->re != NULL)
        pcre2_code_free(b->re);
    tokjson_destroy(b->pipeline);
    free(b->added);
    memset(b, 0, sizeof *b);
}
