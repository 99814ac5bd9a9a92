/* tokjson.c: a text encoded through a tokenizer.json's pipeline (see tokjson.h; tokjson_parse.c reads it). */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "attnscope/base/progress.h"
#include "attnscope/base/utf8.h"
#include "attnscope/text/tokjson.h"
#include "tokjson_internal.h"

/* --------------------------------------------------------------- encoding */

/* A list of pieces of text, each its own bytes. */
struct piece {
    char *s;
    size_t n;
};
struct pieces {
    struct piece *v;
    size_t count, cap;
};

static int
pieces_add(struct pieces *p, const char *s, size_t n)
{
    char *copy;

    if (n == 0)
        return 0;
    if (p->count == p->cap) {
        struct piece *more = realloc(p->v, (p->cap * 2 + 8) * sizeof *more);
        if (more == NULL)
            return -1;
        p->v = more;
        p->cap = p->cap * 2 + 8;
    }
    copy = malloc(n + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    p->v[p->count++] = (struct piece){ copy, n };
    return 0;
}

static void
pieces_free(struct pieces *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->v[i].s);
    free(p->v);
    memset(p, 0, sizeof *p);
}

/* A stretch of a piece: [start, end), a match of the pattern or not (to remove or not). */
struct span {
    size_t start, end;
    bool flag;
};
struct spans {
    struct span *v;
    size_t count, cap;
};

static int
spans_add(struct spans *p, size_t start, size_t end, bool flag)
{
    if (p->count == p->cap) {
        struct span *more = realloc(p->v, (p->cap * 2 + 16) * sizeof *more);
        if (more == NULL)
            return -1;
        p->v = more;
        p->cap = p->cap * 2 + 16;
    }
    p->v[p->count++] = (struct span){ start, end, flag };
    return 0;
}

/* What split() returns when the regex engine gave up (PCRE2's match or depth limit). */
#define SPLIT_GAVE_UP (-2)

/*
 * s (n bytes) cut into stretches that match re and stretches between, as
 * Hugging Face's tokenizers finds them (Pattern::find_matches over
 * Oniguruma's find_iter): every match in order, empty ones included,
 * except an empty match where the last match ended (the search then moves
 * one character on); the flags flipped when invert.  -1 when out of
 * memory, SPLIT_GAVE_UP when the engine gave up.
 */
static int
find_matches(const pcre2_code *re, bool invert, const char *s, size_t n, struct spans *out)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    size_t from = 0, prev = 0, last_match_end = 0;
    bool matched = false;
    int rc = 0;

    if (md == NULL)
        return -1;
    while (from <= n && rc == 0) {
        const int m = pcre2_match(re, (PCRE2_SPTR)s, n, from, PCRE2_NO_UTF_CHECK, md, NULL);
        PCRE2_SIZE *ov;
        if (m == PCRE2_ERROR_NOMATCH)
            break;
        if (m < 0) {
            rc = m == PCRE2_ERROR_NOMEMORY ? -1 : SPLIT_GAVE_UP;
            break;
        }
        ov = pcre2_get_ovector_pointer(md);
        if (ov[0] == ov[1] && matched && ov[1] == last_match_end) {
            const int l = from < n ? utf8_length((const unsigned char *)s + from, n - from) : 1;
            from += (size_t)(l > 0 ? l : 1);
            continue;
        }
        if (prev != ov[0])
            rc |= spans_add(out, prev, ov[0], invert);
        rc |= spans_add(out, ov[0], ov[1], !invert);
        prev = from = last_match_end = ov[1];
        matched = true;
    }
    if (rc == 0 && prev != n)
        rc = spans_add(out, prev, n, invert);
    pcre2_match_data_free(md);
    return rc;
}

/*
 * Splits s (n bytes) by re's matches into out, keeping the matches as
 * behavior says (Hugging Face's NormalizedString::split: each behavior a
 * fold over the stretches into (offsets, removed)), the empty pieces
 * dropped as its PreTokenizedString::split drops them.  -1 when out of
 * memory, SPLIT_GAVE_UP when the regex engine gave up on s.
 */
static int
split(const pcre2_code *re, enum split_behavior behavior, bool invert, const char *s, size_t n,
      struct pieces *out)
{
    struct spans m = { 0 };
    struct spans keep = { 0 };
    bool previous = false;
    int rc = n > 0 ? find_matches(re, invert, s, n, &m) : 0;

    for (size_t i = 0; i < m.count && rc == 0; i++) {
        const struct span sp = m.v[i];
        struct span *last = keep.count > 0 ? &keep.v[keep.count - 1] : NULL;
        switch (behavior) {
        case SPLIT_REMOVED: /* the matches go */
            rc = spans_add(&keep, sp.start, sp.end, sp.flag);
            break;
        case SPLIT_ISOLATED:
            rc = spans_add(&keep, sp.start, sp.end, false);
            break;
        case SPLIT_CONTIGUOUS: /* a run of matches, or of the rest, is one piece */
            if (sp.flag == previous && last != NULL)
                last->end = sp.end;
            else
                rc = spans_add(&keep, sp.start, sp.end, false);
            break;
        case SPLIT_PREVIOUS: /* a match after what is not one joins it */
            if (sp.flag && !previous && last != NULL)
                last->end = sp.end;
            else
                rc = spans_add(&keep, sp.start, sp.end, false);
            break;
        case SPLIT_NEXT: /* (folded from the end, below) */
            break;
        }
        previous = sp.flag;
    }
    if (behavior == SPLIT_NEXT && rc == 0) {
        /* A match before what is not one joins it: the same fold, from the end. */
        previous = false;
        for (size_t i = m.count; i-- > 0 && rc == 0;) {
            const struct span sp = m.v[i];
            struct span *last = keep.count > 0 ? &keep.v[keep.count - 1] : NULL;
            if (sp.flag && !previous && last != NULL)
                last->start = sp.start;
            else
                rc = spans_add(&keep, sp.start, sp.end, false);
            previous = sp.flag;
        }
        for (size_t i = 0; i < keep.count / 2; i++) {
            const struct span t = keep.v[i];
            keep.v[i] = keep.v[keep.count - 1 - i];
            keep.v[keep.count - 1 - i] = t;
        }
    }
    for (size_t i = 0; i < keep.count && rc == 0; i++)
        if (!keep.v[i].flag && keep.v[i].end > keep.v[i].start)
            rc = pieces_add(out, s + keep.v[i].start, keep.v[i].end - keep.v[i].start);
    free(m.v);
    free(keep.v);
    return rc;
}

/* The most a chain of normalizers may lengthen a text (NFKD's longest spelling out is 18). */
#define NORM_GROWTH 32

/*
 * One normalizer on text (malloc'd, NUL-terminated); the new text, or NULL
 * (out of memory, or *too_long when a Replace would make it longer than
 * limit bytes: it is not made).
 */
static char *
normalize_step(const struct norm_step *st, char *text, size_t limit, bool *too_long)
{
    utf8proc_uint8_t *r = NULL;
    size_t n = strlen(text);

    switch (st->kind) {
    case NORM_NFC:
        r = utf8proc_NFC((const utf8proc_uint8_t *)text);
        break;
    case NORM_NFD:
        r = utf8proc_NFD((const utf8proc_uint8_t *)text);
        break;
    case NORM_NFKC:
        r = utf8proc_NFKC((const utf8proc_uint8_t *)text);
        break;
    case NORM_NFKD:
        r = utf8proc_NFKD((const utf8proc_uint8_t *)text);
        break;
    case NORM_PREPEND: {
        /* (only a text that is not empty) */
        size_t pn = strlen(st->content);
        char *out;
        if (n == 0)
            return text;
        out = malloc(pn + n + 1);
        if (out != NULL) {
            memcpy(out, st->content, pn);
            memcpy(out + pn, text, n + 1);
        }
        free(text);
        return out;
    }
    case NORM_REPLACE: {
        PCRE2_SIZE size = 2 * n + 64;
        for (;;) {
            char *out = malloc(size);
            int rc;
            if (out == NULL)
                break;
            rc = pcre2_substitute(st->re, (PCRE2_SPTR)text, n, 0,
                                  PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL |
                                      PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_NO_UTF_CHECK,
                                  NULL, NULL, (PCRE2_SPTR)st->content, PCRE2_ZERO_TERMINATED,
                                  (PCRE2_UCHAR *)out, &size);
            if (rc >= 0) {
                free(text);
                return out;
            }
            free(out);
            if (rc != PCRE2_ERROR_NOMEMORY)
                break;
            if (size > limit) { /* (size is now the length needed) */
                *too_long = true;
                break;
            }
            size += 1;
        }
        free(text);
        return NULL;
    }
    }
    free(text);
    return (char *)r;
}

static bool
is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool
is_word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
}

/*
 * The first added token (of those with normalized == which) in s from at:
 * its start, end (lstrip and rstrip taking the spaces around it) and
 * index; false when none.  The longest at the leftmost place wins.
 */
static bool
find_added(const struct tokjson *t, bool which, const char *s, size_t n, size_t at, size_t *start,
           size_t *end, int *index)
{
    for (size_t i = at; i < n; i++)
        for (int f = t->first[(unsigned char)s[i]]; f < t->first[(unsigned char)s[i] + 1]; f++) {
            const int k = t->by_first[f];
            const struct added *a = &t->added[k];
            size_t b, e;
            if (a->normalized != which || a->len > n - i || memcmp(s + i, a->text, a->len) != 0)
                continue;
            if (a->single_word && ((i > 0 && is_word_byte((unsigned char)s[i - 1])) ||
                                   (i + a->len < n && is_word_byte((unsigned char)s[i + a->len]))))
                continue;
            b = i;
            e = i + a->len;
            while (a->lstrip && b > at && is_space((unsigned char)s[b - 1]))
                b--;
            while (a->rstrip && e < n && is_space((unsigned char)s[e]))
                e++;
            *start = b;
            *end = e;
            *index = k;
            return true;
        }
    return false;
}

/* The pieces of one stretch of text with no added token: pre-tokenized. */
static int
pre_tokenize(const struct tokjson *t, const char *s, size_t n, struct pieces *out)
{
    struct pieces cur = { 0 };

    if (pieces_add(&cur, s, n) != 0)
        return -1;
    for (int k = 0; k < t->pres; k++) {
        const struct pre_step *st = &t->pre[k];
        struct pieces next = { 0 };
        for (size_t i = 0; i < cur.count; i++) {
            const struct piece *p = &cur.v[i];
            int rc = 0;
            if (st->kind == PRE_SPLIT)
                rc = split(st->re, st->behavior, st->invert, p->s, p->n, &next);
            else { /* ByteLevel: a prefix space, GPT-2's pattern */
                char *text = p->s;
                size_t len = p->n;
                char *spaced = NULL;
                if (st->prefix_space && text[0] != ' ') {
                    spaced = malloc(len + 2);
                    if (spaced == NULL)
                        rc = -1;
                    else {
                        spaced[0] = ' ';
                        memcpy(spaced + 1, text, len + 1);
                        text = spaced;
                        len++;
                    }
                }
                if (rc == 0)
                    rc = st->re != NULL ? split(st->re, SPLIT_ISOLATED, false, text, len, &next)
                                        : pieces_add(&next, text, len);
                free(spaced);
            }
            if (rc != 0) {
                pieces_free(&next);
                pieces_free(&cur);
                return rc == SPLIT_GAVE_UP ? rc : -1;
            }
        }
        pieces_free(&cur);
        cur = next;
    }
    for (size_t i = 0; i < cur.count; i++)
        if (pieces_add(out, cur.v[i].s, cur.v[i].n) != 0) {
            pieces_free(&cur);
            return -1;
        }
    pieces_free(&cur);
    return 0;
}

/* A pre-tokenizer's pattern that gave up on n bytes, said as such. */
static enum attn_status
gave_up(const struct tokjson *t, size_t n, struct attn_error *err)
{
    /* (Where a pattern backtracks without end PCRE2 stops it; guessing the rest's split would
       give other ids than the model was trained on.) */
    return attn_fail(err, ATTN_ELIMIT,
                     "%s: a pre-tokenizer's pattern gives up on %zu bytes of the text (the regex "
                     "engine's match limit): no split of them is guessed",
                     t->path, n);
}

enum attn_status
tokjson_pieces(const struct tokjson *t, const char *text, size_t len,
               void (*each)(void *ctx, const char *piece, size_t n), void *ctx,
               struct attn_error *err)
{
    struct pieces p = { 0 };
    const int rc = pre_tokenize(t, text, len, &p);

    for (size_t i = 0; rc == 0 && i < p.count; i++)
        each(ctx, p.v[i].s, p.v[i].n);
    pieces_free(&p);
    return rc == 0               ? ATTN_OK
           : rc == SPLIT_GAVE_UP ? gave_up(t, len, err)
                                 : attn_fail(err, ATTN_ENOMEM, "out of memory");
}

/* Normalizes a stretch of text, then its normalized added tokens and pre-tokenizing. */
static enum attn_status
encode_stretch(const struct bpe *b, const struct tokjson *t, const char *s, size_t n,
               int max_tokens, int **ids, int *count, size_t *cap, struct attn_error *err)
{
    char *text = malloc(n + 1);
    size_t len, at = 0;
    enum attn_status rc = ATTN_OK;

    if (text == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    memcpy(text, s, n);
    text[n] = '\0';
    for (int k = 0; k < t->norms && text != NULL; k++) {
        /*
         * A normalizer may lengthen the text (NFKD spells a ligature out,
         * Replace puts its content for each match), and a chain of them
         * compounds: past NORM_GROWTH times the text, refused, not encoded.
         */
        bool too_long = false;
        text = normalize_step(&t->norm[k], text, NORM_GROWTH * n + 4096, &too_long);
        if (too_long || (text != NULL && strlen(text) > NORM_GROWTH * n + 4096)) {
            free(text);
            return attn_fail(err, ATTN_ELIMIT,
                             "the tokenizer's normalizers make this text of %zu bytes more than "
                             "%d times longer: refused",
                             n, NORM_GROWTH);
        }
    }
    if (text == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory normalizing the text");
    len = strlen(text);
    while (at < len && rc == ATTN_OK) {
        size_t start = len, end = len;
        int index = -1;
        struct pieces p = { 0 };
        (void)find_added(t, true, text, len, at, &start, &end, &index);
        switch (pre_tokenize(t, text + at, start - at, &p)) {
        case 0:
            break;
        case SPLIT_GAVE_UP:
            rc = gave_up(t, start - at, err);
            break;
        default:
            rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < p.count && rc == ATTN_OK; i++) {
            if (progress_stopped())
                rc = attn_fail(err, ATTN_ESTOPPED, "stopped while encoding the text");
            else if (max_tokens > 0 && *count > max_tokens)
                rc = attn_fail(err, ATTN_ELIMIT, "the text is more than %d tokens", max_tokens);
            else
                rc = bpe_encode_piece(b, p.v[i].s, p.v[i].n, ids, count, cap, err);
        }
        pieces_free(&p);
        if (rc == ATTN_OK && index >= 0)
            rc = bpe_append_id(ids, count, cap, t->added[index].id, err);
        at = end;
    }
    free(text);
    return rc;
}

int
tokjson_first_id(const struct tokjson *t)
{
    return t != NULL && t->prefixes > 0 ? t->prefix[0] : -1;
}

enum attn_status
tokjson_encode(const struct bpe *b, const struct tokjson *t, const char *text, size_t len,
               int max_tokens, int **ids, int *count, struct attn_error *err)
{
    size_t cap = 0, at = 0;
    enum attn_status rc = ATTN_OK;

    *ids = NULL;
    *count = 0;
    for (int i = 0; i < t->prefixes && rc == ATTN_OK; i++)
        rc = bpe_append_id(ids, count, &cap, t->prefix[i], err);
    /* The added tokens the text holds as it is, and the stretches between them. */
    while (at < len && rc == ATTN_OK) {
        size_t start = len, end = len;
        int index = -1;
        (void)find_added(t, false, text, len, at, &start, &end, &index);
        if (start > at)
            rc = encode_stretch(b, t, text + at, start - at, max_tokens, ids, count, &cap, err);
        if (rc == ATTN_OK && index >= 0)
            rc = bpe_append_id(ids, count, &cap, t->added[index].id, err);
        at = end;
    }
    for (int i = 0; i < t->suffixes && rc == ATTN_OK; i++)
        rc = bpe_append_id(ids, count, &cap, t->suffix[i], err);
    if (rc == ATTN_OK && max_tokens > 0 && *count > max_tokens)
        rc = attn_fail(err, ATTN_ELIMIT, "the text is more than %d tokens", max_tokens);
    if (rc != ATTN_OK) {
        free(*ids);
        *ids = NULL;
        *count = 0;
    }
    return rc;
}
