/*
 * text.h: UTF-8 decoding and display widths for the renderer.
 *
 * Widths come from a small built-in table (combining marks 0, East Asian wide
 * and emoji 2, everything else 1) rather than wcwidth(), so a frame does not
 * depend on the locale and the golden screens are the same everywhere.
 */
#ifndef ATTNSCOPE_RENDER_TEXT_H
#define ATTNSCOPE_RENDER_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one code point at s (NUL-terminated); returns the bytes used (>= 1).
 * Invalid bytes decode as U+FFFD, one byte each. */
int text_decode(const char *s, uint32_t *cp);

/* Columns code point cp takes: 0, 1 or 2. */
int text_char_width(uint32_t cp);

/* Columns the UTF-8 string s takes. */
int text_width(const char *s);

/* Encodes cp as UTF-8 into buf (at least 5 bytes); returns the length. */
int text_encode(uint32_t cp, char *buf);

/*
 * Greedy word wrap: the byte length of the longest prefix of s (from start)
 * that fits in width columns, breaking after a space when it can.  *next
 * receives where the following line starts (spaces skipped).
 */
size_t text_wrap(const char *s, int width, size_t *next);

#endif
