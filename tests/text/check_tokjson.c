/*
 * check_tokjson.c: tokenizer.json interpreted (src/core/text/tokjson.c with
 * bpe.c's model) against Hugging Face's own implementation.
 *
 * tests/fixtures/tokenizers/ holds the real tokenizer.json files of Qwen3
 * (NFC, a Split regex, byte-level BPE, 26 added tokens), Llama 3
 * (ignore_merges, 256 added tokens) and Gemma 3 (a Replace normalizer, a
 * Split on spaces merged with the previous piece, a BPE over characters
 * with byte fallback, a BOS template, 6,415 added tokens), and 86 texts;
 * SmolLM2's kind of pipeline (Digits, then ByteLevel) is built here around
 * GPT-2's vocabulary;
 * tests/golden/tokenizer-ids.txt the ids npm's @huggingface/tokenizers gives
 * each (tests/oracle/tokenizer_ids.mjs).  Every id of every text must be
 * the same.  What is not interpreted is refused by name.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "attnscope/formats/gguf.h"
#include "attnscope/text/bpe.h"
#include "attnscope/text/tokjson.h"
#include "gguf_writer.h"
#include "testutil.h"

/*
 * SmolLM2's kind of pipeline (Digits, each digit a piece, then ByteLevel with
 * GPT-2's pattern) around GPT-2's vocabulary and merges as attnscope ships
 * them (samples/tokenizers/gpt2), written into dir as tokenizer_ids.mjs
 * builds it for the reference.
 */
static const char *
digits_tokenizer(void)
{
    static char path[512];
    char line[1024];
    json_t *vocab = json_load_file(test_path("samples/tokenizers/gpt2/encoder.json"), 0, NULL);
    json_t *merges = json_array();
    FILE *f = fopen(test_path("samples/tokenizers/gpt2/vocab.bpe"), "r");
    json_t *root;
    json_int_t eot;

    ck_assert_ptr_nonnull(vocab);
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '\0' && strncmp(line, "#version", 8) != 0)
            json_array_append_new(merges, json_string(line));
    }
    fclose(f);
    eot = json_integer_value(json_object_get(vocab, "<|endoftext|>"));
    json_object_del(vocab, "<|endoftext|>");
    root = json_pack("{s:[{s:I,s:s,s:b,s:b,s:b,s:b,s:b}],s:n,s:{s:s,s:[{s:s,s:b},{s:s,s:b,s:b}]},"
                     "s:{s:s,s:o,s:o}}",
                     "added_tokens", "id", eot, "content", "<|endoftext|>", "single_word", 0,
                     "lstrip", 0, "rstrip", 0, "normalized", 0, "special", 1, "normalizer",
                     "pre_tokenizer", "type", "Sequence", "pretokenizers", "type", "Digits",
                     "individual_digits", 1, "type", "ByteLevel", "add_prefix_space", 0,
                     "use_regex", 1, "model", "type", "BPE", "vocab", vocab, "merges", merges);
    ck_assert_ptr_nonnull(root);
    snprintf(path, sizeof path, "%s/digits.json", dir);
    ck_assert_int_eq(json_dump_file(root, path, 0), 0);
    json_decref(root);
    return path;
}

/* The fixture's tokenizer.json (xz-compressed in the tree) written out into dir. */
static const char *
tokenizer_file(const char *name)
{
    static char path[512];
    char cmd[1400];

    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    snprintf(cmd, sizeof cmd, "xz -dc '%s/tests/fixtures/tokenizers/%s.tokenizer.json.xz' > '%s'",
             getenv("top_srcdir") != NULL ? getenv("top_srcdir") : ".", name, path);
    ck_assert_msg(system(cmd) == 0, "%s failed (xz-utils installed?)", cmd);
    return path;
}

/* The fixture's tokenizer as a GGUF file carries it (tests/oracle/gguf_tokenizers.py), loaded. */
static void
load_gguf_tokenizer(struct bpe *b, const char *name)
{
    char path[512], cmd[1400];
    struct gguf g;
    struct attn_error err;

    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    snprintf(cmd, sizeof cmd, "xz -dc '%s/tests/fixtures/tokenizers/%s.gguf.xz' > '%s'",
             getenv("top_srcdir") != NULL ? getenv("top_srcdir") : ".", name, path);
    ck_assert_msg(system(cmd) == 0, "%s failed (xz-utils installed?)", cmd);
    ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(bpe_load_gguf(b, &g, &err) == ATTN_OK, "%s: %s", name, err.msg);
    gguf_close(&g);
}

static void
check_tokenizer_as(const char *name, bool from_gguf, int bos);

static void
check_tokenizer(const char *name)
{
    check_tokenizer_as(name, false, -1);
}

/*
 * b's ids of each text the golden file (tests/golden/...) has a NAME line
 * for, against that line's, BOS first when bos >= 0 (the reference has none);
 * how many texts were checked.
 */
static int
check_ids(const struct bpe *b, const char *golden_rel, const char *name, int bos)
{
    struct attn_error err;
    json_t *texts = json_load_file(test_path("tests/fixtures/tokenizers/texts.json"), 0, NULL);
    FILE *golden = fopen(test_path(golden_rel), "r");
    char line[65536];
    int checked = 0;

    ck_assert_ptr_nonnull(texts);
    ck_assert_ptr_nonnull(golden);
    while (fgets(line, sizeof line, golden) != NULL) {
        char *at = line;
        size_t len = strlen(name);
        long index;
        int *ids, n, k = 0;
        json_t *text;
        if (strncmp(line, name, len) != 0 || line[len] != ' ')
            continue;
        index = strtol(line + len, &at, 10);
        text = json_array_get(texts, (size_t)index);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(bpe_encode(b, json_string_value(text), json_string_length(text), 0, &ids, &n,
                                 &err) == ATTN_OK,
                      "%s text %ld: %s", name, index, err.msg);
        /* (a GGUF's add_bos_token puts its BOS first: llama.cpp's Llama 3 files; this
           tokenizer.json's post-processor adds none) */
        if (bos >= 0) {
            ck_assert_msg(n > 0 && ids[0] == bos, "%s text %ld: no BOS %d first", name, index, bos);
            k = 1;
        }
        while (*at == ' ') {
            char *end;
            long want = strtol(at, &end, 10);
            if (end == at)
                break;
            ck_assert_msg(k < n, "%s text %ld: %d ids, the reference has more", name, index, n);
            ck_assert_msg(ids[k] == want, "%s text %ld: id %d is %d, the reference's %ld", name,
                          index, k, ids[k], want);
            k++;
            at = end;
        }
        ck_assert_msg(k == n, "%s text %ld: %d ids, the reference %d", name, index, n,
                      k - (bos >= 0));
        free(ids);
        checked++;
    }
    fclose(golden);
    json_decref(texts);
    return checked;
}

static void
check_tokenizer_as(const char *name, bool from_gguf, int bos)
{
    const bool digits = strcmp(name, "digits") == 0;
    struct bpe b;
    struct attn_error err;
    int checked;

    if (from_gguf)
        load_gguf_tokenizer(&b, name);
    else
        ck_assert_msg(bpe_load_tokenizer_json(&b, digits ? digits_tokenizer() : tokenizer_file(name),
                                              &err) == ATTN_OK,
                      "%s: %s", name, err.msg);
    checked = check_ids(&b, "tests/golden/tokenizer-ids.txt", name, bos);
    /* (the digits tokenizer's reference leaves out texts with digits that are not ASCII) */
    if (digits)
        ck_assert_int_ge(checked, 60);
    else
        ck_assert_int_eq(checked, 86); /* (every text of texts.json) */
    bpe_destroy(&b);
}

START_TEST(qwen3_ids_are_the_references)
{
    check_tokenizer("qwen3");
}
END_TEST

/*
 * The same tokenizers as a GGUF file carries them (llama.cpp's converter's
 * tokens, types and merges, tokenizer.ggml.pre's name): the same ids as
 * the reference gives with their tokenizer.json, BOS included.
 */
START_TEST(gguf_tokenizers_give_the_references_ids)
{
    check_tokenizer_as("qwen3", true, -1);
    check_tokenizer_as("llama3", true, 128000);
}
END_TEST

/* An array of count strings as a GGUF key's value (type 9 of items of type 8). */
static void
gw_kv_strs(struct gw *w, const char *key, const char *const *v, uint64_t count)
{
    gw_str(w, key);
    gw_u32(w, 9);
    gw_u32(w, 8);
    gw_u64(w, count);
    for (uint64_t i = 0; i < count; i++)
        gw_str(w, v[i]);
}

/* A GGUF of a byte-level tokenizer alone: count tokens and one merge, Olmo's pre-tokenizer. */
static void
write_vocab(const char *path, const char *const *tokens, int count, const char *const *merges)
{
    struct gw w = { 0 };

    gw_header(&w, 0, 4);
    gw_kv_str(&w, "tokenizer.ggml.model", "gpt2");
    gw_kv_str(&w, "tokenizer.ggml.pre", "olmo");
    gw_kv_strs(&w, "tokenizer.ggml.tokens", tokens, (uint64_t)count);
    gw_kv_strs(&w, "tokenizer.ggml.merges", merges, 1);
    gw_data(&w, 0);
    gw_save(&w, path);
}

/*
 * A GGUF's tokens and merges are read from its arrays as they are (not
 * through tokenizer.json's objects): a token listed twice, a merge without
 * its space, or one that makes no token is refused, naming the file and
 * the key.
 */
START_TEST(a_gguf_vocabulary_is_checked_as_read)
{
    static const char *const no_space[] = { "ab" };
    static const char *const no_token[] = { "b a" };
    static const char *const good[] = { "a b" };
    const struct {
        int twice; /* a token listed again at the end */
        const char *const *merges;
        const char *want;
    } cases[] = {
        { 1, good, "tokenizer.ggml.tokens: tokens 97 and 257 are both 'a'" },
        { 0, no_space, "tokenizer.ggml.merges: 'ab' is not a merge" },
        { 0, no_token, "tokenizer.ggml.merges: 'b a' makes a token the vocabulary lacks" },
    };
    /* GPT-2's byte characters (byte b: itself when printable, else U+0100 on), then "ab". */
    char spelled[258][8];
    const char *tokens[259];
    char path[512];
    int extra = 256;

    for (int c = 0; c < 256; c++) {
        const bool self = (c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || c >= 0xae;
        const int cp = self ? c : extra++;
        if (cp < 0x80)
            snprintf(spelled[c], sizeof spelled[c], "%c", cp);
        else
            snprintf(spelled[c], sizeof spelled[c], "%c%c", 0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
        tokens[c] = spelled[c];
    }
    tokens[256] = "ab";
    tokens[257] = "a";
    snprintf(path, sizeof path, "%s/vocab.gguf", dir);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gguf g;
        struct bpe b;
        struct attn_error err;
        write_vocab(path, tokens, 257 + cases[k].twice, cases[k].merges);
        ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(bpe_load_gguf(&b, &g, &err), ATTN_EPARSE);
        ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, cases[k].want) != NULL,
                      "case %zu: %s", k, err.msg);
        gguf_close(&g);
    }
    {
        /* (and the good one is read: the byte alphabet is right) */
        struct gguf g;
        struct bpe b;
        struct attn_error err;
        write_vocab(path, tokens, 257, good);
        ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(bpe_load_gguf(&b, &g, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(b.vocab_size, 257);
        bpe_destroy(&b);
        gguf_close(&g);
    }
}
END_TEST

/*
 * A SentencePiece tokenizer as llama.cpp's GGUF carries one (tokenizer.ggml.model
 * llama: pieces, scores, types; Llama 2's and Mistral's kind), trained and
 * written by tests/oracle/gguf_spm.py: the ids SentencePiece itself gives
 * each test text (tests/golden/spm-ids.txt), BOS first, byte fallback for
 * what its 2,000 pieces lack.
 */
START_TEST(a_sentencepiece_gguf_gives_sentencepieces_ids)
{
    struct bpe b;

    load_gguf_tokenizer(&b, "spm");
    ck_assert(!b.byte_level && b.byte_fallback);
    ck_assert_int_eq(check_ids(&b, "tests/golden/spm-ids.txt", "spm", -1), 86);
    bpe_destroy(&b);
}
END_TEST

/* An array of count numbers of GGUF type type (4 bytes each) as a key's value. */
static void
gw_kv_array4(struct gw *w, const char *key, uint32_t type, const void *v, uint64_t count)
{
    gw_str(w, key);
    gw_u32(w, 9);
    gw_u32(w, type);
    gw_u64(w, count);
    gw_bytes(w, v, 4 * count);
}

/*
 * SentencePiece's merges are implied by its pieces: each split of a piece
 * into two.  A vocabulary of every prefix of one long piece (1.3 MiB of
 * pieces, "a" to 1,600 a's) implies 1.28 million merges; made as text
 * they took 1.2 GiB and 8 s (issue 48), kept as ids they take the file's
 * order of memory: read under a limit of 192 MiB more than the process
 * holds, and the long piece is still one token.
 */
START_TEST(a_sentencepiece_gguf_takes_memory_linear_in_its_file)
{
    enum { LONG = 1600 };
    const int count = 256 + LONG;
    char **pieces = malloc((size_t)count * sizeof *pieces);
    float *scores = malloc((size_t)count * sizeof *scores);
    int32_t *types = malloc((size_t)count * sizeof *types);
    char path[512];
    struct gw w = { 0 };
    pid_t pid;
    int status;

    ck_assert(pieces != NULL && scores != NULL && types != NULL);
    for (int c = 0; c < 256; c++) {
        pieces[c] = malloc(8);
        snprintf(pieces[c], 8, "<0x%02X>", c);
        scores[c] = 0.0f;
        types[c] = 6; /* a byte */
    }
    for (int k = 1; k <= LONG; k++) {
        pieces[255 + k] = malloc((size_t)k + 1);
        memset(pieces[255 + k], 'a', (size_t)k);
        pieces[255 + k][k] = '\0';
        scores[255 + k] = (float)-k;
        types[255 + k] = 1; /* a normal piece */
    }
    gw_header(&w, 0, 5);
    gw_kv_str(&w, "tokenizer.ggml.model", "llama");
    gw_kv_strs(&w, "tokenizer.ggml.tokens", (const char *const *)pieces, (uint64_t)count);
    gw_kv_array4(&w, "tokenizer.ggml.scores", 6, scores, (uint64_t)count);
    gw_kv_array4(&w, "tokenizer.ggml.token_type", 5, types, (uint64_t)count);
    gw_str(&w, "tokenizer.ggml.add_space_prefix");
    gw_u32(&w, 7);
    gw_bytes(&w, "", 1); /* false */
    gw_data(&w, 0);
    snprintf(path, sizeof path, "%s/spm.gguf", dir);
    gw_save(&w, path);
    for (int i = 0; i < count; i++)
        free(pieces[i]);
    free(pieces);
    free(scores);
    free(types);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct gguf g;
        struct bpe b;
        struct attn_error err;
        char text[LONG + 1];
        int *ids = NULL, n = 0;
#if !defined(__SANITIZE_ADDRESS__)
        /* (AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot be used) */
        struct rlimit small;
        small.rlim_cur = small.rlim_max = test_address_space() + ((rlim_t)192 << 20);
        if (setrlimit(RLIMIT_AS, &small) != 0)
            _exit(3);
#endif
        if (gguf_open(&g, path, &err) != ATTN_OK || bpe_load_gguf(&b, &g, &err) != ATTN_OK) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(4);
        }
        memset(text, 'a', LONG);
        if (bpe_encode(&b, text, LONG, 0, &ids, &n, &err) != ATTN_OK || n != 1 ||
            ids[0] != 255 + LONG || b.merges != LONG * (LONG - 1) / 2)
            _exit(5);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
END_TEST

/*
 * Pieces none of which splits into two others imply no merges: refused by
 * name (its empty list of merges was sorted from a null pointer, which
 * UBSan reports: issue 48).
 */
START_TEST(a_sentencepiece_gguf_without_merges_is_refused)
{
    const char *pieces[258];
    char bytes[256][8];
    float scores[258] = { 0 };
    int32_t types[258];
    char path[512];
    struct gw w = { 0 };
    struct gguf g;
    struct bpe b;
    struct attn_error err;

    for (int c = 0; c < 256; c++) {
        snprintf(bytes[c], sizeof bytes[c], "<0x%02X>", c);
        pieces[c] = bytes[c];
        types[c] = 6;
    }
    pieces[256] = "a";
    pieces[257] = "b";
    types[256] = types[257] = 1;
    gw_header(&w, 0, 4);
    gw_kv_str(&w, "tokenizer.ggml.model", "llama");
    gw_kv_strs(&w, "tokenizer.ggml.tokens", pieces, 258);
    gw_kv_array4(&w, "tokenizer.ggml.scores", 6, scores, 258);
    gw_kv_array4(&w, "tokenizer.ggml.token_type", 5, types, 258);
    gw_data(&w, 0);
    snprintf(path, sizeof path, "%s/none.gguf", dir);
    gw_save(&w, path);
    ck_assert_msg(gguf_open(&g, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(bpe_load_gguf(&b, &g, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "no merges") != NULL, "%s",
                  err.msg);
    gguf_close(&g);
}
END_TEST

START_TEST(llama3_ids_are_the_references)
{
    check_tokenizer("llama3");
}
END_TEST

START_TEST(gemma3_ids_are_the_references)
{
    check_tokenizer("gemma3");
}
END_TEST

/*
 * The other tokenizer.json files npm's @lenml packages ship whole (issue
 * 60): Qwen2.5's, Llama 3.1's and 3.2's, Llama 2's (SentencePiece's BPE in
 * Hugging Face's form), Gemma 2's (byte fallback without <0x09>: its tab is
 * a token of its own) and gpt-oss's (o200k).  Each text the reference's ids.
 */
START_TEST(every_real_tokenizer_gives_the_references_ids)
{
    static const char *const names[] = { "qwen2_5", "llama3_1",    "llama3_2", "llama2",
                                         "gemma2",  "gptoss",      "gpt4o",    "gpt4",
                                         "claude",  "deepseek_v3", "mistral_nemo" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        check_tokenizer(names[i]);
}
END_TEST

/*
 * The cell panel's story of a special token (issue 62, item 2): Qwen3's
 * <|im_start|> and Llama 3's <|begin_of_text|> are added tokens, matched
 * whole; an ordinary token still tells its merges.
 */
START_TEST(special_tokens_tell_no_merges)
{
    static const char *const names[] = { "qwen3", "llama3" };
    static const char *const specials[] = { "<|im_start|>", "<|begin_of_text|>" };

    for (int k = 0; k < 2; k++) {
        struct bpe b;
        struct attn_error err;
        char story[512], want[128];
        int id = -1;
        int *ids = NULL;
        int n = 0;

        ck_assert_msg(bpe_load_tokenizer_json(&b, tokenizer_file(names[k]), &err) == ATTN_OK, "%s",
                      err.msg);
        for (int i = 0; i < b.vocab_size; i++)
            if (b.token[i] != NULL && strcmp(b.token[i], specials[k]) == 0)
                id = i;
        ck_assert_int_ge(id, 0);
        ck_assert_int_gt(bpe_token_story(&b, id, story, sizeof story), 0);
        snprintf(want, sizeof want, "%s (id %d) is a special token: matched whole", specials[k], id);
        ck_assert_msg(strncmp(story, want, strlen(want)) == 0, "%s", story);
        ck_assert(strstr(story, "merged by rank") == NULL);
        ck_assert_int_eq(bpe_encode(&b, " cat", 4, 0, &ids, &n, &err), ATTN_OK);
        ck_assert_int_ge(n, 1);
        ck_assert_int_gt(bpe_token_story(&b, ids[n - 1], story, sizeof story), 0);
        ck_assert_msg(strstr(story, "merged by rank:") != NULL, "%s", story);
        free(ids);
        bpe_destroy(&b);
    }
}
END_TEST

START_TEST(digits_then_byte_level_ids_are_the_references)
{
    check_tokenizer("digits");
}
END_TEST

/*
 * Digits as Hugging Face's Rust tokenizers split them (char::is_numeric:
 * every Unicode digit, not only ASCII's, which is where the JavaScript
 * ports differ): " \uff11\uff12" (fullwidth 1 and 2) is three pieces, the
 * space and each digit, so no token joins the space to the first digit.
 */
START_TEST(every_unicode_digit_is_a_digit)
{
    struct bpe b;
    struct attn_error err;
    int *ids, n;
    const char *text = " \xef\xbc\x91\xef\xbc\x92";

    ck_assert_msg(bpe_load_tokenizer_json(&b, digits_tokenizer(), &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(bpe_encode(&b, text, strlen(text), 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_ge(n, 3);
    ck_assert_int_eq(ids[0], 220); /* "\xc4\xa0" alone: the space */
    free(ids);
    bpe_destroy(&b);
}
END_TEST

/*
 * A tokenizer.json of a tiny BPE over characters with part's keys (a
 * "pre_tokenizer" among them, or none: null).
 */
static enum attn_status
load_with(const char *part, struct bpe *b, struct attn_error *err)
{
    char text[2048];

    snprintf(text, sizeof text,
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, "
             "\"<unk>\": 3}, \"merges\": [\"a b\"], \"unk_token\": \"<unk>\"}%s%s}",
             strstr(part, "pre_tokenizer") != NULL ? "" : ", \"pre_tokenizer\": null", part);
    return bpe_load_tokenizer_json(b, test_write_text(dir, "tokenizer.json", text), err);
}

static void
refused(const char *part, const char *says)
{
    struct bpe b;
    struct attn_error err;

    ck_assert_int_ne(load_with(part, &b, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, says) != NULL, "'%s' does not say '%s'", err.msg, says);
}

START_TEST(what_is_not_interpreted_is_refused_by_name)
{
    struct bpe b;
    struct attn_error err;
    const char *unigram = "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}";

    ck_assert_int_ne(bpe_load_tokenizer_json(&b, test_write_text(dir, "u.json", unigram), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "model.type Unigram is not supported yet") != NULL, "%s",
                  err.msg);
    refused(", \"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"_\"}",
            "pre-tokenizer Metaspace is not supported yet");
    refused(", \"normalizer\": {\"type\": \"Lowercase\"}",
            "normalizer Lowercase is not supported yet");
    refused(", \"post_processor\": {\"type\": \"RobertaProcessing\"}",
            "post_processor RobertaProcessing is not supported yet");
    refused(", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(\"}, "
            "\"behavior\": \"Isolated\"}",
            "does not compile");
}
END_TEST

/*
 * Normalizers that would grow a text without end (the fuzzer found a chain
 * of Replace normalizers with an empty pattern, each putting its content
 * between every two characters: a hostile tokenizer.json hung the
 * tokenizer): a pattern that matches the empty string is refused when
 * read, and a chain that makes the text more than 32 times longer (40 x 40
 * here) refused when a text is encoded; a Replace that keeps it short is
 * unchanged.
 */
START_TEST(normalizers_that_grow_without_end_are_refused)
{
    struct bpe b;
    struct attn_error err;
    int *ids, n;
    char part[512];
    const char *forty = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    refused(", \"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"String\": \"\"}, "
            "\"content\": \"ab\"}",
            "normalizer Replace's pattern matches the empty string");
    refused(", \"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"b*\"}, "
            "\"content\": \"a\"}",
            "matches the empty string");
    snprintf(part, sizeof part,
             ", \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": ["
             "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"%s\"},"
             "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"%s\"}]}",
             forty, forty);
    ck_assert_int_eq(load_with(part, &b, &err), ATTN_OK);
    ck_assert_int_eq(bpe_encode(&b, "ab", 2, 0, &ids, &n, &err), ATTN_OK); /* (1,600 bytes) */
    ck_assert_int_eq(n, 1600);
    free(ids);
    ck_assert_int_ne(bpe_encode(&b, "aaab", 4, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "more than 32 times longer") != NULL, "%s", err.msg);
    bpe_destroy(&b);
    ck_assert_int_eq(load_with(", \"normalizer\": {\"type\": \"Replace\", \"pattern\": "
                               "{\"String\": \"b\"}, \"content\": \"ab\"}",
                               &b, &err),
                     ATTN_OK);
    ck_assert_int_eq(bpe_encode(&b, "bb", 2, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 2); /* ab ab */
    free(ids);
    bpe_destroy(&b);
}
END_TEST

/*
 * A model over characters (no ByteLevel): unknown characters fuse into one
 * unknown token when fuse_unk; Prepend and a BOS template; a Split that
 * removes what it matches and one that keeps each match with the next piece.
 */
START_TEST(the_parts_do_what_they_say)
{
    struct bpe b;
    struct attn_error err;
    int *ids, n;

    ck_assert_int_eq(load_with(", \"post_processor\": {\"type\": \"TemplateProcessing\", "
                               "\"single\": [{\"SpecialToken\": {\"id\": \"<unk>\"}}, "
                               "{\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<unk>\": "
                               "{\"id\": \"<unk>\", \"ids\": [3]}}}",
                               &b, &err),
                     ATTN_OK);
    ck_assert_int_eq(bpe_encode(&b, "abba", 4, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 4); /* <unk> (the template's), ab, b, a */
    ck_assert(ids[0] == 3 && ids[1] == 2 && ids[2] == 1 && ids[3] == 0);
    free(ids);
    bpe_destroy(&b);
    ck_assert_int_eq(load_with(", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": "
                               "{\"String\": \"x\"}, \"behavior\": \"Removed\"}",
                               &b, &err),
                     ATTN_OK);
    ck_assert_int_eq(bpe_encode(&b, "axbab", 5, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 3); /* a | b ab: the x removed, and it cut "ab" */
    ck_assert(ids[0] == 0 && ids[1] == 1 && ids[2] == 2);
    free(ids);
    bpe_destroy(&b);
    ck_assert_int_eq(load_with(", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": "
                               "{\"String\": \"a\"}, \"behavior\": \"MergedWithNext\"}",
                               &b, &err),
                     ATTN_OK);
    ck_assert_int_eq(bpe_encode(&b, "bab", 3, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 2); /* b | ab */
    ck_assert(ids[0] == 1 && ids[1] == 2);
    free(ids);
    ck_assert_int_eq(bpe_encode(&b, "z\xc3\xa9z", 4, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 3); /* three characters it lacks, each <unk> (fuse_unk is false) */
    free(ids);
    bpe_destroy(&b);
}
END_TEST

/* The pieces a tokenizer's pre-tokenizers make of a text, joined by '|'. */
static void
collect_piece(void *ctx, const char *piece, size_t n)
{
    char *out = ctx;

    if (out[0] != '\0')
        strcat(out, "|");
    strncat(out, piece, n);
}

/*
 * A tokenizer.json of one pre-tokenizer (its JSON) over a vocabulary of
 * single characters; the pieces of text, as "a|b|c", into out.
 */
static enum attn_status
pieces_of(const char *pre, const char *text, char *out, struct attn_error *err)
{
    char json[1024];
    struct bpe b;
    enum attn_status rc;

    snprintf(json, sizeof json,
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"-\": 2, "
             "\"<unk>\": 3, \"ab\": 4}, \"merges\": [\"a b\"], \"unk_token\": \"<unk>\"}, "
             "\"pre_tokenizer\": %s}",
             pre);
    out[0] = '\0';
    rc = bpe_load_tokenizer_json(&b, test_write_text(dir, "tokenizer.json", json), err);
    if (rc != ATTN_OK)
        return rc;
    rc = tokjson_pieces(b.pipeline, text, strlen(text), collect_piece, out, err);
    bpe_destroy(&b);
    return rc;
}

/*
 * Split as Hugging Face's Rust source does it (tokenizers/src/tokenizer/
 * normalizer.rs, pattern.rs): the pieces of its own unit test (split.rs,
 * `basic`: each behavior on "How are you doing?" with \w+|[^\w\s]+ and
 * invert), and the cases issue 35 found: an empty match cuts (lookaheads),
 * MergedWithPrevious joins a match to what precedes it only when that is
 * not a match, so a run of matches is not glued to the previous piece.
 * (The JavaScript port keeps only Removed and treats every other behavior
 * as Isolated, so it is no reference for these.)
 */
START_TEST(splits_are_the_rust_sources)
{
    static const struct {
        const char *behavior, *pattern, *text, *want;
        bool invert;
    } cases[] = {
        { "Removed", "\\\\w+|[^\\\\w\\\\s]+", "How are you doing?", "How|are|you|doing|?", true },
        { "Isolated", "\\\\w+|[^\\\\w\\\\s]+", "How are you doing?",
          "How| |are| |you| |doing|?", true },
        { "MergedWithPrevious", "\\\\w+|[^\\\\w\\\\s]+", "How are you doing?",
          "How |are |you |doing|?", true },
        { "MergedWithNext", "\\\\w+|[^\\\\w\\\\s]+", "How are you doing?",
          "How| are| you| doing|?", true },
        { "Contiguous", "\\\\w+|[^\\\\w\\\\s]+", "How are you doing?",
          "How| |are| |you| |doing?", true },
        /* an empty match at each b: the text is cut before each */
        { "Isolated", "(?=b)", "abab", "a|ba|b", false },
        { "Isolated", "(?=a)", "aab", "a|ab", false },
        { "Removed", "(?=b)", "abab", "a|ba|b", false },
        /* runs of matches */
        { "MergedWithPrevious", "-", "a--b", "a-|-|b", false },
        { "MergedWithNext", "-", "a--b", "a|-|-b", false },
        { "Contiguous", "-", "a--b", "a|--|b", false },
        { "Isolated", "-", "a--b", "a|-|-|b", false },
        { "Removed", "-", "a--b", "a|b", false },
        { "Removed", "-", "a--b", "-|-", true },
        { "MergedWithPrevious", "-", "--a", "-|-|a", false }, /* (nothing before to join) */
    };
    char pre[256], got[256];
    struct attn_error err;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(pre, sizeof pre,
                 "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"%s\"}, \"behavior\": \"%s\", "
                 "\"invert\": %s}",
                 cases[i].pattern, cases[i].behavior, cases[i].invert ? "true" : "false");
        ck_assert_msg(pieces_of(pre, cases[i].text, got, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu (%s on %s): %s, want %s", i,
                      cases[i].behavior, cases[i].text, got, cases[i].want);
    }
}
END_TEST

/*
 * A pattern the regex engine gives up on (PCRE2's match limit: (a|a)+
 * backtracks 2^24 ways on 24 a's) fails the text, naming the file, where
 * the split used to end there silently (issue 35: 24 a's into 6 tokens).
 */
START_TEST(a_pattern_that_gives_up_fails_loudly)
{
    char got[256];
    struct attn_error err;

    ck_assert_int_eq(pieces_of("{\"type\": \"Split\", \"pattern\": {\"Regex\": "
                               "\"(a|a)+(?=x)|b\"}, \"behavior\": \"Isolated\"}",
                               "aaaaaaaaaaaaaaaaaaaaaaaa", got, &err),
                     ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "tokenizer.json: a pre-tokenizer's pattern gives up on 24 bytes"),
                  "%s", err.msg);
}
END_TEST

/*
 * A merge listed twice has its later rank, as the reference tokenizers'
 * tables keep it (Rust's HashMap, Python's dict): "a b" after "b c" loses
 * to it, so "abc" is a, bc (the JavaScript port agrees: [0, 4]).
 */
START_TEST(a_merge_listed_twice_keeps_its_later_rank)
{
    struct bpe b;
    struct attn_error err;
    int *ids, n;
    const char *json = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, "
                       "\"ab\": 3, \"bc\": 4, \"<unk>\": 5}, \"merges\": [\"a b\", \"b c\", "
                       "\"a b\"], \"unk_token\": \"<unk>\"}, \"pre_tokenizer\": null}";

    ck_assert_msg(bpe_load_tokenizer_json(&b, test_write_text(dir, "tokenizer.json", json), &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_int_eq(bpe_encode(&b, "abc", 3, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 2);
    ck_assert(ids[0] == 0 && ids[1] == 4);
    free(ids);
    bpe_destroy(&b);
}
END_TEST

/*
 * Ids a file cannot mean are refused when it is read, naming the file
 * (issue 35: an added token of id 16,777,215 made 16 million placeholder
 * tokens, 1.4 GB; ids past 2^31 wrapped to small ones: 2^32 + 5 became 5,
 * a template's 2^40 became 0).
 */
START_TEST(ids_out_of_range_are_refused_by_the_file)
{
    refused(", \"added_tokens\": [{\"id\": 16777215, \"content\": \"<x>\"}]",
            "added_tokens[0] ('<x>') has id 16777215: an added token's id is from 0 to 4");
    refused(", \"added_tokens\": [{\"id\": 4294967301, \"content\": \"<x>\"}]",
            "has id 4294967301");
    refused(", \"added_tokens\": [{\"id\": -1, \"content\": \"<x>\"}]", "has id -1");
    refused(", \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": "
            "[{\"SpecialToken\": {\"id\": \"<s>\"}}, {\"Sequence\": {\"id\": \"A\"}}], "
            "\"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1099511627776]}}}",
            "special token <s> has id 1099511627776, not a token of the vocabulary (0 to 3)");
    /* Added tokens just past the vocabulary, as Qwen's and Llama's follow theirs, are read. */
    {
        struct bpe b;
        struct attn_error err;
        ck_assert_msg(load_with(", \"added_tokens\": [{\"id\": 4, \"content\": \"<x>\"}, "
                                "{\"id\": 5, \"content\": \"<y>\"}]",
                                &b, &err) == ATTN_OK,
                      "%s", err.msg);
        bpe_destroy(&b);
    }
}
END_TEST

/*
 * A pre-tokenizer attnscope does not interpret is named first, before what
 * the rest would lack (issue 35: Metaspace, Whitespace, BertPreTokenizer or
 * a regex that does not compile, without ByteLevel, were told the model
 * "has neither byte_fallback nor an unk_token").
 */
START_TEST(the_first_thing_refused_is_named)
{
    static const char *const pres[][2] = {
        { "{\"type\": \"Whitespace\"}", "pre-tokenizer Whitespace is not supported yet" },
        { "{\"type\": \"BertPreTokenizer\"}", "pre-tokenizer BertPreTokenizer is not supported yet" },
        { "{\"type\": \"Metaspace\", \"replacement\": \"_\"}",
          "pre-tokenizer Metaspace is not supported yet" },
        { "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(\"}, \"behavior\": \"Isolated\"}",
          "does not compile" },
    };
    char json[1024];

    for (size_t i = 0; i < sizeof pres / sizeof pres[0]; i++) {
        struct bpe b;
        struct attn_error err;
        snprintf(json, sizeof json,
                 "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, "
                 "\"merges\": [\"a b\"]}, "
                 "\"pre_tokenizer\": %s}",
                 pres[i][0]);
        ck_assert_int_ne(
            bpe_load_tokenizer_json(&b, test_write_text(dir, "tokenizer.json", json), &err),
            ATTN_OK);
        ck_assert_msg(strstr(err.msg, pres[i][1]) != NULL, "%s", err.msg);
    }
}
END_TEST

static Suite *
tokjson_suite(void)
{
    Suite *s = suite_create("tokjson");
    TCase *t = tcase_create("tokjson");

    tcase_set_timeout(t, 120);
    tcase_add_checked_fixture(t, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(t, qwen3_ids_are_the_references);
    tcase_add_test(t, llama3_ids_are_the_references);
    tcase_add_test(t, gguf_tokenizers_give_the_references_ids);
    tcase_add_test(t, a_gguf_vocabulary_is_checked_as_read);
    tcase_add_test(t, a_sentencepiece_gguf_gives_sentencepieces_ids);
    tcase_add_test(t, a_sentencepiece_gguf_takes_memory_linear_in_its_file);
    tcase_add_test(t, a_sentencepiece_gguf_without_merges_is_refused);
    tcase_add_test(t, gemma3_ids_are_the_references);
    tcase_add_test(t, every_real_tokenizer_gives_the_references_ids);
    tcase_add_test(t, special_tokens_tell_no_merges);
    tcase_add_test(t, digits_then_byte_level_ids_are_the_references);
    tcase_add_test(t, every_unicode_digit_is_a_digit);
    tcase_add_test(t, what_is_not_interpreted_is_refused_by_name);
    tcase_add_test(t, normalizers_that_grow_without_end_are_refused);
    tcase_add_test(t, the_parts_do_what_they_say);
    tcase_add_test(t, splits_are_the_rust_sources);
    tcase_add_test(t, a_pattern_that_gives_up_fails_loudly);
    tcase_add_test(t, a_merge_listed_twice_keeps_its_later_rank);
    tcase_add_test(t, ids_out_of_range_are_refused_by_the_file);
    tcase_add_test(t, the_first_thing_refused_is_named);
    suite_add_tcase(s, t);
    return s;
}

TEST_MAIN(tokjson_suite)
