/*
 * cli_internal.h: what cli.c (the parse) and cli_usage.c (--help's text)
 * share: the table of the options that are not knobs.
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

/* The options each knob of knob_table has room for. */
#define KNOB_OPTIONS (sizeof knob_table[0].options / sizeof knob_table[0].options[0])

#endif
