/*
 * testutil.h: what every Check program of attnscope shares.
 *
 * Each test program is one module's suite; TEST_MAIN runs it and exits
 * non-zero if any test failed.  Fixtures are found through $top_srcdir,
 * which tests/Makefile.inc exports.
 */
#ifndef ATTNSCOPE_TESTUTIL_H
#define ATTNSCOPE_TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attnscope/kernels/matrix.h"

#define TEST_MAIN(make_suite)                                 \
    int main(void)                                            \
    {                                                         \
        SRunner *sr = srunner_create(make_suite());           \
        int failed;                                           \
        srunner_run_all(sr, CK_NORMAL);                       \
        failed = srunner_ntests_failed(sr);                   \
        srunner_free(sr);                                     \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;     \
    }

/* $top_srcdir/rel (or ./rel when run by hand from the top of the tree). */
static inline const char *
test_path(const char *rel)
{
    static char buf[4096];
    const char *top = getenv("top_srcdir");

    snprintf(buf, sizeof buf, "%s/%s", top != NULL ? top : ".", rel);
    return buf;
}

/*
 * Fails unless every element of m is within tol of ref (rows x cols, row-major).
 * Infinities must match exactly; NaN matches only NaN.
 */
#define expect_matrix_near(m, ref, nrows, ncols, tol, what)                                  \
    do {                                                                                     \
        const struct matrix *em_ = (m);                                                      \
        const float *er_ = (ref);                                                            \
        ck_assert_msg(em_->rows == (nrows) && em_->cols == (ncols),                          \
                      "%s: shape %d x %d, expected %d x %d", (what), em_->rows, em_->cols,   \
                      (int)(nrows), (int)(ncols));                                           \
        for (int ei_ = 0; ei_ < (nrows); ei_++)                                              \
            for (int ej_ = 0; ej_ < (ncols); ej_++) {                                        \
                float got_ = MAT_AT(em_, ei_, ej_);                                          \
                float want_ = er_[ei_ * (ncols) + ej_];                                      \
                int ok_ = (isnan(want_) && isnan(got_)) ||                                   \
                          (isinf(want_) && got_ == want_) ||                                 \
                          (isfinite(want_) && fabs((double)got_ - (double)want_) <= (tol));  \
                ck_assert_msg(ok_, "%s[%d][%d] = %.9g, expected %.9g (tolerance %g)",        \
                              (what), ei_, ej_, (double)got_, (double)want_, (double)(tol)); \
            }                                                                                \
    } while (0)

/*
 * A fresh folder under $TMPDIR (or /tmp) for one test, and a file in it
 * holding text.  Check runs each test in its own process, so the static
 * buffers are never shared.
 */
static inline const char *
test_tmpdir(void)
{
    static char dir[256];
    const char *base = getenv("TMPDIR");

    snprintf(dir, sizeof dir, "%s/attnscope-test-XXXXXX", base != NULL ? base : "/tmp");
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp failed");
    return dir;
}

static inline const char *
test_write_file(const char *dir, const char *name, const char *text, size_t len)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert(fwrite(text, 1, len, f) == len);
    fclose(f);
    return path;
}

static inline int
test_remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/*
 * How many entries the folder at path has, hidden ones included, and how
 * many of them are hidden (hidden may be NULL); -1 when it cannot be opened.
 */
static inline int
test_count_entries(const char *path, int *hidden)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    int h = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        h += e->d_name[0] == '.';
        n++;
    }
    closedir(d);
    if (hidden != NULL)
        *hidden = h;
    return n;
}

/* The address space this process uses now (/proc/self/statm's first field), for RLIMIT_AS tests. */
static inline rlim_t
test_address_space(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

/* Removes a folder test_tmpdir() made, and everything in it. */
static inline void
test_remove_dir(const char *dir)
{
    nftw(dir, test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define test_write_text(dir, name, text) test_write_file((dir), (name), (text), strlen(text))

/* A checked fixture giving each test a fresh folder `dir`, removed after it. */
static const char *dir;

static inline void
test_tmpdir_setup(void)
{
    dir = test_tmpdir();
}

static inline void
test_tmpdir_teardown(void)
{
    test_remove_dir(dir);
}

#endif
