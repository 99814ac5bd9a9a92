/*
 * utf8.h: the one UTF-8 and display-width module of attnscope.
 *
 * The core validates text with it (sentences, labels, messages), the
 * renderer measures and draws with it, and the front ends edit and print
 * with it.  Widths come from a small built-in table (combining marks and
 * zero-width characters 0, East Asian wide and emoji 2, everything else 1)
 * rather than wcwidth(), so a frame or a --print table does not depend on
 * the locale and golden files are the same everywhere.
 */
#ifndef ATTNSCOPE_UTF8_H
#define ATTNSCOPE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The number of bytes of the valid UTF-8 sequence starting at s (1 to 4), or
 * 0 if s does not start one (a stray byte, a truncated, overlong or
 * surrogate sequence, or a code point past U+10FFFF).
 */
int utf8_length(const unsigned char *s, size_t avail);

/*
 * Decodes one code point at s (NUL-terminated); returns the bytes used
 * (>= 1; 0 only at the terminating NUL).  A byte that does not start a
 * valid sequence decodes as U+FFFD, one byte.
 */
int utf8_decode(const char *s, uint32_t *cp);

/* Encodes cp as UTF-8 into buf (at least 4 bytes); returns the length. */
int utf8_encode(uint32_t cp, char *buf);

/* Where the character before byte pos of s starts (0 at the start). */
size_t utf8_prev(const char *s, size_t pos);

/* Columns code point cp takes: 0, 1 or 2 (controls take 0). */
int utf8_char_width(uint32_t cp);

/* Columns the UTF-8 string s takes. */
int utf8_width(const char *s);

/*
 * The longest prefix of s, in bytes, that takes at most width columns; its
 * columns in *cols (may be NULL).  Never cuts inside a character.
 */
size_t utf8_prefix(const char *s, int width, int *cols);

/*
 * The number of bytes of the control character at s (1 for C0 and DEL, 2
 * for a C1 code point U+0080 to U+009F, 2 or 3 for a bidirectional
 * formatting character: U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
 * U+2069), or 0 if s does not start one.  Terminals act on these (bidi
 * controls reverse or shift what follows on the row), so attnscope never
 * shows them as they are.
 */
int utf8_control_length(const unsigned char *s, size_t avail);

/*
 * How many of the len bytes at s are text safe to show as they are: valid
 * UTF-8 without control characters, but for the ASCII ones in allowed (such
 * as "\n\t").  len if all of them are.
 */
size_t utf8_text_span(const unsigned char *s, size_t len, const char *allowed);

#endif
