/*
 * check_formats.c: one model in every file format attnscope reads
 * (src/core/formats/: tensors.c and its readers), and damaged files of each.
 *
 * tests/fixtures/formats/ holds a small GPT-2 written by real writers
 * (tests/oracle/format_fixtures.py): as Hugging Face's safetensors, as
 * OpenAI's TensorFlow checkpoint (an index written by LevelDB's own
 * TableBuilder, plain and Snappy-compressed, in one data file and in
 * three, and in half precision; as llama.cpp's GGUF, tests/oracle/gguf_models.py), and
 * expected.txt, PyTorch's forward of
 * it with every stage of every layer.  Each format must agree with PyTorch
 * to 1e-5 at every stage, and the float32 files of the one model must give
 * bit-identical stages.
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnscope/architectures/gpt2.h"
#include "attnscope/models/model.h"
#include "attnscope/files/crc32c.h"
#include "attnscope/formats/pickle.h"
#include "attnscope/formats/sstable.h"
#include "attnscope/formats/torch_zip.h"
#include "attnscope/formats/tensors.h"
#include "attnscope/formats/tf_checkpoint.h"
#include "expected.h"
#include "pth_writer.h"
#include "testutil.h"

#define FORMATS "tests/fixtures/formats"

/* The stages of a layer as expected.txt names them, and whether they are (H, n, n) or (n, F). */
static const struct {
    const char *name;
    size_t offset;
    char shape; /* 'c': (n, C), 'h': (H, n, n), 'f': (n, F) */
} stages[] = {
    { "norm1", offsetof(struct decoder_layer_stages, norm1), 'c' },
    { "q", offsetof(struct decoder_layer_stages, q), 'c' },
    { "k", offsetof(struct decoder_layer_stages, k), 'c' },
    { "v", offsetof(struct decoder_layer_stages, v), 'c' },
    { "scores", offsetof(struct decoder_layer_stages, scores), 'h' },
    { "weights", offsetof(struct decoder_layer_stages, weights), 'h' },
    { "context", offsetof(struct decoder_layer_stages, context), 'c' },
    { "attn", offsetof(struct decoder_layer_stages, attn), 'c' },
    { "resid1", offsetof(struct decoder_layer_stages, resid1), 'c' },
    { "norm2", offsetof(struct decoder_layer_stages, norm2), 'c' },
    { "up", offsetof(struct decoder_layer_stages, up), 'f' },
    { "act", offsetof(struct decoder_layer_stages, act), 'f' },
    { "mlp", offsetof(struct decoder_layer_stages, mlp), 'c' },
    { "resid2", offsetof(struct decoder_layer_stages, resid2), 'c' },
};

static const float *
stage_of(const struct decoder_layer_stages *s, int k)
{
    return *(float *const *)(const void *)((const char *)s + stages[k].offset);
}

static size_t
stage_size(const struct decoder_config *c, int n, int k)
{
    const size_t nn = (size_t)n;

    return stages[k].shape == 'h'   ? (size_t)c->n_head * nn * nn
           : stages[k].shape == 'f' ? nn * (size_t)c->d_mlp
                                    : nn * (size_t)c->d_model;
}

/* The text of expected.txt from the line "case NAME" on. */
static const char *
case_of(const struct expected *e, const char *name)
{
    char line[64];
    const char *at;

    snprintf(line, sizeof line, "case %s\n", name);
    at = strstr(e->text, line);
    ck_assert_msg(at != NULL, "expected.txt has no %s", line);
    return at;
}

/* Loads the model at path (a folder or a file), runs it over the case's ids, checks every stage. */
static void
run_and_check_with(const char *path, const struct arch_options *o, const char *which,
                   const struct expected *e, struct decoder_model *m, struct decoder_run *r)
{
    const char *from = case_of(e, which);
    const char *at = line_of(from, "ids", -1);
    struct attn_error err;
    int ids[64];
    int n = (int)next_number(&at);
    int top;

    ck_assert_msg(architecture_load(m, path, o, &err) == ATTN_OK, "%s: %s", path, err.msg);
    for (int i = 0; i < n; i++)
        ids[i] = (int)next_number(&at);
    at = line_of(from, "top", -1);
    top = (int)next_number(&at);
    ck_assert_msg(decoder_forward(m, ids, n, top, NULL, r, &err) == ATTN_OK, "%s", err.msg);
    compare("embed", r->embed, line_of(from, "embed", -1), (size_t)n * m->cfg.d_model, 1e-5);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        ck_assert_msg(decoder_show_layer(m, r, l, &err) == ATTN_OK, "%s", err.msg);
        for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++) {
            char what[300];
            snprintf(what, sizeof what, "%s: %s of layer %d", path, stages[k].name, l);
            compare(what, stage_of(&r->layers[l], (int)k), line_of(from, stages[k].name, l),
                    stage_size(&m->cfg, n, (int)k), 1e-5);
        }
    }
    compare("final", r->final, line_of(from, "final", -1), (size_t)n * m->cfg.d_model, 1e-5);
    at = line_of(from, "top", -1);
    next_number(&at);
    for (int i = 0; i < n * top; i++)
        ck_assert_msg(r->top_ids[i] == (int)next_number(&at), "%s: top token %d differs", path, i);
    compare("next-token probabilities", r->top_probs, at, (size_t)n * top, 1e-5);
}

static void
run_and_check(const char *path, const char *which, const struct expected *e,
              struct decoder_model *m, struct decoder_run *r)
{
    run_and_check_with(path, NULL, which, e, m, r);
}

/* Whether every stage of a and b is the same, bit for bit (each layer's weights made in turn). */
static void
expect_identical(const char *what, const struct decoder_model *m, struct decoder_run *a,
                 struct decoder_run *b)
{
    const size_t row = (size_t)a->n * (size_t)m->cfg.d_model * sizeof(float);

    ck_assert_msg(memcmp(a->embed, b->embed, row) == 0, "%s: embeddings differ", what);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        ck_assert(decoder_show_layer(m, a, l, NULL) == ATTN_OK);
        ck_assert(decoder_show_layer(m, b, l, NULL) == ATTN_OK);
        for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++)
            ck_assert_msg(memcmp(stage_of(&a->layers[l], (int)k), stage_of(&b->layers[l], (int)k),
                                 stage_size(&m->cfg, a->n, (int)k) * sizeof(float)) == 0,
                          "%s: %s of layer %d is not bit-identical", what, stages[k].name, l);
    }
    ck_assert_msg(memcmp(a->final, b->final, row) == 0, "%s: final differs", what);
}

START_TEST(every_format_agrees_with_pytorch)
{
    static const char *const folders[] = { "openai", "openai-snappy", "openai-shards" };
    struct expected e;
    struct decoder_model hf;
    struct decoder_run hf_run;
    char path[4200];

    expected_load(&e, test_path(FORMATS "/expected.txt"));
    run_and_check(test_path(FORMATS "/hf"), "f32", &e, &hf, &hf_run);
    ck_assert_str_eq(hf.format, "safetensors");
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        struct decoder_model m;
        struct decoder_run r;
        snprintf(path, sizeof path, "%s/%s", test_path(FORMATS), folders[i]);
        run_and_check(path, "f32", &e, &m, &r);
        ck_assert_str_eq(m.format, "TensorFlow checkpoint");
        ck_assert_int_eq(m.names, DECODER_NAMES_OPENAI);
        ck_assert_str_eq(m.described_by, "hparams.json");
        expect_identical(folders[i], &m, &hf_run, &r);
        decoder_run_destroy(&r);
        decoder_destroy(&m);
    }
    {
        /* llama.cpp's GGUF of it (tests/oracle/gguf_models.py): the same stages, bit for bit. */
        struct decoder_model m;
        struct decoder_run r;
        struct arch_options o = { path, 0, false };
        snprintf(path, sizeof path, "%s/model.gguf", test_path(FORMATS "/gguf"));
        run_and_check_with(test_path(FORMATS "/gguf"), &o, "f32", &e, &m, &r);
        ck_assert_str_eq(m.format, "GGUF: F32 28 tensors");
        ck_assert_int_eq(m.names, DECODER_NAMES_GGUF);
        ck_assert_str_eq(m.described_by, "its GGUF metadata");
        ck_assert(m.cfg.tied);
        expect_identical("gguf", &m, &hf_run, &r);
        decoder_run_destroy(&r);
        decoder_destroy(&m);
    }
    decoder_run_destroy(&hf_run);
    decoder_destroy(&hf);
    free(e.text);
}
END_TEST

START_TEST(a_half_precision_checkpoint_agrees_with_pytorch)
{
    struct expected e;
    struct decoder_model m;
    struct decoder_run r;

    expected_load(&e, test_path(FORMATS "/expected.txt"));
    run_and_check(test_path(FORMATS "/openai-f16"), "f16", &e, &m, &r);
    decoder_run_destroy(&r);
    decoder_destroy(&m);
    free(e.text);
}
END_TEST

/* A checkpoint's own names: a folder, its prefix, its index and a data file all open it. */
START_TEST(a_checkpoint_opens_by_any_of_its_names)
{
    static const char *const names[] = { "", "/model.ckpt", "/model.ckpt.index",
                                         "/model.ckpt.data-00000-of-00001" };
    char path[4200];

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct tensor_source s;
        struct attn_error err;
        snprintf(path, sizeof path, "%s%s", test_path(FORMATS "/openai"), names[i]);
        ck_assert_msg(tensors_open(&s, path, &err) == ATTN_OK, "%s: %s", path, err.msg);
        ck_assert_str_eq(s.format, "TensorFlow checkpoint");
        ck_assert_int_eq(tensors_count(&s), 2 + 12 * 2 + 2);
        ck_assert_ptr_nonnull(tensors_find(&s, "model/h1/attn/c_attn/w"));
        ck_assert_msg(strstr(s.path, "model.ckpt.index") != NULL, "%s", s.path);
        tensors_close(&s);
    }
}
END_TEST

START_TEST(what_a_checkpoint_cannot_give_is_refused_by_name)
{
    struct tf_checkpoint ck;
    struct attn_error err;
    char prefix[4200];
    const struct tensor_info *t;
    float v[64];

    snprintf(prefix, sizeof prefix, "%s/model.ckpt", test_path(FORMATS "/openai-shards"));
    ck_assert_msg(tf_checkpoint_open(&ck, prefix, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(ck.shard_count, 3);
    t = tf_checkpoint_find(&ck, "model/h0/attn/c_attn/w");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, 3);
    ck_assert(t->shape[0] == 1 && t->shape[1] == 16 && t->shape[2] == 48);
    ck_assert(t->has_crc);
    /* A step counter and a sliced variable are listed, and refused when read. */
    t = tf_checkpoint_find(&ck, "global_step");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_ne(tf_checkpoint_read_f32(&ck, t, v, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "tensor 'global_step' is DT_INT64") != NULL, "%s", err.msg);
    t = tf_checkpoint_find(&ck, "model/sliced");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_ne(tf_checkpoint_read_f32(&ck, t, v, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "'model/sliced' is saved in 1 slices") != NULL, "%s", err.msg);
    ck_assert_ptr_null(tf_checkpoint_find(&ck, "model/h2/ln_1/g"));
    tf_checkpoint_close(&ck);
}
END_TEST

/* A copy of the openai fixture in dir/name, to damage. */
static const char *
checkpoint_copy(const char *name)
{
    static char out[600];
    char cmd[5000];

    snprintf(out, sizeof out, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", test_path(FORMATS "/openai"), out);
    ck_assert_int_eq(system(cmd), 0);
    return out;
}

/* Overwrites the byte at offset of folder/file (negative: from the end) with its complement. */
static void
flip_byte(const char *folder, const char *file, long offset)
{
    char path[800];
    int fd;
    unsigned char b;
    off_t at;

    snprintf(path, sizeof path, "%s/%s", folder, file);
    fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    at = offset >= 0 ? (off_t)offset : lseek(fd, 0, SEEK_END) + offset;
    ck_assert_int_eq(pread(fd, &b, 1, at), 1);
    b = (unsigned char)~b;
    ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

static void
expect_load_error(const char *path, const char *want, const char *want2)
{
    struct decoder_model m;
    struct attn_error err;

    ck_assert_int_ne(architecture_load(&m, path, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, want) != NULL && (want2 == NULL || strstr(err.msg, want2)),
                  "'%s' not in: %s", want, err.msg);
    ck_assert_ptr_null(m.blocks);
}

START_TEST(a_damaged_checkpoint_says_what_is_wrong)
{
    const char *c;
    char path[800];

    /* A flipped byte of a tensor: its checksum, naming it (model/h0/attn/c_attn/b comes first). */
    c = checkpoint_copy("bytes");
    flip_byte(c, "model.ckpt.data-00000-of-00001", 0);
    expect_load_error(c, "tensor 'model/h0/attn/c_attn/b' fails its checksum", "damaged");
    /* A data file cut short: the first tensor past its end. */
    c = checkpoint_copy("short");
    snprintf(path, sizeof path, "%s/model.ckpt.data-00000-of-00001", c);
    ck_assert_int_eq(truncate(path, 1000), 0);
    expect_load_error(c, "is said to end at byte", "the file has 1000");
    /* A data file missing. */
    c = checkpoint_copy("nodata");
    snprintf(path, sizeof path, "%s/model.ckpt.data-00000-of-00001", c);
    ck_assert_int_eq(unlink(path), 0);
    expect_load_error(c, "model.ckpt.data-00000-of-00001", NULL);
    /* A flipped byte of the index's first block, and of its footer's magic. */
    c = checkpoint_copy("block");
    flip_byte(c, "model.ckpt.index", 20);
    expect_load_error(c, "block at byte 0 fails its checksum", NULL);
    c = checkpoint_copy("magic");
    flip_byte(c, "model.ckpt.index", -1);
    expect_load_error(c, "not a TensorFlow checkpoint index", NULL);
    c = checkpoint_copy("cut");
    snprintf(path, sizeof path, "%s/model.ckpt.index", c);
    ck_assert_int_eq(truncate(path, 20), 0);
    expect_load_error(c, "too short for a table's footer", NULL);
    /* `checkpoint` naming a prefix that is not there, or nothing at all. */
    c = checkpoint_copy("named");
    test_write_text(c, "checkpoint", "model_checkpoint_path: \"model.ckpt-1000\"\n");
    expect_load_error(c, "names the checkpoint model.ckpt-1000", "is not there");
    test_write_text(c, "checkpoint", "nothing useful\n");
    expect_load_error(c, "no model_checkpoint_path", NULL);
    /* An absolute path from where it was written: the same name in this folder is read. */
    test_write_text(c, "checkpoint", "model_checkpoint_path: \"/gone/elsewhere/model.ckpt\"\n");
    {
        struct decoder_model m;
        struct attn_error err;
        ck_assert_msg(architecture_load(&m, c, NULL, &err) == ATTN_OK, "%s", err.msg);
        decoder_destroy(&m);
    }
    /* hparams.json without a count, and --heads against the one it gives. */
    c = checkpoint_copy("hparams");
    test_write_text(c, "hparams.json", "{\"n_vocab\": 64, \"n_ctx\": 16, \"n_embd\": 16}");
    expect_load_error(c, "hparams.json: \"n_layer\" is missing", NULL);
    {
        struct decoder_model m;
        struct attn_error err;
        const struct arch_options o = { NULL, 4, false };
        ck_assert_int_ne(architecture_load(&m, test_path(FORMATS "/openai"), &o, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, "--heads 4:") && strstr(err.msg, "hparams.json says the "
                                                                       "model has 2 heads"),
                      "%s", err.msg);
    }
}
END_TEST

/* A weights file of the fixtures, its folder the model's folder. */
static void
book_file(const char *folder, const char *file, char *path, size_t size, char *dirpath,
          size_t dir_size)
{
    snprintf(dirpath, dir_size, "%s/%s", test_path(FORMATS), folder);
    snprintf(path, size, "%s/%s", dirpath, file);
}

START_TEST(state_dicts_agree_with_pytorch)
{
    /* The book's GPTModel under torch.save, its variants read bit for bit as the first is. */
    static const char *const same[][2] = {
        { "book-protocol4", "model.pth" }, { "book-newer", "model.pth" },
        { "book-tied", "model.pth" }, { "book-optimizer", "model_and_optimizer.pth" },
    };
    struct expected e;
    struct decoder_model hf, pt, book;
    struct decoder_run hf_run, pt_run, book_run;
    char folder[4200];
    char path[4400];
    struct arch_options o = { NULL, 2, false };

    expected_load(&e, test_path(FORMATS "/expected.txt"));
    /* Hugging Face's pytorch_model.bin: the safetensors' stages, bit for bit. */
    run_and_check(test_path(FORMATS "/hf"), "f32", &e, &hf, &hf_run);
    run_and_check(test_path(FORMATS "/torch-hf"), "f32", &e, &pt, &pt_run);
    ck_assert_str_eq(pt.format, "PyTorch state dict");
    expect_identical("torch-hf", &pt, &hf_run, &pt_run);
    /* The book's model.pth: no config beside it, the heads from --heads. */
    book_file("book", "model.pth", path, sizeof path, folder, sizeof folder);
    o.weights = path;
    run_and_check_with(folder, &o, "f32", &e, &book, &book_run);
    ck_assert_int_eq(book.names, DECODER_NAMES_BOOK);
    ck_assert_str_eq(book.described_by, "the tensors' shapes");
    ck_assert_str_eq(book.heads_from, "2 heads (--heads)");
    ck_assert_int_eq(book.cfg.n_layer, 2);
    ck_assert_int_eq(book.cfg.n_ctx, 16);
    ck_assert_int_eq(book.cfg.vocab_size, 64);
    ck_assert_int_eq(book.cfg.d_mlp, 64);
    ck_assert_ptr_nonnull(book.blocks[0].q.b);
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        struct decoder_model m;
        struct decoder_run r;
        book_file(same[i][0], same[i][1], path, sizeof path, folder, sizeof folder);
        run_and_check_with(folder, &o, "f32", &e, &m, &r);
        expect_identical(same[i][0], &m, &book_run, &r);
        if (strcmp(same[i][0], "book-optimizer") == 0)
            ck_assert_str_eq(m.format, "PyTorch state dict (its model_state_dict)");
        decoder_run_destroy(&r);
        decoder_destroy(&m);
    }
    decoder_run_destroy(&book_run);
    decoder_destroy(&book);
    decoder_run_destroy(&pt_run);
    decoder_destroy(&pt);
    decoder_run_destroy(&hf_run);
    decoder_destroy(&hf);
    free(e.text);
}
END_TEST

START_TEST(book_variants_agree_with_pytorch)
{
    struct expected e;
    struct decoder_model m;
    struct decoder_run r;
    char folder[4200];
    char path[4400];
    struct arch_options o = { NULL, 2, false };

    expected_load(&e, test_path(FORMATS "/expected.txt"));
    book_file("book-bf16", "model.pth", path, sizeof path, folder, sizeof folder);
    o.weights = path;
    run_and_check_with(folder, &o, "bf16", &e, &m, &r);
    decoder_run_destroy(&r);
    decoder_destroy(&m);
    /* qkv_bias=False: no biases in the file, none in the model. */
    book_file("book-nobias", "model.pth", path, sizeof path, folder, sizeof folder);
    run_and_check_with(folder, &o, "nobias", &e, &m, &r);
    ck_assert_ptr_null(m.blocks[1].k.b);
    decoder_run_destroy(&r);
    decoder_destroy(&m);
    /* Chapter 6's classifier: two classes' probabilities where the next tokens were. */
    book_file("book-classifier", "review_classifier.pth", path, sizeof path, folder,
              sizeof folder);
    run_and_check_with(folder, &o, "classifier", &e, &m, &r);
    ck_assert_int_eq(m.cfg.n_classes, 2);
    ck_assert_int_eq(decoder_outputs(&m.cfg), 2);
    ck_assert_ptr_nonnull(m.head_bias);
    ck_assert_int_eq(r.top, 2);
    decoder_run_destroy(&r);
    decoder_destroy(&m);
    free(e.text);
}
END_TEST

START_TEST(what_a_state_dict_cannot_give_is_refused)
{
    struct decoder_model m;
    struct attn_error err;
    char folder[4200];
    char path[4400];
    struct arch_options o = { NULL, 0, false };
    struct tensor_source s;
    const struct tensor_info *t;
    float v[12];

    /* No file gives the heads, and 16 is none of GPT-2's widths. */
    book_file("book", "model.pth", path, sizeof path, folder, sizeof folder);
    o.weights = path;
    ck_assert_int_ne(architecture_load(&m, folder, &o, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "model.pth: how many heads the model has is in no file") &&
                      strstr(err.msg, "--heads N"),
                  "%s", err.msg);
    o.heads = 3;
    ck_assert_int_ne(architecture_load(&m, folder, &o, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "--heads 3: the model's width (n_embd) 16 is not a multiple"),
                  "%s", err.msg);
    /* A big-endian archive, a pickled module, a pickle that would run a command. */
    book_file("book-big-endian", "model.pth", path, sizeof path, folder, sizeof folder);
    ck_assert_int_ne(tensors_open(&s, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "model.pth: saved on a big-endian machine"), "%s", err.msg);
    book_file("whole-module", "model.pth", path, sizeof path, folder, sizeof folder);
    ck_assert_int_ne(tensors_open(&s, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "model.pth: refuses to load __main__.GPTModel: not a state "
                                  "dict") &&
                      strstr(err.msg, "save model.state_dict() instead"),
                  "%s", err.msg);
    book_file("os-system", "model.pth", path, sizeof path, folder, sizeof folder);
    ck_assert_int_ne(tensors_open(&s, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "refuses to load posix.system"), "%s", err.msg);
    ck_assert_int_ne(access("attnscope-was-here", F_OK), 0);
    /* Views of one storage: read where contiguous, refused by name where not. */
    book_file("views", "views.pth", path, sizeof path, folder, sizeof folder);
    ck_assert_msg(tensors_open(&s, path, &err) == ATTN_OK, "%s", err.msg);
    t = tensors_find(&s, "row");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(tensors_read_f32(&s, t, v, &err), ATTN_OK);
    ck_assert(v[0] == 4.0f && v[3] == 7.0f);
    t = tensors_find(&s, "whole");
    ck_assert_int_eq(tensors_read_f32(&s, t, v, &err), ATTN_OK);
    ck_assert(v[11] == 11.0f);
    t = tensors_find(&s, "transposed");
    ck_assert(t->shape[0] == 4 && t->shape[1] == 3);
    ck_assert_int_ne(tensors_read_f32(&s, t, v, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "'transposed' is a view that is not contiguous"), "%s", err.msg);
    tensors_close(&s);
}
END_TEST

/*
 * The model lesson 13 opens (samples/models/chapter5/model.pth, trained by
 * tests/oracle/train_chapter5.py as chapter 5 trains): a bare state dict,
 * its heads from --heads and GPT-2's tokenizer borrowed from the copy
 * attnscope installs.  The ids the borrowed tokenizer gives the lesson's
 * sentence are the ones PyTorch's run was fed, and every stage agrees.
 */
START_TEST(the_chapter5_sample_agrees_with_pytorch)
{
    struct expected e;
    struct model m;
    struct decoder_run r;
    struct attn_error err;
    const struct model_options o = { 2, NULL, false, NULL };
    const char *sentence = "Every stage of every layer agrees with PyTorch";
    const char *at;
    int *ids = NULL;
    int count = 0;

    expected_load(&e, test_path("tests/fixtures/chapter5/expected.txt"));
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1);
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &o, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1); /* as make check sets it */
    ck_assert_msg(strstr(m.borrowed, "tokenizer") != NULL, "%s", m.borrowed);
    ck_assert_int_eq(m.dec.cfg.n_head, 2);
    ck_assert_int_eq(m.dec.cfg.vocab_size, 50257);
    ck_assert_int_eq(bpe_encode(&m.bpe, sentence, strlen(sentence), 0, &ids, &count, &err),
                     ATTN_OK);
    at = line_of(case_of(&e, "chapter5"), "ids", -1);
    ck_assert_int_eq(count, (int)next_number(&at));
    for (int i = 0; i < count; i++)
        ck_assert_int_eq(ids[i], (int)next_number(&at));
    free(ids);
    model_close(&m);
    {
        struct decoder_model d;
        char path[4300];
        char folder[4096];
        const struct arch_options g = { path, 2, false };

        snprintf(folder, sizeof folder, "%.4000s", test_path("samples/models/chapter5"));
        snprintf(path, sizeof path, "%s/model.pth", folder);
        run_and_check_with(folder, &g, "chapter5", &e, &d, &r);
        decoder_run_destroy(&r);
        decoder_destroy(&d);
    }
    free(e.text);
}
END_TEST

START_TEST(crc32c_is_castagnolis)
{
    unsigned char buf[600];
    uint32_t x = 12345;

    ck_assert_uint_eq(crc32c_extend(0, (const unsigned char *)"123456789", 9), 0xe3069283u);
    ck_assert_uint_eq(crc32c_extend_portable(0, (const unsigned char *)"123456789", 9),
                      0xe3069283u);
    /* In pieces as in one, and the instruction's way as the table's, at every length and start. */
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    for (size_t start = 0; start < 9; start++)
        for (size_t len = 0; len + start <= sizeof buf; len += 7) {
            uint32_t whole = crc32c_extend(0, buf + start, len);
            uint32_t split = crc32c_extend(crc32c_extend(0, buf + start, len / 3), buf + start + len / 3,
                                           len - len / 3);
            ck_assert_uint_eq(whole, split);
            ck_assert_uint_eq(whole, crc32c_extend_portable(0, buf + start, len));
        }
    for (uint32_t c = 0; c < 100000; c += 977)
        ck_assert_uint_eq(crc32c_unmask(crc32c_mask(c)), c);
    /* Past three blocks of 4096, where the instruction's way runs three chains and joins them. */
    {
        enum { BIG = 50000 };
        unsigned char *big = malloc(BIG);
        static const size_t lens[] = { 12287, 12288, 12289, 24576, 24583, 36864, 49990 };
        ck_assert_ptr_nonnull(big);
        for (size_t i = 0; i < BIG; i++) {
            x = x * 1103515245u + 12345u;
            big[i] = (unsigned char)(x >> 16);
        }
        for (size_t start = 0; start < 3; start++)
            for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
                uint32_t whole = crc32c_extend(0, big + start, lens[k]);
                ck_assert_uint_eq(whole, crc32c_extend_portable(0, big + start, lens[k]));
                ck_assert_uint_eq(whole, crc32c_extend(crc32c_extend(0, big + start, 5000),
                                                       big + start + 5000, lens[k] - 5000));
            }
        free(big);
    }
}
END_TEST

/* A LevelDB block of tables (restarts at 0, no compression) appended to buf at *n. */
static void
table_varint(unsigned char *buf, size_t *n, uint64_t v)
{
    while (v >= 0x80) {
        buf[(*n)++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    buf[(*n)++] = (unsigned char)v;
}

static void
table_le32(unsigned char *buf, size_t *n, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        buf[(*n)++] = (unsigned char)(v >> (8 * k));
}

/* Closes a block begun at start: one restart point, then the trailer (type 0, masked CRC). */
static void
table_end_block(unsigned char *buf, size_t *n, size_t start)
{
    unsigned char type = 0;

    table_le32(buf, n, 0);
    table_le32(buf, n, 1);
    buf[*n] = type;
    table_le32(buf, &(size_t){ *n + 1 },
               crc32c_mask(crc32c_extend(crc32c_extend(0, buf + start, *n - start), &type, 1)));
    *n += 5;
}

static int
count_entries(void *ctx, const unsigned char *key, size_t key_len, const unsigned char *value,
              size_t value_len, struct attn_error *err)
{
    (void)key;
    (void)key_len;
    (void)value;
    (void)value_len;
    (void)err;
    (*(long *)ctx)++;
    return 0;
}

/*
 * A table whose index names one data block `names` times (issue 35: 400,000
 * entries on an 8 MB block read the block 400,000 times, minutes): the
 * blocks of a table follow each other, each named once, so the second is
 * refused and reading costs at most the file's bytes.  Named once, the
 * same table's entry is read.
 */
START_TEST(a_table_reads_each_block_once)
{
    static unsigned char buf[1 << 23];
    static const long names[] = { 1, 2, 400000 };

    for (size_t c = 0; c < sizeof names / sizeof names[0]; c++) {
        size_t n = 0, data_size, index_at, index_size;
        long entries = 0;
        struct attn_error err = { 0 };
        enum attn_status rc;
        /* The data block: one entry, "a" -> 1000 bytes. */
        table_varint(buf, &n, 0);
        table_varint(buf, &n, 1);
        table_varint(buf, &n, 1000);
        buf[n++] = 'a';
        memset(buf + n, 'x', 1000);
        n += 1000;
        table_end_block(buf, &n, 0);
        data_size = n - 5;
        /* The index: `names` entries, each the key "a" and the data block's handle. */
        index_at = n;
        for (long k = 0; k < names[c]; k++) {
            table_varint(buf, &n, k == 0 ? 0 : 1);
            table_varint(buf, &n, k == 0 ? 1 : 0);
            table_varint(buf, &n, 3);
            if (k == 0)
                buf[n++] = 'a';
            table_varint(buf, &n, 0);
            table_varint(buf, &n, data_size);
        }
        table_end_block(buf, &n, index_at);
        index_size = n - 5 - index_at;
        /* The footer: the metaindex's handle (unused), the index's, padding, the magic. */
        {
            const size_t footer = n;
            table_varint(buf, &n, 0);
            table_varint(buf, &n, 0);
            table_varint(buf, &n, index_at);
            table_varint(buf, &n, index_size);
            memset(buf + n, 0, footer + 40 - n);
            n = footer + 40;
            table_le32(buf, &n, 0x8b80fb57u);
            table_le32(buf, &n, 0xdb477524u);
        }
        ck_assert_uint_lt(n, sizeof buf);
        rc = sstable_foreach(buf, n, "model.ckpt.index", count_entries, &entries, &err);
        if (names[c] == 1) {
            ck_assert_msg(rc == ATTN_OK, "%s", err.msg);
            ck_assert_int_eq(entries, 1);
        } else {
            ck_assert_int_eq(rc, ATTN_EPARSE);
            ck_assert_int_eq(entries, 1);
            ck_assert_msg(strstr(err.msg, "model.ckpt.index: the index names the data block at "
                                          "byte 0 after the one that ends at byte"),
                          "%s", err.msg);
        }
    }
}
END_TEST

/* A pickle of n repetitions of unit between head and tail. */
static unsigned char *
repeated_pickle(const char *head, const char *unit, size_t unit_len, size_t n, const char *tail,
                size_t *len)
{
    const size_t h = strlen(head), t = strlen(tail);
    unsigned char *p = malloc(h + unit_len * n + t);

    ck_assert_ptr_nonnull(p);
    memcpy(p, head, h);
    for (size_t i = 0; i < n; i++)
        memcpy(p + h + i * unit_len, unit, unit_len);
    memcpy(p + h + unit_len * n, tail, t);
    *len = h + unit_len * n + t;
    return p;
}

/*
 * Pickles built to take memory are refused by what their size warrants
 * (issue 35: 19.9 million None opcodes, 19.7 KB deflated, took 5.3 GB and
 * 20 s, then "out of memory"): the stack grows no deeper than a state
 * dict's, a list of numbers stops at the memory its bytes warrant, and the
 * machine's own count of what it held stays within that.
 */
START_TEST(pickles_that_want_memory_are_refused_by_their_size)
{
    size_t len;
    unsigned char *p;
    struct pickle_state_dict sd;
    struct attn_error err = { 0 };
    char path[4300];

    /* 19.9 million None, deflated into an archive as in the probe. */
    p = repeated_pickle("\x80\x02", "N", 1, 19900000, ".", &len);
    snprintf(path, sizeof path, "%s/none.pth", dir);
    ck_assert_int_eq(pth_write_pickle(path, p, len, 1), 0);
    ck_assert_int_ne(pickle_state_dict(p, len, "none.pth", &sd, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "none.pth: data.pkl, byte ") &&
                      strstr(err.msg, "the stack grows deeper than a state dict's"),
                  "%s", err.msg);
    ck_assert_uint_le(sd.memory, (size_t)16 << 20);
    free(p);
#if !defined(__SANITIZE_ADDRESS__)
    {
        /* The archive through the reader, under an address-space limit: refused, not OOM. */
        const pid_t pid = fork();
        int status;
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            struct rlimit small;
            struct torch_zip tz;
            small.rlim_cur = small.rlim_max = test_address_space() + ((rlim_t)256 << 20);
            if (setrlimit(RLIMIT_AS, &small) != 0)
                _exit(3);
            if (torch_zip_open(&tz, path, &err) == ATTN_OK)
                _exit(4);
            _exit(strstr(err.msg, "deeper than a state dict's") != NULL ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d",
                      WEXITSTATUS(status));
    }
#endif
    /* A list filled with numbers, 1,000 at a time as a pickler batches them. */
    {
        char unit[3 * 1000 + 2];
        unit[0] = '(';
        for (int k = 0; k < 1000; k++)
            memcpy(unit + 1 + 3 * k, "M\x01\x02", 3);
        unit[3001] = 'e';
        p = repeated_pickle("\x80\x02]", unit, sizeof unit, 6000, ".", &len);
    }
    ck_assert_int_ne(pickle_state_dict(p, len, "list.pth", &sd, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "list.pth: data.pkl, byte ") &&
                      (strstr(err.msg, "a state dict of its size needs") ||
                       strstr(err.msg, "more values than a state dict makes")),
                  "%s", err.msg);
    ck_assert_uint_le(sd.memory, pickle_memory_max(len));
    free(p);
    /* A memo index far past what was made: refused before its slot is grown. */
    p = repeated_pickle("\x80\x02N", "r\xff\xff\xff\x00", 5, 1, ".", &len);
    ck_assert_int_ne(pickle_state_dict(p, len, "memo.pth", &sd, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "memo index past the values made"), "%s", err.msg);
    free(p);
}
END_TEST

/* What the fixtures' real state dicts take: well within the cap, a few bytes a pickle byte. */
START_TEST(a_state_dicts_pickle_takes_little_memory)
{
    static const char *const files[] = { "tests/fixtures/formats/book/model.pth",
                                         "tests/fixtures/formats/book-optimizer/"
                                         "model_and_optimizer.pth",
                                         "tests/fixtures/decoders/qwen3-book/model.pth" };

    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        int code;
        zip_t *z = zip_open(test_path(files[i]), ZIP_RDONLY, &code);
        ck_assert_ptr_nonnull(z);
        for (zip_int64_t e = 0; e < zip_get_num_entries(z, 0); e++) {
            const char *name = zip_get_name(z, (zip_uint64_t)e, 0);
            zip_stat_t st;
            zip_file_t *f;
            unsigned char *buf;
            struct pickle_state_dict sd;
            struct attn_error err;
            if (strlen(name) < 9 || strcmp(name + strlen(name) - 9, "/data.pkl") != 0)
                continue;
            ck_assert_int_eq(zip_stat_index(z, (zip_uint64_t)e, 0, &st), 0);
            buf = malloc(st.size);
            f = zip_fopen_index(z, (zip_uint64_t)e, 0);
            ck_assert_int_eq(zip_fread(f, buf, st.size), (zip_int64_t)st.size);
            zip_fclose(f);
            ck_assert_msg(pickle_state_dict(buf, st.size, files[i], &sd, &err) == ATTN_OK, "%s",
                          err.msg);
            ck_assert_uint_le(sd.memory, pickle_memory_max(st.size) / 4);
            pickle_state_dict_free(&sd);
            free(buf);
        }
        zip_discard(z);
    }
}
END_TEST

static Suite *
formats_suite(void)
{
    Suite *s = suite_create("formats");
    TCase *tc = tcase_create("formats");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_format_agrees_with_pytorch);
    tcase_add_test(tc, a_table_reads_each_block_once);
    tcase_add_test(tc, pickles_that_want_memory_are_refused_by_their_size);
    tcase_add_test(tc, a_state_dicts_pickle_takes_little_memory);
    tcase_add_test(tc, a_half_precision_checkpoint_agrees_with_pytorch);
    tcase_add_test(tc, a_checkpoint_opens_by_any_of_its_names);
    tcase_add_test(tc, what_a_checkpoint_cannot_give_is_refused_by_name);
    tcase_add_test(tc, a_damaged_checkpoint_says_what_is_wrong);
    tcase_add_test(tc, state_dicts_agree_with_pytorch);
    tcase_add_test(tc, book_variants_agree_with_pytorch);
    tcase_add_test(tc, what_a_state_dict_cannot_give_is_refused);
    tcase_add_test(tc, the_chapter5_sample_agrees_with_pytorch);
    tcase_add_test(tc, crc32c_is_castagnolis);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(formats_suite)
