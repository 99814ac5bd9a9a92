/*
 * check_safetensors.c: reading .safetensors files (src/core/safetensors.c).
 *
 * The files are written here byte by byte from the format's specification
 * (an 8-byte little-endian header length, the JSON header, the data), not
 * by the reader's own code, so a reader that misreads the format fails.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "attnscope/safetensors.h"
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
    ck_assert_ptr_null(st.map); /* nothing left mapped */
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
    const struct st_tensor *t;
    const float *v;
    float *copy;

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
    ck_assert_int_eq(st.count, 3);

    t = safetensors_find(&st, "a");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(t->shape[0], 2);
    ck_assert_uint_eq(t->numel, 4);
    v = safetensors_f32(&st, t, &copy, &err);
    ck_assert_ptr_null(copy); /* F32 and aligned: used where it is mapped */
    ck_assert(v >= (const float *)(const void *)st.map &&
              (const unsigned char *)v < st.map + st.map_size);
    for (int i = 0; i < 4; i++)
        ck_assert(v[i] == a[i]);

    t = safetensors_find(&st, "b");
    v = safetensors_f32(&st, t, &copy, &err);
    ck_assert_ptr_nonnull(copy);
    ck_assert(v[0] == 1.0f && v[1] == -2.0f && v[2] == ldexpf(1.0f, -24) && isinf(v[3]));
    free(copy);

    t = safetensors_find(&st, "c");
    v = safetensors_f32(&st, t, &copy, &err);
    ck_assert(v[0] == 1.0f && v[1] == -5.0f);
    free(copy);

    ck_assert_ptr_null(safetensors_find(&st, "__metadata__"));
    ck_assert_ptr_null(safetensors_find(&st, "d"));
    safetensors_close(&st);
}
END_TEST

/* Files from before 2023 may put F32 at an odd address: copied, never dereferenced there. */
START_TEST(unaligned_f32_is_copied)
{
    const float a[3] = { 0.5f, -1.0f, 7.0f };
    const char *header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}";
    const char *path;
    struct safetensors st;
    struct attn_error err;
    const float *v;
    float *copy;

    ck_assert_uint_ne((8 + strlen(header)) % 4, 0); /* the data starts unaligned */
    path = write_st("odd.safetensors", header, a, sizeof a);
    ck_assert_msg(safetensors_open(&st, path, &err) == ATTN_OK, "%s", err.msg);
    v = safetensors_f32(&st, safetensors_find(&st, "a"), &copy, &err);
    ck_assert_ptr_nonnull(copy);
    ck_assert(v[0] == 0.5f && v[1] == -1.0f && v[2] == 7.0f);
    free(copy);
    safetensors_close(&st);
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
        float got = safetensors_f16_to_f32(bits);
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
    ck_assert(safetensors_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    ck_assert(safetensors_f16_to_f32(0x7bff) == 65504.0f);
    ck_assert(signbit(safetensors_f16_to_f32(0x8000)));
#endif
    ck_assert(safetensors_bf16_to_f32(0x4049) == 3.140625f);
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
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/model.safetensors: No such file"));
        ck_assert_int_eq(safetensors_open(&st, "/tmp", &err), ATTN_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
    }
}
END_TEST

static Suite *
safetensors_suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, reads_f32_f16_bf16);
    tcase_add_test(tc, unaligned_f32_is_copied);
    tcase_add_test(tc, every_half_converts_exactly);
    tcase_add_test(tc, bad_files_are_named_and_refused);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(safetensors_suite)
