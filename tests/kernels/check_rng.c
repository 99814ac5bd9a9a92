/*
 * check_rng.c: the generator against PyTorch, bit for bit.
 *
 * The raw Mersenne Twister vectors and the check values are those of
 * doc/random-numbers.md; tests/golden/rng-vectors.txt holds thousands more
 * draws made by PyTorch itself (see its first line).
 */
#include "config.h"

#include <stdint.h>

#include "attnscope/kernels/rng.h"
#include "testutil.h"

static uint32_t
bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

START_TEST(mt19937_reference_vectors)
{
    struct rng r;
    const uint32_t first[] = { 2991312382u, 3062119789u, 1228959102u,
                               1840268610u, 974319580u, 2967327842u };
    uint32_t v = 0;

    rng_seed(&r, 5489);
    for (int i = 0; i < 10000; i++)
        v = rng_next32(&r);
    ck_assert_uint_eq(v, 4123659995u);

    rng_seed(&r, 123);
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(rng_next32(&r), first[i]);
}
END_TEST

START_TEST(seed_keeps_low_32_bits)
{
    struct rng a;
    struct rng b;

    rng_seed(&a, UINT64_C(0x500000007B));
    rng_seed(&b, 123);
    for (int i = 0; i < 700; i++)
        ck_assert_uint_eq(rng_next32(&a), rng_next32(&b));
}
END_TEST

START_TEST(next64_takes_the_high_word_first)
{
    struct rng a;
    struct rng b;

    rng_seed(&a, 42);
    rng_seed(&b, 42);
    uint64_t hi = rng_next32(&b);
    uint64_t lo = rng_next32(&b);
    ck_assert_uint_eq(rng_next64(&a), (hi << 32) | lo);
}
END_TEST

START_TEST(torch_rand_check_value)
{
    const float want[] = { 0.29611194f, 0.51656228f, 0.25167072f,
                           0.68855679f, 0.07397246f, 0.86652195f };
    struct rng r;
    float got[6];

    rng_seed(&r, 123);
    rng_uniform_f32(&r, got, 6, 0.0, 1.0);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq_tol(got[i], want[i], 1e-8f);
}
END_TEST

START_TEST(linear_check_value)
{
    const float want[] = { 0.31605908f, 0.45680857f, 0.51183486f,
                           -0.16828540f, -0.33787704f, -0.09177387f };
    struct rng r;
    float w[6];

    rng_seed(&r, 789);
    rng_linear_init(&r, w, NULL, 3, 2);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq_tol(w[i], want[i], 1e-8f);
}
END_TEST

/* Reads the next hex word of a golden line as float bits. */
static uint32_t
next_bits(char **cursor)
{
    char *end;
    unsigned long v = strtoul(*cursor, &end, 16);
    ck_assert_msg(end != *cursor, "golden file: expected a hex value at '%.20s'", *cursor);
    *cursor = end;
    return (uint32_t)v;
}

static void
expect_bits(const char *what, int line, const float *got, char **cursor, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t want = next_bits(cursor);
        ck_assert_msg(bits_of(got[i]) == want,
                      "%s (golden line %d), element %zu: %08x (%.9g), PyTorch has %08x", what,
                      line, i, bits_of(got[i]), (double)got[i], want);
    }
}

START_TEST(golden_vectors_from_pytorch)
{
    FILE *f = fopen(test_path("tests/golden/rng-vectors.txt"), "r");
    static char line[1 << 20];
    int lineno = 0;
    int checked = 0;

    ck_assert_msg(f != NULL, "cannot open tests/golden/rng-vectors.txt");
    while (fgets(line, sizeof line, f) != NULL) {
        char kind[16];
        int used = 0;
        char *cursor;
        struct rng r;

        lineno++;
        if (line[0] == '#')
            continue;
        ck_assert(sscanf(line, "%15s%n", kind, &used) == 1);
        cursor = line + used;
        if (strcmp(kind, "uniform") == 0) {
            unsigned long long seed;
            double from, to;
            int n;
            ck_assert(sscanf(cursor, "%llu %lf %lf %d%n", &seed, &from, &to, &n, &used) == 4);
            cursor += used;
            float *got = malloc((size_t)n * sizeof *got);
            rng_seed(&r, seed);
            rng_uniform_f32(&r, got, (size_t)n, from, to);
            expect_bits("uniform_", lineno, got, &cursor, (size_t)n);
            free(got);
            checked += n;
        } else if (strcmp(kind, "linear") == 0) {
            unsigned long long seed;
            int in, out, bias;
            ck_assert(sscanf(cursor, "%llu %d %d %d%n", &seed, &in, &out, &bias, &used) == 4);
            cursor += used;
            float *w = malloc((size_t)in * (size_t)out * sizeof *w);
            float *b = malloc((size_t)out * sizeof *b);
            rng_seed(&r, seed);
            rng_linear_init(&r, w, bias ? b : NULL, in, out);
            expect_bits("Linear weight", lineno, w, &cursor, (size_t)in * (size_t)out);
            if (bias)
                expect_bits("Linear bias", lineno, b, &cursor, (size_t)out);
            free(w);
            free(b);
            checked += in * out + (bias ? out : 0);
        } else if (strcmp(kind, "dropout") == 0) {
            unsigned long long seed;
            double p;
            int n;
            ck_assert(sscanf(cursor, "%llu %lf %d%n", &seed, &p, &n, &used) == 3);
            cursor += used;
            float *x = malloc((size_t)n * sizeof *x);
            float *y = malloc((size_t)n * sizeof *y);
            for (int i = 0; i < n; i++)
                x[i] = (float)((double)(i % 17 - 8) / 7.0);
            rng_seed(&r, seed);
            rng_dropout(&r, RNG_PATH_DEFAULT, p, x, y, NULL, NULL, (size_t)n);
            expect_bits("Dropout", lineno, y, &cursor, (size_t)n);
            free(x);
            free(y);
            checked += n;
        } else if (strcmp(kind, "normal") == 0) {
            /* One seed, then normal_ on tensors of each size in turn: the kept sample carries over. */
            unsigned long long seed;
            double mean, std;
            size_t sizes[16];
            int count = 0;
            ck_assert(sscanf(cursor, "%llu %lf %lf%n", &seed, &mean, &std, &used) == 3);
            cursor += used;
            while (count < 16 && sscanf(cursor, " %zu%n", &sizes[count], &used) == 1) {
                cursor += used;
                count++;
            }
            ck_assert_msg(strncmp(cursor, " --", 3) == 0, "golden line %d: no --", lineno);
            cursor += 3;
            rng_seed(&r, seed);
            for (int k = 0; k < count; k++) {
                float *got = malloc(sizes[k] * sizeof *got);
                rng_normal_f32(&r, got, sizes[k], mean, std);
                expect_bits(sizes[k] >= 16 ? "normal_ (16 or more)" : "normal_ (under 16)", lineno,
                            got, &cursor, sizes[k]);
                free(got);
                checked += (int)sizes[k];
            }
        } else if (strcmp(kind, "normal-digest") == 0) {
            /* Too many values to list: the FNV-1a hash of their bytes. */
            unsigned long long seed, want, hash = 0xcbf29ce484222325ull;
            double mean, std;
            size_t n;
            float *got;
            ck_assert(sscanf(cursor, "%llu %lf %lf %zu -- %llx", &seed, &mean, &std, &n, &want) ==
                      5);
            got = malloc(n * sizeof *got);
            ck_assert_ptr_nonnull(got);
            rng_seed(&r, seed);
            rng_normal_f32(&r, got, n, mean, std);
            for (size_t i = 0; i < n; i++) {
                uint32_t b;
                memcpy(&b, &got[i], sizeof b);
                for (int byte = 0; byte < 4; byte++)
                    hash = (hash ^ ((b >> (8 * byte)) & 0xffu)) * 0x100000001b3ull;
            }
            ck_assert_msg(hash == want, "golden line %d: %zu normal_ values hash to %016llx, "
                                        "PyTorch's to %016llx",
                          lineno, n, hash, want);
            free(got);
            checked += (int)n;
        } else {
            ck_abort_msg("golden line %d: unknown kind '%s'", lineno, kind);
        }
    }
    fclose(f);
    ck_assert_msg(checked > 5000, "only %d golden values were checked", checked);
}
END_TEST

static void
dropout_ones(enum rng_path path, float out[36])
{
    float ones[36];
    struct rng r;

    for (int i = 0; i < 36; i++)
        ones[i] = 1.0f;
    rng_seed(&r, 123);
    rng_dropout(&r, path, 0.5, ones, out, NULL, NULL, 36);
}

START_TEST(book_dropout_default_path)
{
    /* The book's notebook: seed 123, Dropout(0.5)(torch.ones(6, 6)). */
    const float want[36] = { 2, 2, 0, 2, 2, 0, 0, 0, 0, 2, 0, 2, 2, 2, 2, 2, 0, 2,
                             0, 2, 2, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 2, 2, 2, 0 };
    float got[36];
    struct matrix m = matrix_view(got, 6, 6);

    dropout_ones(RNG_PATH_DEFAULT, got);
    expect_matrix_near(&m, want, 6, 6, 0.0, "Dropout(0.5)(ones), default path");
}
END_TEST

START_TEST(book_dropout_mkl_path)
{
    /* Seed document 000, printed by an MKL build: all six rows. */
    const float want[36] = { 2, 2, 2, 2, 2, 2, 0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0,
                             2, 2, 0, 0, 0, 2, 2, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, 0 };
    float got[36];
    struct matrix m = matrix_view(got, 6, 6);

    dropout_ones(RNG_PATH_MKL, got);
    expect_matrix_near(&m, want, 6, 6, 0.0, "Dropout(0.5)(ones), MKL path");
}
END_TEST

START_TEST(mkl_path_draws_once_per_tensor)
{
    struct rng a;
    struct rng b;
    unsigned char keep[100];

    rng_seed(&a, 9);
    rng_seed(&b, 9);
    rng_bernoulli(&a, RNG_PATH_MKL, 0.5, keep, NULL, 100);
    (void)rng_next32(&b);
    ck_assert_uint_eq(rng_next32(&a), rng_next32(&b));

    /* The default path takes two 32-bit draws per element. */
    rng_seed(&a, 9);
    rng_seed(&b, 9);
    rng_bernoulli(&a, RNG_PATH_DEFAULT, 0.5, keep, NULL, 100);
    for (int i = 0; i < 200; i++)
        (void)rng_next32(&b);
    ck_assert_uint_eq(rng_next32(&a), rng_next32(&b));
}
END_TEST

START_TEST(dropout_skip_matches_a_real_draw)
{
    for (int path = RNG_PATH_DEFAULT; path <= RNG_PATH_MKL; path++) {
        struct rng a;
        struct rng b;
        float x[50];
        float y[50];

        for (int i = 0; i < 50; i++)
            x[i] = 1.0f;
        rng_seed(&a, 3);
        rng_seed(&b, 3);
        rng_dropout(&a, (enum rng_path)path, 0.3, x, y, NULL, NULL, 50);
        rng_dropout_skip(&b, (enum rng_path)path, 50);
        ck_assert_uint_eq(rng_next32(&a), rng_next32(&b));
    }
}
END_TEST

START_TEST(dropout_multiplies_by_the_rounded_reciprocal)
{
    /* For p = 0.1, x * fl(1/fl(0.9)) and x / 0.9 differ in the last bit for some x. */
    const float k = rng_dropout_scale(0.1);
    int differ = 0;

    ck_assert_uint_eq(bits_of(k), bits_of(1.0f / 0.9f));
    for (int i = 1; i < 1000; i++) {
        float x = (float)i / 997.0f;
        differ += bits_of(x * k) != bits_of((float)(x / 0.9));
    }
    ck_assert_msg(differ > 0, "the test should exercise inputs where the two roundings differ");
}
END_TEST

START_TEST(bernoulli_draws_explain_each_decision)
{
    for (int path = RNG_PATH_DEFAULT; path <= RNG_PATH_MKL; path++) {
        struct rng r;
        unsigned char keep[64];
        float draw[64];
        int kept = 0;

        rng_seed(&r, 11);
        rng_bernoulli(&r, (enum rng_path)path, 0.7, keep, draw, 64);
        for (int i = 0; i < 64; i++) {
            ck_assert(draw[i] >= 0.0f && draw[i] < 1.0f);
            ck_assert_int_eq(keep[i], (double)draw[i] < 0.7);
            kept += keep[i];
        }
        ck_assert(kept > 20 && kept < 64);
    }
}
END_TEST

static Suite *
rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("pytorch");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, mt19937_reference_vectors);
    tcase_add_test(tc, seed_keeps_low_32_bits);
    tcase_add_test(tc, next64_takes_the_high_word_first);
    tcase_add_test(tc, torch_rand_check_value);
    tcase_add_test(tc, linear_check_value);
    tcase_add_test(tc, golden_vectors_from_pytorch);
    tcase_add_test(tc, book_dropout_default_path);
    tcase_add_test(tc, book_dropout_mkl_path);
    tcase_add_test(tc, mkl_path_draws_once_per_tensor);
    tcase_add_test(tc, dropout_skip_matches_a_real_draw);
    tcase_add_test(tc, dropout_multiplies_by_the_rounded_reciprocal);
    tcase_add_test(tc, bernoulli_draws_explain_each_decision);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(rng_suite)
