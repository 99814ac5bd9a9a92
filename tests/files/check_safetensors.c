/*
 * check_safetensors.c: reading .safetensors files (src/core/formats/safetensors.c).
 *
 * The files are written here byte by byte from the format's specification
 * (an 8-byte little-endian header length, the JSON header, the data), not
 * by the reader's own code, so a reader that misreads the format fails.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/formats/safetensors.h"
#include "testutil.h"

/* Writes name: the length of header, header, then len bytes of data. */
static const char *
write_st(const char *name, const char *header, const void *data, size_t len)
{
    size_t n = strlen(header);
    size_t total = 8 + n + len;
    char *buf = malloc(total);
    const char *path;

    ck_assert_ptr_nonnull(buf);
    for (int k = 0; k < 8; k++)
        buf[k] = (char)((uint64_t)n >> (8 * k));
    memcpy(buf + 8, header, n);
    if (len > 0)
        memcpy(buf + 8 + n, data, len);
    path = test_write_file(dir, name, buf, total);
    free(buf);
    return path;
}

/* Opens path and expects it refused with a message holding want (and the file's name). */
static void
expect_refused(const char *path, const char *want)
{
    struct safetensors st;
    struct attn_error err;

    ck_assert_int_ne(safetensors_open(&st, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, want) != NULL && strstr(err.msg, path) != NULL,
                  "'%s' not in: %s", want, err.msg);
    ck_assert_int_eq(st.fd, -1); /* nothing left open */
    ck_assert_ptr_null(st.cat.tensors);
}

START_TEST(reads_f32_f16_bf16)
{
    /* a: F32 2x2 (16 bytes), b: F16 4 (8 bytes), c: BF16 2 (4 bytes). */
    const float a[4] = { 1.5f, -2.25f, 0.0f, 3.0e-8f };
    const uint16_t b[4] = { 0x3c00, 0xc000, 0x0001, 0x7c00 }; /* 1, -2, 2^-24, inf */
    const uint16_t c[2] = { 0x3f80, 0xc0a0 };                 /* 1, -5 */
    unsigned char data[28];
    const char *path;
    struct safetensors st;
    struct attn_error err;
    const struct tensor_info *t;
    float v[4];

    memcpy(data, a, 16); /* (the test machine is little-endian, as the format) */
    for (int i = 0; i < 4; i++)
        data[16 + 2 * i] = (unsigned char)(b[i] & 0xff), data[17 + 2 * i] = (unsigned char)(b[i] >> 8);
    for (int i = 0; i < 2; i++)
        data[24 + 2 * i] = (unsigned char)(c[i] & 0xff), data[25 + 2 * i] = (unsigned char)(c[i] >> 8);
    /* The header padded with spaces to a multiple of 8, as writers do: the data is aligned. */
    char header[512] = "{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                       "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[16,24]},"
                       "\"c\":{\"dtype\":\"BF16\",\"shape\":[2,1],\"data_offsets\":[24,28]}}";
    while (strlen(header) % 8 != 0)
        strcat(header, " ");
    path = write_st("ok.safetensors", header, data, sizeof data);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(st.cat.count, 3);

    t = safetensors_find(&st, "a");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(t->shape[0], 2);
    ck_assert_uint_eq(t->numel, 4);
    ck_assert_int_eq(safetensors_read_f32(&st, t, v, &err), ATTN_OK);
    for (int i = 0; i < 4; i++)
        ck_assert(v[i] == a[i]);

    t = safetensors_find(&st, "b");
    ck_assert_int_eq(safetensors_read_f32(&st, t, v, &err), ATTN_OK);
    ck_assert(v[0] == 1.0f && v[1] == -2.0f && v[2] == ldexpf(1.0f, -24) && isinf(v[3]));

    t = safetensors_find(&st, "c");
    ck_assert_int_eq(safetensors_read_f32(&st, t, v, &err), ATTN_OK);
    ck_assert(v[0] == 1.0f && v[1] == -5.0f);
    /* As stored: the bfloat16 patterns themselves (what a bfloat16 model keeps). */
    {
        uint16_t raw[4] = { 0, 0, 0, 0 }; /* (b has 4 values, c 2) */
        ck_assert_int_eq(safetensors_read(&st, t, TENSOR_BF16, raw, &err), ATTN_OK);
        ck_assert(raw[0] == c[0] && raw[1] == c[1]);
        ck_assert_int_eq(safetensors_read(&st, t, TENSOR_F16, raw, &err), ATTN_EPARSE);
        ck_assert_msg(strstr(err.msg, "ok.safetensors: tensor 'c' is BF16, not F16") != NULL, "%s",
                      err.msg);
        ck_assert_int_eq(safetensors_read(&st, safetensors_find(&st, "b"), TENSOR_F16, raw, &err),
                         ATTN_OK);
        ck_assert(memcmp(raw, b, sizeof raw) == 0);
    }

    ck_assert_ptr_null(safetensors_find(&st, "__metadata__"));
    ck_assert_ptr_null(safetensors_find(&st, "d"));
    safetensors_close(&st);
}
END_TEST

/* Files from before 2023 may put F32 at an odd offset: read byte by byte all the same. */
START_TEST(unaligned_f32_is_read)
{
    const float a[3] = { 0.5f, -1.0f, 7.0f };
    const char *header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}";
    const char *path;
    struct safetensors st;
    struct attn_error err;
    float v[3];

    ck_assert_uint_ne((8 + strlen(header)) % 4, 0); /* the data starts unaligned */
    path = write_st("odd.safetensors", header, a, sizeof a);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(safetensors_read_f32(&st, safetensors_find(&st, "a"), v, &err), ATTN_OK);
    ck_assert(v[0] == 0.5f && v[1] == -1.0f && v[2] == 7.0f);
    safetensors_close(&st);
}
END_TEST

/*
 * A file truncated after it was opened (a checkpoint saved over it by a
 * training run) is reported when its tensors are read: with the file
 * mapped, this read was a SIGBUS that killed the program.
 */
START_TEST(truncated_after_open_is_an_error)
{
    float a[1024];
    const char *header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1024],\"data_offsets\":[0,4096]}}";
    const char *path;
    struct safetensors st;
    struct attn_error err;
    float v[1024];

    for (int i = 0; i < 1024; i++)
        a[i] = (float)i;
    path = write_st("shrinks.safetensors", header, a, sizeof a);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(truncate(path, 0), 0);
    ck_assert_int_eq(safetensors_read_f32(&st, safetensors_find(&st, "a"), v, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "truncated or replaced") != NULL,
                  "%s", err.msg);
    safetensors_close(&st);
}
END_TEST

/*
 * The reference implementation sorts the ranges by where they start and
 * end: an empty tensor may start where another starts (or ends).
 */
START_TEST(empty_tensor_shares_a_start)
{
    const unsigned char data[8] = { 0 };
    const char *path;
    struct safetensors st;
    struct attn_error err;

    path = write_st("empty.safetensors",
                    "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                    "\"c\":{\"dtype\":\"F16\",\"shape\":[4,0],\"data_offsets\":[8,8]}}",
                    data, sizeof data);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_uint_eq(safetensors_find(&st, "a")->numel, 0);
    ck_assert_uint_eq(safetensors_find(&st, "c")->numel, 0);
    safetensors_close(&st);
    /* Inside another tensor's bytes it is still refused, as the reference does. */
    path = write_st("inside.safetensors",
                    "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
                    data, sizeof data);
    expect_refused(path, "overlap");
}
END_TEST

/* Every one of many tensors is found by its name (the lookup is a binary search). */
START_TEST(many_tensors_are_found)
{
    enum { N = 5000 };
    size_t cap = (size_t)N * 80 + 16;
    char *header = malloc(cap);
    unsigned char *data = calloc(N, 4);
    size_t at = 0;
    const char *path;
    struct safetensors st;
    struct attn_error err;

    ck_assert_ptr_nonnull(header);
    ck_assert_ptr_nonnull(data);
    header[at++] = '{';
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(header + at, cap - at,
                               "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%d,%d]}",
                               i ? "," : "", (i * 7919) % N, 4 * i, 4 * i + 4);
    header[at++] = '}';
    header[at] = '\0';
    path = write_st("many.safetensors", header, data, (size_t)N * 4);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    for (int i = 0; i < N; i++) {
        char name[16];
        const struct tensor_info *t;
        snprintf(name, sizeof name, "t%d", i);
        t = safetensors_find(&st, name);
        ck_assert_msg(t != NULL && strcmp(t->name, name) == 0, "%s", name);
    }
    ck_assert_ptr_null(safetensors_find(&st, "t"));
    ck_assert_ptr_null(safetensors_find(&st, "t5000"));
    safetensors_close(&st);
    free(header);
    free(data);
}
END_TEST

#ifdef __FLT16_MAX__
__extension__ typedef _Float16 half_t; /* (an extension to ISO C11, as -Wpedantic says) */
#endif

/* Every half converts as the compiler's own _Float16 does: all 65,536 of them. */
START_TEST(every_half_converts_exactly)
{
#ifdef __FLT16_MAX__
    for (uint32_t h = 0; h < 65536; h++) {
        half_t x;
        uint16_t bits = (uint16_t)h;
        float want;
        float got = tensor_f16_to_f32(bits);
        memcpy(&x, &bits, sizeof x);
        want = (float)x;
        if (isnan(want))
            ck_assert_msg(isnan(got), "0x%04x", h);
        else
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "0x%04x: %g, not %g", h,
                          (double)got, (double)want);
    }
#else
    /* Without _Float16, the landmarks: the smallest subnormal, the largest normal, -0. */
    ck_assert(tensor_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    ck_assert(tensor_f16_to_f32(0x7bff) == 65504.0f);
    ck_assert(signbit(tensor_f16_to_f32(0x8000)));
#endif
    ck_assert(tensor_bf16_to_f32(0x4049) == 3.140625f);
}
END_TEST

START_TEST(bad_files_are_named_and_refused)
{
    const unsigned char zeros[64] = { 0 };
    const char *ok_a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
    char header[512];

    expect_refused(test_write_text(dir, "short.safetensors", "abc"), "too short");
    {
        /* A length that claims more than the file has. */
        unsigned char buf[16] = { 0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}' };
        expect_refused(test_write_file(dir, "long.safetensors", (const char *)buf, sizeof buf),
                       "the header is said to be 65535 bytes");
    }
    expect_refused(write_st("json.safetensors", "{\"a\":", zeros, 8), "the header is not JSON: line 1");
    expect_refused(write_st("array.safetensors", "[1,2]", zeros, 0), "not a JSON object");
    snprintf(header, sizeof header, "{%s,%s}", ok_a, ok_a);
    expect_refused(write_st("dup.safetensors", header, zeros, 8), "duplicate");
    expect_refused(write_st("f64.safetensors",
                            "{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}",
                            zeros, 8),
                   "tensor 'a' is F64, which attnscope does not read");
    expect_refused(write_st("past.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],"
                                                "\"data_offsets\":[0,16]}}",
                            zeros, 8),
                   "tensor 'a' ends at byte 16 of the data, past its end (8 bytes)");
    expect_refused(write_st("size.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],"
                                                "\"data_offsets\":[0,8]}}",
                            zeros, 8),
                   "tensor 'a' holds 8 bytes, but 3 F32 values take 12");
    snprintf(header, sizeof header,
             "{%s,\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", ok_a);
    expect_refused(write_st("overlap.safetensors", header, zeros, 12), "overlap");
    snprintf(header, sizeof header,
             "{%s,\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}", ok_a);
    expect_refused(write_st("hole.safetensors", header, zeros, 16),
                   "bytes 8 to 12 of the data belong to no tensor (before 'b')");
    snprintf(header, sizeof header, "{%s}", ok_a);
    expect_refused(write_st("tail.safetensors", header, zeros, 12),
                   "the header does not describe the whole file");
    expect_refused(write_st("fields.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", zeros, 8),
                   "tensor 'a' needs \"dtype\", \"shape\" and \"data_offsets\"");
    expect_refused(write_st("neg.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],"
                                               "\"data_offsets\":[0,8]}}",
                            zeros, 8),
                   "dimension 0 of its shape is not a count");
    expect_refused(write_st("range.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                                                 "\"data_offsets\":[8,0]}}",
                            zeros, 8),
                   "data_offsets [8, 0] is not a range");
    expect_refused(write_st("huge.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,"
                                                "4294967296],\"data_offsets\":[0,8]}}",
                            zeros, 8),
                   "more elements than the file has bytes");
    expect_refused(write_st("meta.safetensors", "{\"__metadata__\":[1]}", zeros, 0),
                   "__metadata__ is not an object");
    {
        struct safetensors st;
        struct attn_error err;
        ck_assert_int_eq(safetensors_open(&st, "/nonexistent/model.safetensors", &err), ATTN_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/model.safetensors: cannot open: No such file"));
        ck_assert_int_eq(safetensors_open(&st, "/tmp", &err), ATTN_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "is a folder, not a file"));
    }
    {
        /* A FIFO is refused at once: open() on it would wait for a writer forever. */
        char fifo[512];
        snprintf(fifo, sizeof fifo, "%s/fifo.safetensors", dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        expect_refused(fifo, "is a FIFO, not a file");
    }
}
END_TEST

static Suite *
safetensors_suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, reads_f32_f16_bf16);
    tcase_add_test(tc, unaligned_f32_is_read);
    tcase_add_test(tc, truncated_after_open_is_an_error);
    tcase_add_test(tc, empty_tensor_shares_a_start);
    tcase_add_test(tc, many_tensors_are_found);
    tcase_add_test(tc, every_half_converts_exactly);
    tcase_add_test(tc, bad_files_are_named_and_refused);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(safetensors_suite)
