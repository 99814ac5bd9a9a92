/*
 * options.c: fuzzes the command line.  The input is split at NUL bytes into
 * arguments (at most 32); whatever cli_parse() accepts is then run as
 * --print would run it, with the built-in vocabulary: the pipeline, the
 * --stage names, and the tables or heatmaps in the chosen format, written
 * to /dev/null.  Options that name files or folders (-e, --weights, --qkv,
 * --export, --walkthrough) are parsed but not acted on.  An argument
 * COLUMNS=TEXT is not an option: it is $COLUMNS, the heatmaps' width as
 * main.c reads it (print_width), so widths from 1e9 to garbage are reached.
 */
#include "config.h"

#include <stdlib.h>

#include "attnscope/pipeline/pipeline.h"
#include "attnscope/text/vocab.h"
#include "front/cli/cli.h"
#include "fuzz.h"
#include "front/cli/print.h"

#define MAX_ARGS 32

static struct vocab book;

static void
run(const struct cli_options *o, const char *columns)
{
    struct pipeline_source src = { .sentence = o->sentence, .vocab = &book, .source = o->source };
    struct pipeline_selection chosen[CLI_MAX_STAGES];
    struct print_options po;
    struct pipeline p;
    struct attn_error err;

    if (!fuzz_small_pair(&o->cfg, o->sentence, o->source) ||
        pipeline_create(&p, &o->cfg, &src, &err) != ATTN_OK)
        return;
    for (int i = 0; i < o->stage_count; i++)
        if (pipeline_select(&p, o->stages[i], &chosen[i]) != 0)
            goto out;
    memset(&po, 0, sizeof po);
    po.digits = o->digits;
    po.count = o->stage_count;
    po.chosen = chosen;
    po.vocab_source = book.source;
    po.format = o->format;
    po.heatmap = o->heatmap;
    po.depth = DEPTH_256;
    po.utf8 = true;
    po.width = print_width(0, columns);
    print_pipeline(fuzz_sink(), &p, &po);
out:
    pipeline_destroy(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *argv[MAX_ARGS + 2];
    int argc = 1;
    struct cli_options o;
    char msg[1024];
    const char *columns = NULL;

    if (text == NULL)
        return 0;
    if (book.count == 0 && vocab_builtin(&book, NULL) != ATTN_OK)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    argv[0] = (char *)"attnscope";
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(text + at) + 1) {
        if (strncmp(text + at, "COLUMNS=", 8) == 0)
            columns = text + at + 8;
        else
            argv[argc++] = text + at;
    }
    argv[argc] = NULL;
    if (cli_parse(argc, argv, &o, msg, sizeof msg) != 0) {
        if (msg[0] == '\0' || strchr(msg, '\n') != NULL)
            abort(); /* an error is one line, and says something */
    } else if (o.mode != CLI_HELP && o.mode != CLI_VERSION && o.embeddings == NULL &&
               o.weights_dir == NULL && o.qkv_dir == NULL && o.walkthrough == NULL) {
        run(&o, columns);
    }
    free(text);
    return 0;
}
