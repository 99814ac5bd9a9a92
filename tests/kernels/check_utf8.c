/*
 * check_utf8.c: the one UTF-8 module (src/core/base/utf8.c): validation,
 * decoding, encoding, display widths and safe-text spans.
 */
#include "config.h"

#include <string.h>

#include "attnscope/base/utf8.h"
#include "testutil.h"

#define U(s) ((const unsigned char *)(s))

START_TEST(lengths_accept_utf8_and_refuse_the_rest)
{
    ck_assert_int_eq(utf8_length(U("a"), 1), 1);
    ck_assert_int_eq(utf8_length(U("\xc3\xa9"), 2), 2);
    ck_assert_int_eq(utf8_length(U("\xe6\x97\xa5"), 3), 3);
    ck_assert_int_eq(utf8_length(U("\xf0\x9f\x98\x80"), 4), 4);
    ck_assert_int_eq(utf8_length(U("\xc3\xa9"), 1), 0);         /* truncated */
    ck_assert_int_eq(utf8_length(U("\xc0\xaf"), 2), 0);         /* overlong '/' */
    ck_assert_int_eq(utf8_length(U("\xe0\x80\xaf"), 3), 0);     /* overlong, 3 bytes */
    ck_assert_int_eq(utf8_length(U("\xed\xa0\x80"), 3), 0);     /* a UTF-16 surrogate */
    ck_assert_int_eq(utf8_length(U("\xf4\x90\x80\x80"), 4), 0); /* past U+10FFFF */
    ck_assert_int_eq(utf8_length(U("\x80"), 1), 0);             /* a stray continuation */
    ck_assert_int_eq(utf8_length(U("\xe6\x41\xa5"), 3), 0);     /* broken continuation */
    ck_assert_int_eq(utf8_length(U(""), 0), 0);
}
END_TEST

START_TEST(decode_and_encode_round_trip)
{
    static const uint32_t cps[] = { 0x41, 0xE9, 0x7FF, 0x800, 0x65E5, 0xFFFD, 0x10000, 0x1F600, 0x10FFFF };

    for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
        char buf[8] = { 0 };
        uint32_t back;
        int n = utf8_encode(cps[i], buf);
        ck_assert_int_eq(utf8_decode(buf, &back), n);
        ck_assert_uint_eq(back, cps[i]);
        ck_assert_int_eq(utf8_length(U(buf), (size_t)n), n);
    }
    {
        uint32_t cp;
        ck_assert_int_eq(utf8_decode("\xff" "a", &cp), 1); /* invalid: U+FFFD, one byte */
        ck_assert_uint_eq(cp, 0xFFFD);
        ck_assert_int_eq(utf8_decode("\xe6\x97", &cp), 1); /* cut short by the NUL */
        ck_assert_uint_eq(cp, 0xFFFD);
        ck_assert_int_eq(utf8_decode("", &cp), 0);
    }
}
END_TEST

START_TEST(widths_do_not_depend_on_the_locale)
{
    ck_assert_int_eq(utf8_width("abc"), 3);
    ck_assert_int_eq(utf8_width("caf\xc3\xa9"), 4);
    ck_assert_int_eq(utf8_width("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"), 6); /* three CJK */
    ck_assert_int_eq(utf8_width("e\xcc\x81"), 1);                           /* e + combining acute */
    ck_assert_int_eq(utf8_width("\xf0\x9f\x98\x80"), 2);                    /* an emoji */
    ck_assert_int_eq(utf8_char_width(0x07), 0);
    ck_assert_int_eq(utf8_char_width(0x85), 0);
    {
        /* The tables' edges, on both sides (binary search, Latin fast path). */
        static const struct { uint32_t cp; int w; } edges[] = {
            { 0x2FF, 1 },   { 0x300, 0 },   { 0x36F, 0 },   { 0x370, 1 },   { 0x0E31, 0 },
            { 0x0E32, 1 },  { 0x1100, 2 },  { 0x115F, 2 },  { 0x1160, 1 },  { 0x200B, 0 },
            { 0x2010, 1 },  { 0xFE0F, 0 },  { 0xFE10, 1 },  { 0xFE2F, 0 },  { 0xFE30, 2 },
            { 0xFE4F, 2 },  { 0xFE50, 1 },  { 0x1F64F, 2 }, { 0x1F650, 1 }, { 0x3FFFD, 2 },
            { 0x3FFFE, 1 }, { 0x10FFFF, 1 },
        };
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            ck_assert_msg(utf8_char_width(edges[i].cp) == edges[i].w, "U+%04X: width %d, not %d",
                          (unsigned)edges[i].cp, utf8_char_width(edges[i].cp), edges[i].w);
    }
}
END_TEST

START_TEST(prefixes_never_cut_a_character)
{
    int cols;
    /* "日本語x": each CJK character takes two columns. */
    const char *s = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e" "x";

    ck_assert_uint_eq(utf8_prefix(s, 5, &cols), 6);
    ck_assert_int_eq(cols, 4);
    ck_assert_uint_eq(utf8_prefix(s, 7, &cols), 10);
    ck_assert_int_eq(cols, 7);
    ck_assert_uint_eq(utf8_prefix(s, 1, &cols), 0);
    ck_assert_int_eq(cols, 0);
    /* A combining mark stays with its letter: it takes no column. */
    ck_assert_uint_eq(utf8_prefix("e\xcc\x81z", 1, NULL), 3);
    ck_assert_uint_eq(utf8_prev(s, 6), 3);
    ck_assert_uint_eq(utf8_prev(s, 3), 0);
    ck_assert_uint_eq(utf8_prev(s, 0), 0);
}
END_TEST

START_TEST(safe_text_has_no_controls)
{
    ck_assert_int_eq(utf8_control_length(U("\x1b["), 2), 1);
    ck_assert_int_eq(utf8_control_length(U("\x7f"), 1), 1);
    ck_assert_int_eq(utf8_control_length(U("\xc2\x9b"), 2), 2); /* C1 CSI */
    ck_assert_int_eq(utf8_control_length(U("\xc2\xa0"), 2), 0); /* no-break space */
    ck_assert_int_eq(utf8_control_length(U("\xe2\x80\xae"), 3), 3); /* RLO */
    ck_assert_int_eq(utf8_control_length(U("\xe2\x80\x8f"), 3), 3); /* RLM */
    ck_assert_int_eq(utf8_control_length(U("\xe2\x81\xa9"), 3), 3); /* PDI */
    ck_assert_int_eq(utf8_control_length(U("\xd8\x9c"), 2), 2);     /* ALM */
    ck_assert_int_eq(utf8_control_length(U("\xe2\x80\xaf"), 3), 0); /* narrow no-break space */
    ck_assert_int_eq(utf8_control_length(U("\xe2\x80\xa9"), 3), 0); /* paragraph separator: width 0, no reordering */
    ck_assert_uint_eq(utf8_text_span(U("ok\tthen"), 7, "\t"), 7);
    ck_assert_uint_eq(utf8_text_span(U("ok\tthen"), 7, ""), 2);
    ck_assert_uint_eq(utf8_text_span(U("a\xc2\x9b" "b"), 4, ""), 1);
    ck_assert_uint_eq(utf8_text_span(U("ab\xff"), 3, ""), 2);
    ck_assert_uint_eq(utf8_text_span(U("a\0b"), 3, ""), 1);
}
END_TEST

/* The length of the text at s that utf8_text_span() lets through. */
static size_t
span(const char *s, size_t len, const char *allowed)
{
    return utf8_text_span((const unsigned char *)s, len, allowed);
}

START_TEST(text_span_stops_at_what_cannot_be_shown)
{
    ck_assert_uint_eq(span("caf\xc3\xa9 \xf0\x9f\x8c\x8d", 10, ""), 10);
    ck_assert_uint_eq(span("one\ntwo", 7, ""), 3);
    ck_assert_uint_eq(span("one\ntwo\tthree", 13, "\n\t"), 13);
    ck_assert_uint_eq(span("one\r\n", 5, "\n"), 3);
    ck_assert_uint_eq(span("a\x1b[2J", 6, "\n"), 1);
    ck_assert_uint_eq(span("a\x7f", 2, "\n"), 1);
    ck_assert_uint_eq(span("ab\xc2\x9b", 4, "\n"), 2);  /* C1 */
    ck_assert_uint_eq(span("ab\xc3", 3, ""), 2);          /* cut UTF-8 */
    ck_assert_uint_eq(span("ab\xff", 3, ""), 2);          /* never UTF-8 */
    ck_assert_uint_eq(span("ab\0cd", 5, "\n"), 2);        /* NUL is never allowed */
    ck_assert_uint_eq(span("", 0, ""), 0);
}
END_TEST

static Suite *
utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("utf8");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, lengths_accept_utf8_and_refuse_the_rest);
    tcase_add_test(tc, decode_and_encode_round_trip);
    tcase_add_test(tc, widths_do_not_depend_on_the_locale);
    tcase_add_test(tc, prefixes_never_cut_a_character);
    tcase_add_test(tc, safe_text_has_no_controls);
    tcase_add_test(tc, text_span_stops_at_what_cannot_be_shown);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(utf8_suite)
