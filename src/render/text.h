/*
 * text.h: word wrap and numbers said in words for the renderer's panels.  Characters and their widths
 * are attnscope/utf8.h's.
 */
#ifndef ATTNSCOPE_RENDER_TEXT_H
#define ATTNSCOPE_RENDER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/utf8.h"

/*
 * Greedy word wrap: the byte length of the longest prefix of s (from start)
 * that fits in width columns, breaking after a space when it can.  *next
 * receives where the following line starts (spaces skipped).
 */
size_t text_wrap(const char *s, int width, size_t *next);

/*
 * p (0 to 1) as a percentage with the decimals it needs to be told from 0
 * ("0.3%", "0.004%"), whole percents from 1% up ("27%"), "<0.0001%" below
 * that; "0%" only for 0.
 */
void text_percent(char *out, size_t size, double p);

#endif
