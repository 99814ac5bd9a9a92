/*
 * cli_internal.h: what cli.c (the parse) and cli_usage.c (--help's text)
 * share: the table of the options that are not knobs, and what an
 * unknown option is told.
 */
#ifndef ATTNSCOPE_FRONT_CLI_INTERNAL_H
#define ATTNSCOPE_FRONT_CLI_INTERNAL_H

#include <stddef.h>

enum usage_group { GROUP_INPUT, GROUP_ATTENTION, GROUP_WRITING, GROUP_OUTPUT };

struct plain_option {
    const char *name;
    char short_name;
    int val;
    const char *metavar; /* NULL: no argument */
    enum usage_group group;
    const char *help;    /* "%STAGES%" stands for the stage names */
};

/* Every option that is not a knob's (the knobs' are knob_table's), in --help's order. */
extern const struct plain_option plain_options[];
extern const size_t plain_option_count;

struct cli_options;
/* Two sources of text at once, or one the mode ignores (cli_check.c); -1, err says it. */
int cli_check_texts(const struct cli_options *o, char *err, size_t err_size);
/* --side and --compare-arith without --compare, --compare without --model or in a lesson. */
int cli_check_compare(const struct cli_options *o, char *err, size_t err_size);

struct option;
/*
 * An unknown long option given among all (getopt's table): the nearest by
 * edit distance suggested, or what a prefix could be; -1, err says it.
 */
int cli_unknown_option(const struct option *all, const char *given, char *err, size_t size);

/* The options each knob of knob_table has room for. */
#define KNOB_OPTIONS (sizeof knob_table[0].options / sizeof knob_table[0].options[0])

#endif
