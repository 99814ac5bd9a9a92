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

#include "attnscope/families/model/switches.h"
#include "attnscope/attention/attention_config.h"
#include "front/cli/print_format.h"

enum cli_mode {
    CLI_TUI, CLI_PRINT, CLI_EXPORT, CLI_FIGURE, CLI_HELP, CLI_VERSION, CLI_HELP_KEYS, CLI_HELP_STAGES
};

#define CLI_MAX_STAGES 64
/* --arith's two: the exact arithmetic (the default) and llama.cpp's int8 one. */
enum { CLI_ARITH_EXACT, CLI_ARITH_INT8 };

/*
 * --eos as given: not given (the model's own end tokens), none (id -1), a
 * token id, or a token's text (text not empty), looked up in the model.
 */
struct write_eos {
    bool given;
    int id;
    char text[128];
};

struct cli_options {
    enum cli_mode mode;
    struct attention_config cfg;
    const char *sentence;
    const char *embeddings;          /* vocabulary CSV, or NULL for the built-in one */
    const char *weights_dir;         /* --weights, or NULL */
    const char *qkv_dir;             /* --qkv: queries.csv, keys.csv, values.csv, or NULL */
    const char *export_dir;          /* --export */
    bool print_and_export;           /* --print and --export: mode CLI_PRINT, then the export */
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
    const char *sentence_file;       /* -f: the text from a file ("-": standard input), or NULL */
    const char *chat;                /* --chat TEXT: a user message in the model's template */
    const char *source;              /* --source: cross-attention's source sentence, or NULL */
    const char *source_file;         /* --source-file: the source from a file, or NULL */
    const char *source_embeddings;   /* --source-embeddings: the source's vocabulary CSV, or NULL */
    const char *model;               /* --model (or $ATTNSCOPE_MODEL): a folder or a name, or NULL */
    bool model_from_env;             /* the model came from $ATTNSCOPE_MODEL */
    const char *compare;             /* --compare: a second model beside the first, or NULL */
    int side;                        /* --side: enum compare_side, or -1 (the view: the
                                        difference; --print: all three) */
    int layer;                       /* --layer, or -1 */
    int top;                         /* --top: next tokens per position */
    bool bos;                        /* --bos */
    bool verify;                     /* --verify: an Ollama blob's SHA-256 checked */
    int threads;                     /* --threads, or 0: $ATTNSCOPE_THREADS or every core */
    int arith;                       /* --arith: CLI_ARITH_EXACT (the default) or _INT8 */
    int compare_arith;               /* --compare-arith, or -1: --arith's */
    struct model_switches_given switches; /* --ablate, --expert-off, --no-sinks (switches.h) */
    int model_heads;                 /* --heads with --model: the head count no file gives, or 0 */
    const char *classes;             /* --classes A,B: a classifier's class names, or NULL */
    /* Where the view opens (and what --figure draws): */
    const char *figure;              /* --figure FILE (.svg, .png, .pdf), or NULL */
    const char *head;                /* --head H or L.H, or NULL */
    const char *view;                /* --view stage|grid|map|sentence|next, or NULL */
    const char *query;               /* --query TOKEN or N: the row, or NULL */
    /* Writing (a trained model): */
    int generate;                    /* --generate N: tokens to write, or -1 */
    struct write_eos eos;            /* --eos ID|TEXT|none (write_end_of reads it) */
};

/* The next tokens --print and --export show per position, unless --top says. */
#define CLI_DEFAULT_TOP 5

/* The sentence attnscope starts on: the book's. */
#define CLI_DEFAULT_SENTENCE "Your journey starts with one step"

/*
 * Parses argv into o.  Returns 0, or -1 with a one-line message naming the
 * option in err.  Can be called more than once (it resets getopt).
 */
int cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t err_size);

/* The same for a lesson step's options: $ATTNSCOPE_MODEL is not read (the lesson names its model). */
int cli_parse_lesson(int argc, char **argv, struct cli_options *o, char *err, size_t err_size);

/* The --help text. */
const char *cli_usage(void);

/*
 * Why --stage name was refused (got: pipeline_select's answer, not 0): a
 * head out of range, or no such stage, with the names p has, for --print and
 * --export or (in_view) for where the view opens.
 */
struct pipeline;
void cli_stage_refused(const struct pipeline *p, const char *name, int got, bool in_view, char *msg,
                       size_t size);

#endif
