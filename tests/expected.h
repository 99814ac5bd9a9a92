/*
 * expected.h: reading the expected.txt files the oracle scripts write
 * (tests/oracle/): lines of a key, an optional layer number and numbers,
 * grouped in cases by "case NAME ..." lines.
 */
#ifndef ATTNSCOPE_TESTS_EXPECTED_H
#define ATTNSCOPE_TESTS_EXPECTED_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

struct expected {
    char *text;
};

static inline void
expected_load(struct expected *e, const char *path)
{
    FILE *f = fopen(path, "r");
    long len;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    e->text = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(e->text);
    ck_assert(fread(e->text, 1, (size_t)len, f) == (size_t)len);
    e->text[len] = '\0';
    fclose(f);
}

/*
 * The numbers of the first line "key [layer] ..." from `from` on, before
 * the next "case" line (layer -1: the line has no layer number).
 */
static inline const char *
line_of(const char *from, const char *key, int layer)
{
    const char *at = from;
    size_t kl = strlen(key);

    while (at != NULL && *at) {
        if (at != from && strncmp(at, "case ", 5) == 0)
            break;
        if (strncmp(at, key, kl) == 0 && at[kl] == ' ') {
            char *end;
            long l = layer >= 0 ? strtol(at + kl, &end, 10) : -1;
            if (layer < 0)
                return at + kl;
            if (l == layer)
                return end;
        }
        at = strchr(at, '\n');
        at = at != NULL ? at + 1 : NULL;
    }
    ck_abort_msg("expected.txt has no line '%s %d'", key, layer);
    return NULL;
}

static inline double
next_number(const char **at)
{
    char *end;
    double v = strtod(*at, &end);

    ck_assert_msg(end != *at, "a number was expected near '%.20s'", *at);
    *at = end;
    return v;
}

/* |got - want| <= tol * max(1, |want|) for count values (an infinity: the same). */
static inline void
compare(const char *what, const float *got, const char *want, size_t count, double tol)
{
    for (size_t i = 0; i < count; i++) {
        double w = next_number(&want);
        double scale = fabs(w) > 1.0 ? fabs(w) : 1.0;
        if (isinf(w)) { /* (a masked score: -inf on both sides) */
            ck_assert_msg((double)got[i] == w, "%s[%zu]: %.9g, PyTorch %.9g", what, i,
                          (double)got[i], w);
            continue;
        }
        ck_assert_msg(fabs((double)got[i] - w) <= tol * scale, "%s[%zu]: %.9g, PyTorch %.9g", what,
                      i, (double)got[i], w);
    }
}

/*
 * compare, the scale of each row of `row` values its largest finite |want|
 * (at least 1): for the scores, dot products whose rounding grows with
 * their terms, not with their sum (a score of 0.05 among scores of 12 is
 * the difference of terms the size of the others).
 */
static inline void
compare_rows(const char *what, const float *got, const char *want, size_t count, size_t row,
             double tol)
{
    for (size_t r0 = 0; r0 < count; r0 += row) {
        const char *at = want;
        double scale = 1.0;
        for (size_t i = r0; i < r0 + row && i < count; i++) {
            double w = next_number(&at);
            if (!isinf(w) && fabs(w) > scale)
                scale = fabs(w);
        }
        for (size_t i = r0; i < r0 + row && i < count; i++) {
            double w = next_number(&want);
            if (isinf(w))
                ck_assert_msg((double)got[i] == w, "%s[%zu]: %.9g, PyTorch %.9g", what, i,
                              (double)got[i], w);
            else
                ck_assert_msg(fabs((double)got[i] - w) <= tol * scale,
                              "%s[%zu]: %.9g, PyTorch %.9g (its row's largest %.9g)", what, i,
                              (double)got[i], w, scale);
        }
    }
}

#endif
