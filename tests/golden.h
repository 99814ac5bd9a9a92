/*
 * golden.h: comparing text with a golden file, for the renderer's tests.
 *
 * With GENERATE=1 in the environment the golden file is (re)written from the
 * text instead, and the test passes; review the diff before committing.
 * Golden files live in tests/golden/ and start with a line saying how they
 * were made.
 */
#ifndef ATTNSCOPE_TESTS_GOLDEN_H
#define ATTNSCOPE_TESTS_GOLDEN_H

#include "testutil.h"

static inline void
golden_compare(const char *name, const char *text)
{
    char path[4200];
    const char *gen = getenv("GENERATE");
    const char *header =
        "# attnscope golden text: written by the tests with GENERATE=1 (see tests/golden.h)\n";
    FILE *f;
    char *want;
    long len;

    snprintf(path, sizeof path, "%s", test_path(name));
    if (gen != NULL && strcmp(gen, "1") == 0) {
        f = fopen(path, "w");
        ck_assert_msg(f != NULL, "cannot write %s", path);
        fputs(header, f);
        fputs(text, f);
        fclose(f);
        return;
    }
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s is missing: run GENERATE=1 make check and review it", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    want = calloc(1, (size_t)len + 1);
    ck_assert(fread(want, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    ck_assert_msg(strncmp(want, header, strlen(header)) == 0, "%s: no header line", path);
    if (strcmp(want + strlen(header), text) != 0) {
        /* Show the first line that differs. */
        const char *a = want + strlen(header);
        const char *b = text;
        int line = 2;
        while (*a && *a == *b) {
            if (*a == '\n')
                line++;
            a++;
            b++;
        }
        ck_abort_msg("%s differs at line %d:\n golden: %.80s\n actual: %.80s", path, line, a, b);
    }
    free(want);
}

#endif
