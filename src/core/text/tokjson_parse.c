/*
 * tokjson_parse.c: a tokenizer.json's added tokens, normalizers,
 * pre-tokenizers and post-processors read into its pipeline (see
 * tokjson.h); what it does not interpret refused by name.
 */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/text/tokjson.h"
#include "tokjson_internal.h"

void
tokjson_destroy(struct tokjson *t)
{
    if (t == NULL)
        return;
    for (int i = 0; i < t->norms; i++) {
        if (t->norm[i].re != NULL)
            pcre2_code_free(t->norm[i].re);
        free(t->norm[i].content);
    }
    for (int i = 0; i < t->pres; i++)
        if (t->pre[i].re != NULL)
            pcre2_code_free(t->pre[i].re);
    for (int i = 0; i < t->addeds; i++)
        free(t->added[i].text);
    free(t->by_first);
    free(t->norm);
    free(t->pre);
    free(t->added);
    free(t->path);
    free(t);
}

bool
tokjson_keeps_text(const struct tokjson *t)
{
    if (t->norms > 0 || t->prefixes > 0 || t->suffixes > 0)
        return false;
    for (int i = 0; i < t->pres; i++)
        if (t->pre[i].kind == PRE_SPLIT && t->pre[i].behavior == SPLIT_REMOVED)
            return false;
    return true;
}

/* A pattern object ({"String": s} or {"Regex": r}) compiled; NULL with err set. */
static pcre2_code *
pattern(json_t *p, const char *path, const char *where, struct attn_error *err)
{
    json_t *str = json_object_get(p, "String");
    json_t *re = json_object_get(p, "Regex");
    const char *text = json_is_string(str) ? json_string_value(str)
                       : json_is_string(re) ? json_string_value(re)
                                            : NULL;
    int code;
    PCRE2_SIZE offset;
    pcre2_code *c;

    if (text == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s: a pattern is {\"String\": ...} or {\"Regex\": ...}",
                  path, where);
        return NULL;
    }
    c = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED,
                      json_is_string(str) ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP, &code,
                      &offset, NULL);
    if (c == NULL) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(code, msg, sizeof msg);
        attn_fail(err, ATTN_EPARSE, "%s: %s: the pattern does not compile at %zu: %s", path,
                  where, (size_t)offset, (const char *)msg);
    }
    return c;
}

/* Whether re matches the empty string (a Replace that would insert at every position). */
static bool
matches_nothing(const pcre2_code *re)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc;

    if (md == NULL)
        return true; /* (no memory to tell: refused, as if it did) */
    rc = pcre2_match(re, (PCRE2_SPTR) "", 0, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

static const char *
type_of(json_t *o)
{
    json_t *t = json_object_get(o, "type");

    return json_is_string(t) ? json_string_value(t) : "(no type)";
}

static enum attn_status
parse_normalizer(struct tokjson *t, json_t *n, const char *path, struct attn_error *err)
{
    static const struct {
        const char *name;
        enum norm_kind kind;
    } forms[] = { { "NFC", NORM_NFC }, { "NFD", NORM_NFD }, { "NFKC", NORM_NFKC },
                  { "NFKD", NORM_NFKD } };
    const char *type = type_of(n);
    struct norm_step step = { 0 };
    struct norm_step *more;

    if (n == NULL || json_is_null(n))
        return ATTN_OK;
    if (strcmp(type, "Sequence") == 0) {
        json_t *list = json_object_get(n, "normalizers");
        for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++)
            if (parse_normalizer(t, json_array_get(list, i), path, err) != ATTN_OK)
                return ATTN_EPARSE;
        return ATTN_OK;
    }
    for (size_t i = 0; type != NULL && i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(type, forms[i].name) == 0) {
            step.kind = forms[i].kind;
            type = NULL; /* (known) */
        }
    if (type != NULL && strcmp(type, "Replace") == 0) {
        json_t *content = json_object_get(n, "content");
        step.kind = NORM_REPLACE;
        if (!json_is_string(content))
            return attn_fail(err, ATTN_EPARSE, "%s: normalizer Replace has no content", path);
        if ((step.re = pattern(json_object_get(n, "pattern"), path, "normalizer Replace", err)) ==
            NULL)
            return ATTN_EPARSE;
        if (matches_nothing(step.re)) {
            pcre2_code_free(step.re);
            return attn_fail(err, ATTN_EPARSE,
                             "%s: normalizer Replace's pattern matches the empty string: it would "
                             "put its content between every two characters",
                             path);
        }
        step.content = strdup(json_string_value(content));
    } else if (type != NULL && strcmp(type, "Prepend") == 0) {
        json_t *prepend = json_object_get(n, "prepend");
        step.kind = NORM_PREPEND;
        if (!json_is_string(prepend))
            return attn_fail(err, ATTN_EPARSE, "%s: normalizer Prepend has no prepend", path);
        step.content = strdup(json_string_value(prepend));
    } else if (type != NULL)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: normalizer %s is not supported yet; supported: NFC, NFD, NFKC, "
                         "NFKD, Replace, Prepend, Sequence",
                         path, type);
    more = realloc(t->norm, ((size_t)t->norms + 1) * sizeof *more);
    if (more == NULL || ((step.kind == NORM_REPLACE || step.kind == NORM_PREPEND) &&
                         step.content == NULL)) {
        if (step.re != NULL)
            pcre2_code_free(step.re);
        free(step.content);
        if (more != NULL)
            t->norm = more;
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    t->norm = more;
    t->norm[t->norms++] = step;
    return ATTN_OK;
}

static enum attn_status
add_pre(struct tokjson *t, struct pre_step step, struct attn_error *err)
{
    struct pre_step *more = realloc(t->pre, ((size_t)t->pres + 1) * sizeof *more);

    if (more == NULL) {
        if (step.re != NULL)
            pcre2_code_free(step.re);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    t->pre = more;
    t->pre[t->pres++] = step;
    return ATTN_OK;
}

static enum attn_status
parse_pre(struct tokjson *t, json_t *p, const char *path, struct attn_error *err)
{
    static const struct {
        const char *name;
        enum split_behavior b;
    } behaviors[] = { { "Removed", SPLIT_REMOVED },
                      { "Isolated", SPLIT_ISOLATED },
                      { "MergedWithPrevious", SPLIT_PREVIOUS },
                      { "MergedWithNext", SPLIT_NEXT },
                      { "Contiguous", SPLIT_CONTIGUOUS } };
    const char *type = type_of(p);
    struct pre_step step = { 0 };

    if (p == NULL || json_is_null(p))
        return ATTN_OK;
    if (strcmp(type, "Sequence") == 0) {
        json_t *list = json_object_get(p, "pretokenizers");
        for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++)
            if (parse_pre(t, json_array_get(list, i), path, err) != ATTN_OK)
                return ATTN_EPARSE;
        return ATTN_OK;
    }
    if (strcmp(type, "Split") == 0) {
        json_t *behavior = json_object_get(p, "behavior");
        bool known = false;
        step.invert = json_is_true(json_object_get(p, "invert"));
        for (size_t i = 0; i < sizeof behaviors / sizeof behaviors[0]; i++)
            if (json_is_string(behavior) &&
                strcmp(json_string_value(behavior), behaviors[i].name) == 0)
                step.behavior = behaviors[i].b, known = true;
        if (!known)
            return attn_fail(err, ATTN_EPARSE, "%s: pre-tokenizer Split's behavior %s is unknown",
                             path,
                             json_is_string(behavior) ? json_string_value(behavior) : "(none)");
        step.kind = PRE_SPLIT;
        if ((step.re = pattern(json_object_get(p, "pattern"), path, "pre-tokenizer Split", err)) ==
            NULL)
            return ATTN_EPARSE;
        return add_pre(t, step, err);
    }
    if (strcmp(type, "ByteLevel") == 0) {
        json_t *use = json_object_get(p, "use_regex");
        int code;
        PCRE2_SIZE offset;
        step.kind = PRE_BYTE_LEVEL;
        step.prefix_space = json_is_true(json_object_get(p, "add_prefix_space"));
        /* use_regex defaults to true: GPT-2's pattern cuts the pieces. */
        if (use == NULL || json_is_true(use)) {
            step.re = pcre2_compile((PCRE2_SPTR)BPE_GPT2_PATTERN, PCRE2_ZERO_TERMINATED,
                                    PCRE2_UTF | PCRE2_UCP, &code, &offset, NULL);
            if (step.re == NULL)
                return attn_fail(err, ATTN_EPARSE, "GPT-2's pattern does not compile");
        }
        return add_pre(t, step, err);
    }
    if (strcmp(type, "Digits") == 0) {
        /* Digits: each digit a piece, or each run of them (Hugging Face: char::is_numeric). */
        const bool each = json_is_true(json_object_get(p, "individual_digits"));
        int code;
        PCRE2_SIZE offset;
        step.kind = PRE_SPLIT;
        step.behavior = each ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS;
        step.re = pcre2_compile((PCRE2_SPTR) "\\p{N}", PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                &code, &offset, NULL);
        if (step.re == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        return add_pre(t, step, err);
    }
    return attn_fail(err, ATTN_EPARSE,
                     "%s: pre-tokenizer %s is not supported yet; supported: Split, ByteLevel, "
                     "Digits, Sequence",
                     path, type);
}

/* The id of a TemplateProcessing's special token named id, into out. */
static enum attn_status
template_ids(json_t *specials, json_t *item, int vocab, int *out, int *count, const char *path,
             struct attn_error *err)
{
    json_t *sp = json_object_get(json_object_get(item, "SpecialToken"), "id");
    json_t *ids = json_object_get(json_object_get(specials, json_string_value(sp)), "ids");

    if (!json_is_string(sp) || !json_is_array(ids))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: post_processor TemplateProcessing names a special token it does "
                         "not define",
                         path);
    for (size_t i = 0; i < json_array_size(ids); i++) {
        json_t *id = json_array_get(ids, i);
        if (*count >= POST_MAX || !json_is_integer(id))
            return attn_fail(err, ATTN_EPARSE,
                             "%s: post_processor TemplateProcessing: more than %d special ids, "
                             "or one not a number",
                             path, POST_MAX);
        if (json_integer_value(id) < 0 || json_integer_value(id) >= vocab)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: post_processor TemplateProcessing: special token %s has id "
                             "%" JSON_INTEGER_FORMAT ", not a token of the vocabulary (0 to %d)",
                             path, json_string_value(sp), json_integer_value(id), vocab - 1);
        out[(*count)++] = (int)json_integer_value(id);
    }
    return ATTN_OK;
}

static enum attn_status
parse_post(struct tokjson *t, json_t *p, int vocab, const char *path, struct attn_error *err)
{
    const char *type = type_of(p);

    if (p == NULL || json_is_null(p) || strcmp(type, "ByteLevel") == 0)
        return ATTN_OK; /* (ByteLevel's post-processing trims offsets only: no ids) */
    if (strcmp(type, "Sequence") == 0) {
        json_t *list = json_object_get(p, "processors");
        for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++)
            if (parse_post(t, json_array_get(list, i), vocab, path, err) != ATTN_OK)
                return ATTN_EPARSE;
        return ATTN_OK;
    }
    if (strcmp(type, "TemplateProcessing") == 0) {
        json_t *single = json_object_get(p, "single");
        json_t *specials = json_object_get(p, "special_tokens");
        bool after = false;
        for (size_t i = 0; json_is_array(single) && i < json_array_size(single); i++) {
            json_t *item = json_array_get(single, i);
            if (json_object_get(item, "Sequence") != NULL) {
                after = true;
                continue;
            }
            if (template_ids(specials, item, vocab, after ? t->suffix : t->prefix,
                             after ? &t->suffixes : &t->prefixes, path, err) != ATTN_OK)
                return ATTN_EPARSE;
        }
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_EPARSE,
                     "%s: post_processor %s is not supported yet; supported: TemplateProcessing, "
                     "ByteLevel, Sequence",
                     path, type);
}

static int
longest_first(const void *a, const void *b)
{
    const struct added *x = a, *y = b;

    return x->len < y->len ? 1 : x->len > y->len ? -1 : x->id - y->id;
}

static enum attn_status
parse_added(struct bpe *b, struct tokjson *t, json_t *list, const char *path,
            struct attn_error *err)
{
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    const int base = b->vocab_size;
    const size_t limit = (size_t)base + n;

    t->added = calloc(n + 1, sizeof *t->added);
    if (t->added == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(list, i);
        json_t *content = json_object_get(a, "content");
        json_t *id = json_object_get(a, "id");
        struct added *d = &t->added[t->addeds];
        if (!json_is_string(content) || !json_is_integer(id) || json_string_length(content) == 0)
            return attn_fail(err, ATTN_EPARSE, "%s: added_tokens[%zu] has no content or id", path,
                             i);
        /*
         * Added tokens follow the model's vocabulary (Qwen's and Llama's) or
         * name tokens of it (Gemma's): an id far past both is no token, and
         * the ids between it and the vocabulary would each be made.
         */
        if (json_integer_value(id) < 0 || json_integer_value(id) >= (json_int_t)limit)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: added_tokens[%zu] ('%.40s') has id %" JSON_INTEGER_FORMAT
                             ": an added token's id is from 0 to %zu (the vocabulary's %d "
                             "tokens and the %zu added after them)",
                             path, i, json_string_value(content), json_integer_value(id),
                             limit - 1, base, n);
        if (bpe_add_token(b, json_string_value(content), (int)json_integer_value(id), err) !=
            ATTN_OK)
            return ATTN_EPARSE;
        d->text = strdup(json_string_value(content));
        if (d->text == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        d->len = strlen(d->text);
        d->id = (int)json_integer_value(id);
        d->normalized = json_is_true(json_object_get(a, "normalized"));
        d->lstrip = json_is_true(json_object_get(a, "lstrip"));
        d->rstrip = json_is_true(json_object_get(a, "rstrip"));
        d->single_word = json_is_true(json_object_get(a, "single_word"));
        t->addeds++;
    }
    qsort(t->added, (size_t)t->addeds, sizeof *t->added, longest_first);
    t->by_first = malloc(((size_t)t->addeds + 1) * sizeof *t->by_first);
    if (t->by_first == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    {
        int fill[256];
        memset(t->first, 0, sizeof t->first);
        for (int k = 0; k < t->addeds; k++)
            t->first[(unsigned char)t->added[k].text[0] + 1]++;
        for (int c = 0; c < 256; c++)
            t->first[c + 1] += t->first[c];
        memcpy(fill, t->first, sizeof fill);
        for (int k = 0; k < t->addeds; k++) /* (in order: each byte's list stays longest first) */
            t->by_first[fill[(unsigned char)t->added[k].text[0]]++] = k;
    }
    return ATTN_OK;
}

enum attn_status
tokjson_parse(struct bpe *b, json_t *root, const char *path, struct tokjson **out,
              struct attn_error *err)
{
    struct tokjson *t = calloc(1, sizeof *t);

    *out = t;
    if (t == NULL || (t->path = strdup(path)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    if (parse_added(b, t, json_object_get(root, "added_tokens"), path, err) != ATTN_OK ||
        parse_normalizer(t, json_object_get(root, "normalizer"), path, err) != ATTN_OK ||
        parse_pre(t, json_object_get(root, "pre_tokenizer"), path, err) != ATTN_OK ||
        parse_post(t, json_object_get(root, "post_processor"), b->vocab_size, path, err) !=
            ATTN_OK)
        return err->status;
    return ATTN_OK;
}
