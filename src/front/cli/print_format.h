/*
 * print_format.h: the formats --print writes tables in, apart from the
 * printing itself so that the command line can name them.
 */
#ifndef ATTNSCOPE_FRONT_PRINT_FORMAT_H
#define ATTNSCOPE_FRONT_PRINT_FORMAT_H

enum print_format { PRINT_TEXT, PRINT_CSV, PRINT_MARKDOWN, PRINT_LATEX };

/* Parses a --format value; returns 0, or -1 for an unknown name. */
int print_format_parse(const char *name, enum print_format *f);

#endif
