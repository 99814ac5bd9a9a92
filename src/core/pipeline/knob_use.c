/*
 * knob_use.c: a knob's text parsed, and the calls that use a knob through
 * its row of the table (knob_parse, knob_step, knob_bar, ...); the table and
 * each knob's own functions are knob.c's and knob_writing.c's (see knob.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "knob_internal.h"

/* ----------------------------------------------------------- parsing */

int
knob_parse_int(const char *option, const char *text, long min, long max, int *out, char *err,
               size_t size)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (end == text || *end != '\0')
        return attn_fail_text(err, size, "%s: '%s' is not a whole number", option, text);
    if (errno == ERANGE || v < min || v > max)
        return attn_fail_text(err, size, "%s %s: give a number from %ld to %ld", option, text, min, max);
    *out = (int)v;
    return 0;
}

int
knob_parse_u64(const char *option, const char *text, uint64_t *out, char *err, size_t size)
{
    char *end;
    unsigned long long v;

    if (text[0] < '0' || text[0] > '9')
        return attn_fail_text(err, size, "%s: '%s' is not a whole number from 0 to 18446744073709551615",
                    option, text);
    errno = 0;
    v = strtoull(text, &end, 10);
    if (*end != '\0')
        return attn_fail_text(err, size, "%s: '%s' is not a whole number", option, text);
    if (errno == ERANGE)
        return attn_fail_text(err, size, "%s %s: beyond 64 bits (the largest seed is 18446744073709551615)",
                    option, text);
    *out = (uint64_t)v;
    return 0;
}

int
knob_parse_real(const char *option, const char *text, double *out, char *err, size_t size)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || *end != '\0')
        return attn_fail_text(err, size, "%s: '%s' is not a number", option, text);
    if (!isfinite(v))
        return attn_fail_text(err, size, "%s: '%s' is not a finite number", option, text);
    *out = v + 0.0; /* -0 is 0 */
    return 0;
}

/* On or off, for options that stand for one of the two. */
bool
knob_is_on(const char *text)
{
    return strcmp(text, "on") == 0;
}

const struct knob *
knob_for_key(int key, int *dir)
{
    if (key == 0)
        return NULL;
    for (int i = 0; i < KNOB_COUNT; i++) {
        if (knob_table[i].key == key || knob_table[i].key_back == key) {
            *dir = knob_table[i].key == key ? 1 : -1;
            return &knob_table[i];
        }
    }
    return NULL;
}

bool
knob_differ_at_most(const struct attention_config *a, const struct attention_config *b,
                    enum knob_recompute r)
{
    struct attention_config x = *a;

    /* Take b's value of every knob allowed to differ; the rest must then be equal. */
    for (int i = 0; i < KNOB_COUNT; i++) {
        const struct knob *k = &knob_table[i];
        if (k->recompute > r)
            continue;
        memcpy((char *)&x + k->field, (const char *)b + k->field, k->field_size);
        memcpy((char *)&x + k->field2, (const char *)b + k->field2, k->field2_size);
    }
    return memcmp(&x, b, sizeof x) == 0;
}

/* ------------------------------------------------------------- the calls */

/* The bool an on/off knob sets. */
static bool *
flag(const struct knob *k, struct attention_config *c)
{
    return (bool *)((char *)c + k->field);
}

static bool
flag_of(const struct knob *k, const struct pipeline *p)
{
    return *(const bool *)((const char *)&p->cfg + k->field);
}

int
knob_parse(const struct knob *k, struct attention_config *c, const char *option, const char *text,
           char *err, size_t size)
{
    if (k->parse != NULL)
        return k->parse(c, option, text, err, size);
    *flag(k, c) = knob_is_on(text);
    return 0;
}

int
knob_step(const struct knob *k, struct attention_config *c, int dir, const struct pipeline *p,
          char *msg, size_t size)
{
    if (k->step != NULL)
        return k->step(c, dir, p, msg, size);
    *flag(k, c) = !*flag(k, c);
    return 1;
}

bool
knob_applies(const struct knob *k, const struct pipeline *p)
{
    const uint64_t bit = (uint64_t)1 << (k - knob_table);

    return knob_is_model(p) ? (KNOB_MODEL_SET & bit) != 0 : (KNOB_WRITING_SET & bit) == 0;
}

void
knob_refusal(const struct knob *k, const struct pipeline *p, char *msg, size_t size)
{
    if (knob_is_model(p))
        snprintf(msg, size,
                 "--%s does not apply to a trained model: its weights fix the attention (the "
                 "knobs that do: m, / and < >, and the writing's seed, j J, y Y and :top-p)",
                 k->options[0].name);
    else
        snprintf(msg, size,
                 "--%s is a trained model's (--model): the book's classes have no vocabulary "
                 "head to write from",
                 k->options[0].name);
}

bool
knob_bar(const struct knob *k, const struct pipeline *p, char *full, char *terse)
{
    if (k->bar_key == NULL || !knob_applies(k, p))
        return false;
    if (k->bar != NULL)
        return k->bar(p, full, terse);
    snprintf(full, KNOB_TEXT_MAX, "%s", k->flag_text[flag_of(k, p) ? 0 : 1]);
    snprintf(terse, KNOB_TEXT_MAX, "%s", full);
    return true;
}

void
knob_said(const struct knob *k, const struct pipeline *p, char *msg, size_t size)
{
    if (k->said != NULL)
        k->said(p, msg, size);
    else
        snprintf(msg, size, "%s", k->flag_text[flag_of(k, p) ? 2 : 3]);
}
