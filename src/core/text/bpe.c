/* bpe.c: a BPE tokenizer's encoding, and the bytes and story of its tokens (see bpe.h). */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <limits.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/text/bpe.h"
#include "attnscope/text/tokjson.h"
#include "attnscope/base/progress.h"
#include "attnscope/base/utf8.h"
#include "bpe_internal.h"

/* ------------------------------------------------------------ encoding */

struct symbol {
    size_t at, len; /* in the piece's spelling */
    int id;         /* the token it is, or -1 */
};

/* Appends the ids of one piece (its bytes spelled with the byte table, merged) to out. */
/* Called for each merge applied: the two symbols and the merge's rank. */
typedef void (*merge_step_fn)(void *ctx, const char *a, size_t na, const char *c, size_t nc,
                              int rank);

/* A symbol of a piece being merged: a span of its spelling, in a list. */
struct node {
    size_t at, len;
    int id;            /* the token it is, or -1 */
    int prev, next;    /* -1 at the ends */
    unsigned version;  /* changes when the symbol does (a candidate pair naming it is then stale) */
    bool alive;
};

/* A candidate merge: the pair starting at node left, as both its symbols were when it was found. */
struct candidate {
    int rank;
    int left;
    unsigned left_version, right_version;
    int made; /* the token the merge makes */
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

/* Adds node i and its successor as a candidate, if their tokens are a merge. */
static void
offer(const struct bpe *b, const struct node *nd, int i, struct candidate *h, size_t *n)
{
    uint64_t v;
    int j;

    if (i < 0 || (j = nd[i].next) < 0 || nd[i].id < 0 || nd[j].id < 0 ||
        !bpe_idmap_get(b->ranks, bpe_merge_key(nd[i].id, nd[j].id), &v))
        return;
    heap_push(h, n, (struct candidate){ (int)(v >> 32), i, nd[i].version, nd[j].version,
                                        (int)(uint32_t)v });
}

/*
 * Merges the adjacent pair of lowest rank, everywhere it occurs (leftmost
 * first, never overlapping), until no pair is a merge: GPT-2's algorithm,
 * with the candidate pairs in a heap so that a piece of n symbols takes
 * O(n log n) work instead of a scan of every pair per merge (a word of a
 * million letters took minutes).  w holds the symbols' text; pairs are
 * looked up by their tokens' ids.  Returns the symbols left, compacted in
 * sym; step (may be NULL) hears of each merge once, when its rank first
 * applies.  -1 when out of memory.
 */
static long
merge_symbols(const struct bpe *b, const char *w, struct symbol *sym, size_t count_sym,
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
        nd[i] = (struct node){ sym[i].at, sym[i].len, sym[i].id, (int)i - 1,
                               i + 1 < count_sym ? (int)i + 1 : -1, 0, true };
    for (size_t i = 0; i + 1 < count_sym; i++)
        offer(b, nd, (int)i, h, &n);
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
        nd[i].id = c.made;
        nd[i].version++;
        nd[i].next = nd[j].next;
        if (nd[j].next >= 0)
            nd[nd[j].next].prev = i;
        nd[j].alive = false;
        offer(b, nd, nd[i].prev, h, &n);
        offer(b, nd, i, h, &n);
    }
    for (int i = 0; i >= 0; i = nd[i].next)
        sym[out++] = (struct symbol){ nd[i].at, nd[i].len, nd[i].id };
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

/* Whether every one of the len bytes at s has its <0xNN> token. */
static bool
has_byte_tokens(const struct bpe *b, const char *s, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (b->byte_token[(unsigned char)s[k]] < 0)
            return false;
    return true;
}

/*
 * The ids of the n bytes of a piece: spelled with GPT-2's byte characters
 * (byte-level) or as its own UTF-8 characters, merged by rank; a symbol
 * the vocabulary lacks (never, byte-level) is its bytes' <0xNN> tokens
 * (byte fallback, when the vocabulary has each of them) or the unknown token.
 */
enum attn_status
bpe_encode_piece(const struct bpe *b, const char *text, size_t n, int **ids, int *count,
                 size_t *cap, struct attn_error *err)
{
    const unsigned char *piece = (const unsigned char *)text;
    char *w = malloc(2 * n + 1);
    struct symbol *sym = malloc((n + 1) * sizeof *sym);
    size_t len = 0;
    size_t count_sym = 0;
    bool last_unk = false;
    enum attn_status rc = ATTN_OK;

    if (w == NULL || sym == NULL) {
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
        sym[count_sym].id = bpe_table_get(b->ids, w + len, cl);
        count_sym++;
        len += cl;
    }
    /* ignore_merges: a piece that is a token is that token. */
    if (b->ignore_merges) {
        int id = bpe_table_get(b->ids, w, len);
        if (id >= 0) {
            rc = bpe_append_id(ids, count, cap, id, err);
            goto done;
        }
    }
    {
        long left = merge_symbols(b, w, sym, count_sym, NULL, NULL);
        if (left < 0) {
            rc = attn_fail(err, ATTN_ENOMEM, "out of memory");
            goto done;
        }
        count_sym = (size_t)left;
    }
    for (size_t i = 0; i < count_sym && rc == ATTN_OK; i++) {
        const int id = sym[i].id;
        if (id >= 0) {
            rc = bpe_append_id(ids, count, cap, id, err);
            last_unk = false;
        } else if (b->byte_fallback && has_byte_tokens(b, w + sym[i].at, sym[i].len)) {
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
int
bpe_spell_bytes(const struct bpe *b, const char *spelling, char *buf, size_t size)
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
        sym[i].id = bpe_table_get(b->ids, b->byte_char[bytes[i]], cl);
        memcpy(w + len, b->byte_char[bytes[i]], cl);
        len += cl;
    }
    /*
     * A special (added) token is matched whole in the text and never made by
     * merges; nor is a token its bytes do not merge into (GPT-2's
     * <|endoftext|>, which vocab.json holds as a token of its own).
     */
    if (b->added == NULL || !b->added[id]) {
        struct symbol left[256];
        long count;
        memcpy(left, sym, (size_t)n * sizeof *sym);
        count = merge_symbols(b, w, left, (size_t)n, NULL, NULL);
        if (count < 0)
            return -1;
        if (count == 1 && left[0].id == id) {
            story_add(&s, n > 1 ? "; merged by rank:" : "; a byte token: no merges");
            if (merge_symbols(b, w, sym, (size_t)n, story_step, &s) < 0)
                return -1;
            story_add(&s, " -> %s (id %d)", b->token[id], id);
            return (int)s.len;
        }
    }
    s.len = 0;
    story_add(&s, "%s (id %d) is a special token: matched whole in the text, never merged from "
                  "its bytes", b->token[id], id);
    return (int)s.len;
}
