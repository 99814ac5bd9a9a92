/*
 * check_gguf.c: GGUF files (src/core/formats/gguf.c, quants.c): every ggml
 * type attnscope reads, dequantized to the bit as llama.cpp's gguf-py does
 * (tests/fixtures/gguf/quants.gguf and quants.expected, written by
 * tests/oracle/gguf_fixtures.py with llama.cpp's own writer); damaged and
 * hostile files refused in one line naming the file and what is wrong.
 */
#include "config.h"

#include <string.h>

#include "attnscope/files/fileio.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensors.h"
#include "gguf_writer.h"
#include "testutil.h"

/* Every tensor of quants.gguf read as float32: the same bits as gguf-py's dequantization. */
static void
check_quants_gguf(void)
{
    static const char *const names[] = { "F32",  "F16",  "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
                                          "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "MXFP4" };
    struct tensor_source src;
    struct attn_error err;
    char *expected;
    size_t len;
    float got[2 * 512];
    char mix[256];

    ck_assert_msg(tensors_open(&src, test_path("tests/fixtures/gguf/quants.gguf"), &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_str_eq(src.format, "GGUF");
    ck_assert_ptr_nonnull(tensors_gguf(&src));
    ck_assert_int_eq(fileio_read_all(test_path("tests/fixtures/gguf/quants.expected"), 1 << 20,
                                     &expected, &len, &err),
                     ATTN_OK);
    ck_assert_uint_eq(len, sizeof names / sizeof names[0] * sizeof got);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const struct tensor_info *t = tensors_find(&src, names[k]);
        ck_assert_msg(t != NULL, "%s", names[k]);
        ck_assert_str_eq(tensor_dtype_name(t->dtype), names[k]);
        ck_assert_int_eq(t->ndim, 2);
        ck_assert_int_eq(t->shape[0], 2); /* PyTorch's order: rows, then the row's values */
        ck_assert_int_eq(t->shape[1], 512);
        ck_assert_msg(tensors_read_f32(&src, t, got, &err) == ATTN_OK, "%s", err.msg);
        for (int i = 0; i < 2 * 512; i++) {
            float want;
            memcpy(&want, expected + k * sizeof got + (size_t)i * 4, 4);
            ck_assert_msg(memcmp(&want, &got[i], 4) == 0, "%s[%d] = %.9g, gguf-py %.9g", names[k],
                          i, (double)got[i], (double)want);
        }
    }
    ck_assert_str_eq(gguf_type_mix(tensors_gguf(&src), mix, sizeof mix),
                     "F32 1 tensor, F16 1, Q4_0 1, Q4_1 1, Q5_0 1, Q5_1 1, Q8_0 1, Q2_K 1, Q3_K 1, "
                     "Q4_K 1, Q5_K 1, Q6_K 1, BF16 1, MXFP4 1");
    free(expected);
    tensors_close(&src);
}

/* On every instruction set: the common types have vector code of their own. */
START_TEST(every_type_dequantizes_as_ggml_does)
{
    const enum cpu_isa best = cpu_isa();

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        check_quants_gguf();
    }
    cpu_isa_limit(best);
}
END_TEST

/*
 * What the cell panel says of a quantized weight (quant_explain: its
 * scale, minimum and integer) makes the weight: scale x level - min (or +
 * min, or no min), rounded as the dequantizer rounds it, for every value of
 * every block of every type in quants.gguf.
 */
START_TEST(every_weight_is_its_blocks_scale_times_its_integer)
{
    struct gguf g;
    struct attn_error err;
    unsigned char raw[2 * 512 * 2];
    float got[2 * 512];

    ck_assert_msg(gguf_open(&g, test_path("tests/fixtures/gguf/quants.gguf"), &err) == ATTN_OK,
                  "%s", err.msg);
    for (int q = 0; q < QUANT_TYPES; q++) {
        const struct tensor_info *t = tensor_catalogue_find(&g.cat, quant_name((enum quant_type)q));
        const int per = quant_block_values((enum quant_type)q);
        const size_t bytes = quant_block_bytes((enum quant_type)q);
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_le(t->end - t->begin, sizeof raw);
        ck_assert_int_eq(gguf_read(&g, t, t->dtype, raw, &err), ATTN_OK); /* (the blocks as kept) */
        ck_assert_int_eq(gguf_read(&g, t, TENSOR_F32, got, &err), ATTN_OK);
        for (int i = 0; i < 2 * 512; i++) {
            float scale, min, want;
            int level;
            const bool has_min = quant_explain((enum quant_type)q, raw + (size_t)(i / per) * bytes,
                                               i % per, &scale, &min, &level);
            want = scale * (float)level;
            if (has_min)
                want = q == QUANT_Q4_1 || q == QUANT_Q5_1 ? want + min : want - min;
            ck_assert_msg(memcmp(&want, &got[i], sizeof want) == 0, "%s[%d]: %g x %d, min %g: %g, not %g",
                          quant_name((enum quant_type)q), i, (double)scale, level, (double)min,
                          (double)want, (double)got[i]);
        }
    }
    gguf_close(&g);
}
END_TEST

/* Metadata of every value type, as llama.cpp's writer writes it (meta.gguf), read back. */
START_TEST(metadata_of_every_type)
{
    struct gguf g;
    struct attn_error err;
    int64_t i;
    double f;
    const struct gguf_kv *kv;
    float a[64];

    ck_assert_msg(gguf_open(&g, test_path("tests/fixtures/gguf/meta.gguf"), &err) == ATTN_OK, "%s",
                  err.msg);
    ck_assert_str_eq(gguf_string(&g, "general.architecture"), "qwen3");
    ck_assert(gguf_int(&g, "t.u8", &i) && i == 200);
    ck_assert(gguf_int(&g, "t.i8", &i) && i == -100);
    ck_assert(gguf_int(&g, "t.u16", &i) && i == 60000);
    ck_assert(gguf_int(&g, "t.i16", &i) && i == -30000);
    ck_assert(gguf_int(&g, "t.u32", &i) && i == 4000000000LL);
    ck_assert(gguf_int(&g, "t.i32", &i) && i == -2000000000LL);
    ck_assert(gguf_float(&g, "t.f32", &f) && f == (double)0.1f);
    ck_assert(gguf_float(&g, "t.f64", &f) && f == 0.1);
    ck_assert(gguf_int(&g, "t.bool", &i) && i == 1);
    ck_assert(!gguf_int(&g, "t.u64", &i)); /* 2^63 + 5: no int64 holds it */
    ck_assert_uint_eq(gguf_find(&g, "t.u64")->u, ((uint64_t)1 << 63) + 5);
    ck_assert(gguf_int(&g, "t.i64", &i) && i == -((int64_t)1 << 62));
    ck_assert_str_eq(gguf_string(&g, "t.string"), "na\xc3\xafve \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e");
    kv = gguf_find(&g, "t.strings");
    ck_assert(kv != NULL && kv->type == GGUF_ARRAY && kv->item == GGUF_STRING && kv->count == 4);
    ck_assert_str_eq(kv->strs[2], "\xc4\xa0the");
    ck_assert_uint_eq(kv->lens[1], 0);
    kv = gguf_find(&g, "t.ints");
    ck_assert(kv != NULL && kv->count == 3 && kv->ints[1] == -2);
    kv = gguf_find(&g, "t.floats");
    ck_assert(kv != NULL && kv->count == 2 && kv->floats[1] == -1.25);
    ck_assert_uint_eq(g.alignment, 64);
    ck_assert_uint_eq(g.data_start % 64, 0);
    ck_assert_int_eq(gguf_read(&g, tensor_catalogue_find(&g.cat, "a"), TENSOR_F32, a, &err), ATTN_OK);
    for (int k = 0; k < 64; k++)
        ck_assert(a[k] == (float)k);
    gguf_close(&g);
}
END_TEST

/* path's GGUF open fails with a message holding want (and the file's name). */
static void
refused(const char *path, const char *want)
{
    struct gguf g;
    struct attn_error err;

    ck_assert_msg(gguf_open(&g, path, &err) != ATTN_OK, "%s opened", want);
    ck_assert_msg(strstr(err.msg, want) != NULL && strstr(err.msg, path) != NULL &&
                      strchr(err.msg, '\n') == NULL,
                  "'%s' lacks '%s'", err.msg, want);
}

/* A valid file: two keys and one F32 tensor of 4 x 8 (its data 128 bytes). */
static void
valid(struct gw *w)
{
    gw_header(w, 1, 2);
    gw_kv_str(w, "general.architecture", "llama");
    gw_kv_u32(w, "llama.block_count", 1);
    gw_tensor(w, "t", 8, 4, 0, 0);
    gw_data(w, 128);
}

START_TEST(damaged_and_hostile_files_are_refused_by_name)
{
    const char *tmp = test_tmpdir();
    char path[512];
    struct gw w = { 0 };
    struct gguf g;
    struct attn_error err;

    snprintf(path, sizeof path, "%s/m.gguf", tmp);
    valid(&w);
    gw_save(&w, path);
    ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_str_eq(gguf_string(&g, "general.architecture"), "llama");
    {
        int64_t v = 0;
        ck_assert(gguf_int(&g, "llama.block_count", &v) && v == 1);
        ck_assert(!gguf_int(&g, "general.architecture", &v));
    }
    gguf_close(&g);

    /* Truncated: its tensor's bytes past the end. */
    valid(&w);
    w.len -= 1;
    gw_save(&w, path);
    refused(path, "tensor 't' (bytes 0-128 of the data) runs past the end of the file");
    /* Counts past the file. */
    gw_header(&w, 1000000, 1);
    gw_save(&w, path);
    refused(path, "says 1000000 tensors, more than the file holds");
    gw_header(&w, 0, (uint64_t)1 << 40);
    gw_save(&w, path);
    refused(path, "says 1099511627776 keys, more than the file holds");
    /* A string of 2^40 bytes. */
    gw_header(&w, 0, 1);
    gw_str(&w, "k");
    gw_u32(&w, 8);
    gw_u64(&w, (uint64_t)1 << 40);
    gw_save(&w, path);
    refused(path, "a string of 1099511627776 bytes at byte");
    /* A key of 1 MB. */
    {
        char *key = malloc(1 << 20);
        ck_assert_ptr_nonnull(key);
        memset(key, 'k', (1 << 20) - 1);
        key[(1 << 20) - 1] = '\0';
        gw_header(&w, 0, 1);
        gw_kv_u32(&w, key, 1);
        gw_save(&w, path);
        refused(path, "a key of 1048575 bytes at byte 24 (at most 65535)");
        free(key);
    }
    /* Nested arrays; an array longer than the file; a key twice. */
    gw_header(&w, 0, 1);
    gw_str(&w, "a");
    gw_u32(&w, 9);
    gw_u32(&w, 9);
    gw_u64(&w, 1);
    gw_save(&w, path);
    refused(path, "key 'a' is an array of arrays");
    gw_header(&w, 0, 1);
    gw_str(&w, "a");
    gw_u32(&w, 9);
    gw_u32(&w, 4);
    gw_u64(&w, 1000);
    gw_save(&w, path);
    refused(path, "key 'a' says 1000 items, more than the rest of the file holds");
    gw_header(&w, 0, 2);
    gw_kv_u32(&w, "k", 1);
    gw_kv_u32(&w, "k", 2);
    gw_save(&w, path);
    refused(path, "key 'k' is given twice");
    /* Two tensors over the same bytes; one not at the alignment; a row not whole blocks. */
    gw_header(&w, 2, 0);
    gw_tensor(&w, "a", 8, 4, 0, 0);
    gw_tensor(&w, "b", 8, 4, 0, 64);
    gw_data(&w, 256);
    gw_save(&w, path);
    refused(path, "tensors 'a' and 'b' overlap (bytes 0-128 and 64-192 of the data)");
    gw_header(&w, 1, 0);
    gw_tensor(&w, "a", 8, 4, 0, 8);
    gw_data(&w, 256);
    gw_save(&w, path);
    refused(path, "tensor 'a' starts at byte 8 of the data, not a multiple of the alignment 32");
    gw_header(&w, 1, 0);
    gw_tensor(&w, "q", 48, 1, 8, 0);
    gw_data(&w, 256);
    gw_save(&w, path);
    refused(path, "tensor 'q' is Q8_0 with rows of 48 values: not whole blocks of 32");
    /* Not GGUF, an old version. */
    gw_bytes(&w, "GGUX\003\0\0\0", 8);
    gw_save(&w, path);
    refused(path, "not a GGUF file");
    gw_bytes(&w, "GGUF\001\0\0\0", 8);
    gw_u64(&w, 0);
    gw_u64(&w, 0);
    gw_save(&w, path);
    refused(path, "GGUF version 1 (attnscope reads 2 and 3)");
    /* A type attnscope does not dequantize: listed, refused by its name when read. */
    gw_header(&w, 1, 0);
    gw_tensor(&w, "iq", 256, 1, 16, 0);
    gw_data(&w, 66);
    gw_save(&w, path);
    ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
    {
        float out[256];
        const struct tensor_info *t = tensor_catalogue_find(&g.cat, "iq");
        ck_assert_ptr_nonnull(t);
        ck_assert_int_ne(gguf_read(&g, t, TENSOR_F32, out, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, "tensor 'iq' is IQ2_XXS, which attnscope does not dequantize") !=
                          NULL,
                      "%s", err.msg);
    }
    gguf_close(&g);
    test_remove_dir(tmp);
}
END_TEST

static Suite *
gguf_suite(void)
{
    Suite *s = suite_create("gguf");
    TCase *t = tcase_create("files");

    tcase_set_timeout(t, 60);
    tcase_add_test(t, every_type_dequantizes_as_ggml_does);
    tcase_add_test(t, metadata_of_every_type);
    tcase_add_test(t, every_weight_is_its_blocks_scale_times_its_integer);
    tcase_add_test(t, damaged_and_hostile_files_are_refused_by_name);
    suite_add_tcase(s, t);
    return s;
}

TEST_MAIN(gguf_suite)
