/*
 * cli.h: attnscope's command line, parsed into one struct.
 *
 * The option names are a contract (tests, scripts and lecture notes use
 * them); doc/attnscope.1 lists them all.
 */
#ifndef ATTNSCOPE_CLI_H
#define ATTNSCOPE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/attention_config.h"
#include "front/print_format.h"

enum cli_mode { CLI_TUI, CLI_PRINT, CLI_EXPORT, CLI_HELP, CLI_VERSION };

#define CLI_MAX_STAGES 64

struct cli_options {
    enum cli_mode mode;
    struct attention_config cfg;
    const char *sentence;
    const char *embeddings;          /* vocabulary CSV, or NULL for the built-in one */
    const char *weights_dir;         /* --weights, or NULL */
    const char *qkv_dir;             /* --qkv: queries.csv, keys.csv, values.csv, or NULL */
    const char *export_dir;          /* --export */
    int stage_count;                 /* --stage, in the order given */
    const char *stages[CLI_MAX_STAGES];
    int digits;                      /* decimals printed by --print */
    enum print_format format;        /* --format */
    bool heatmap;                    /* --heatmap */
    bool mono;                       /* --mono: no colour in the TUI */
    bool present;                    /* --present: presentation mode */
    const char *walkthrough;         /* --walkthrough FILE, or NULL */
    uint64_t knobs_given;            /* bit k: an option set knob k (enum knob_id) */
    bool sentence_given;             /* -s was given */
};

/* The sentence attnscope starts on: the book's. */
#define CLI_DEFAULT_SENTENCE "Your journey starts with one step"

/*
 * Parses argv into o.  Returns 0, or -1 with a one-line message naming the
 * option in err.  Can be called more than once (it resets getopt).
 */
int cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t err_size);

/* The --help text. */
const char *cli_usage(void);

#endif
