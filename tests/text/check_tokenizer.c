/* check_tokenizer.c: sentences into tokens (src/core/text/tokenizer.c). */
#include "config.h"

#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "testutil.h"

static void
expect_tokens(const char *sentence, int count, const char *const *want)
{
    struct token_list tl;
    struct attn_error err;

    ck_assert_msg(tokenizer_split(sentence, &tl, &err) == ATTN_OK, "'%s': %s", sentence, err.msg);
    ck_assert_int_eq(tl.count, count);
    for (int i = 0; i < count; i++)
        ck_assert_str_eq(tl.text[i], want[i]);
    token_list_destroy(&tl);
}

START_TEST(words_and_punctuation_split)
{
    const char *const a[] = { "Hello", "shiny", "sun", "!" };
    const char *const b[] = { "Your", "journey", "starts", "with", "one", "step" };
    const char *const c[] = { "don", "'", "t", "stop", ",", "3", ".", "14" };

    expect_tokens("Hello shiny sun!", 4, a);
    expect_tokens("  Your\tjourney\nstarts with   one step ", 6, b);
    expect_tokens("don't stop, 3.14", 8, c);
}
END_TEST

START_TEST(non_ascii_letters_stay_in_words)
{
    const char *const a[] = { "café", "naïve", "Ηλιος", "?" };

    expect_tokens("café naïve Ηλιος?", 4, a);
}
END_TEST

START_TEST(offsets_point_into_the_sentence)
{
    struct token_list tl;
    const char *s = "ab, cd";

    ck_assert_int_eq(tokenizer_split(s, &tl, NULL), ATTN_OK);
    ck_assert_int_eq(tl.count, 3);
    ck_assert_int_eq(tl.offset[0], 0);
    ck_assert_int_eq(tl.length[0], 2);
    ck_assert_int_eq(tl.offset[1], 2);
    ck_assert_int_eq(tl.offset[2], 4);
    ck_assert_int_eq(tl.length[2], 2);
    token_list_destroy(&tl);
}
END_TEST

static void
expect_refused(const char *sentence, enum attn_status status, const char *needle)
{
    struct token_list tl;
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_int_eq(tokenizer_split(sentence, &tl, &err), status);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
    ck_assert_int_eq(tl.count, 0);
}

START_TEST(bad_sentences_are_refused)
{
    expect_refused("", ATTN_EVALUE, "empty");
    expect_refused(" \t\n", ATTN_EVALUE, "empty");
    expect_refused("ok \xff", ATTN_EPARSE, "not valid UTF-8 (byte 4, 0xFF)");
    expect_refused("\xc0\xaf", ATTN_EPARSE, "not valid UTF-8");     /* overlong '/' */
    expect_refused("\xed\xa0\x80", ATTN_EPARSE, "not valid UTF-8"); /* a surrogate */
    expect_refused("caf\xc3", ATTN_EPARSE, "not valid UTF-8");      /* cut short */
    expect_refused("a\x01" "b", ATTN_EPARSE, "control character");
    expect_refused("a \x7f", ATTN_EPARSE, "control character (byte 3, U+007F)");
    expect_refused("\x1b[31m", ATTN_EPARSE, "control character (byte 1, U+001B)");
    /* A C1 control (U+009B, a terminal's CSI) at a word's start and inside one. */
    expect_refused("\xc2\x9b" "31m", ATTN_EPARSE, "control character (byte 1, U+009B)");
    expect_refused("caf\xc3\xa9\xc2\x9b" "x", ATTN_EPARSE, "control character (byte 6, U+009B)");
    /* Bidirectional controls reorder the terminal's row: U+202E (RLO) and U+2067 (RLI). */
    expect_refused("abc \xe2\x80\xae" "def", ATTN_EPARSE, "control character (byte 5, U+202E)");
    expect_refused("ab\xe2\x81\xa7", ATTN_EPARSE, "control character (byte 3, U+2067)");
}
END_TEST

START_TEST(token_limit_is_enforced)
{
    size_t n = TOKENIZER_MAX_TOKENS;
    char *s = malloc(2 * (n + 1) + 1);
    struct token_list tl;
    struct attn_error err;

    for (size_t i = 0; i < n; i++) {
        s[2 * i] = 'a';
        s[2 * i + 1] = ' ';
    }
    s[2 * n] = '\0';
    ck_assert_int_eq(tokenizer_split(s, &tl, &err), ATTN_OK);
    ck_assert_int_eq(tl.count, TOKENIZER_MAX_TOKENS);
    token_list_destroy(&tl);
    strcpy(s + 2 * n, "b");
    ck_assert_int_eq(tokenizer_split(s, &tl, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "4096 tokens") != NULL, "%s", err.msg);
    free(s);

    /* Past the byte limit (what no command line can carry, but a file can). */
    s = malloc(TOKENIZER_MAX_BYTES + 2);
    memset(s, ' ', TOKENIZER_MAX_BYTES + 1);
    s[0] = 'a';
    s[TOKENIZER_MAX_BYTES + 1] = '\0';
    ck_assert_int_eq(tokenizer_split(s, &tl, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "1048577 bytes long; attnscope's limit is 1048576 bytes") != NULL,
                  "%s", err.msg);
    free(s);
}
END_TEST


/* Sizes read as people read them: 6.3 MiB, not "6496.0 KiB" (issue 50, item 10). */
START_TEST(sizes_take_the_unit_that_reads)
{
    char out[32];

    ck_assert_str_eq(attn_size_text(out, sizeof out, 0), "0 B");
    ck_assert_str_eq(attn_size_text(out, sizeof out, 1023), "1023 B");
    ck_assert_str_eq(attn_size_text(out, sizeof out, 6144), "6.0 KiB");
    ck_assert_str_eq(attn_size_text(out, sizeof out, 6496 * 1024), "6.3 MiB");
    /* never "1024.0 KiB": a rounding up to the next unit takes that unit */
    ck_assert_str_eq(attn_size_text(out, sizeof out, 1024 * 1024 - 1), "1.0 MiB");
    ck_assert_str_eq(attn_size_text(out, sizeof out, (size_t)3 << 30), "3.0 GiB");
    ck_assert_str_eq(attn_size_text(out, 5, 6144), "6.0 "); /* cut, never overrun */
}
END_TEST

START_TEST(messages_show_control_characters_escaped)
{
    char out[64];
    struct attn_error err;

    attn_escape_text(out, sizeof out, "a\nb\tc\r\x1b[2J\x7f caf\xc3\xa9 \xc2\x9b \xff");
    ck_assert_str_eq(out, "a\\nb\\tc\\r\\x1B[2J\\x7F caf\xc3\xa9 \\xC2\\x9B \\xFF");
    /* Cut short where an escape would not fit, never in the middle of one. */
    ck_assert_uint_eq(attn_escape_text(out, 6, "ab\x01" "cd"), 2);
    ck_assert_str_eq(out, "ab");
    ck_assert_uint_eq(attn_escape_text(out, 1, "abc"), 0);
    ck_assert_str_eq(out, "");
    /* Every core message goes through it: one line, whatever it quotes. */
    attn_fail(&err, ATTN_EPARSE, "'%s' is not a number", "1\n2");
    ck_assert_str_eq(err.msg, "'1\\n2' is not a number");
    {
        /* Too long for the message: the middle goes, the start and the reason stay. */
        char path[2000];
        size_t len;
        memset(path, 'p', sizeof path);
        memcpy(path, "start/", 6);
        path[sizeof path - 1] = '\0';
        attn_fail(&err, ATTN_EIO, "%s: cannot open: No such file or directory", path);
        len = strlen(err.msg);
        ck_assert_uint_eq(len, sizeof err.msg - 1);
        ck_assert_msg(strncmp(err.msg, "start/ppp", 9) == 0, "%s", err.msg);
        ck_assert_ptr_nonnull(strstr(err.msg, "ppp ... ppp"));
        ck_assert_str_eq(err.msg + len - 40, "ppp: cannot open: No such file or directory" + 3);
        /* Cut on a character boundary: a run of 2-byte characters stays valid UTF-8. */
        for (size_t i = 0; i + 2 < sizeof path; i += 2)
            memcpy(path + i, "\xc3\xa9", 2);
        path[sizeof path - 1] = '\0';
        attn_fail(&err, ATTN_EIO, "%s!", path);
        len = strlen(err.msg);
        ck_assert_uint_eq(utf8_text_span((const unsigned char *)err.msg, len, ""), len);
        ck_assert_int_eq(err.msg[len - 1], '!');
    }
}
END_TEST

static Suite *
tokenizer_suite(void)
{
    Suite *s = suite_create("tokenizer");
    TCase *tc = tcase_create("split");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, words_and_punctuation_split);
    tcase_add_test(tc, non_ascii_letters_stay_in_words);
    tcase_add_test(tc, offsets_point_into_the_sentence);
    tcase_add_test(tc, bad_sentences_are_refused);
    tcase_add_test(tc, token_limit_is_enforced);
    tcase_add_test(tc, messages_show_control_characters_escaped);
    tcase_add_test(tc, sizes_take_the_unit_that_reads);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(tokenizer_suite)
