/*
 * main_internal.h: what the program's two files share: main.c (the command
 * line, the book's classes, lessons and the view) and run_model.c (a
 * trained model's run).
 */
#ifndef ATTNSCOPE_MAIN_INTERNAL_H
#define ATTNSCOPE_MAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/models/model.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/cli/cli.h"
#include "front/cli/print.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

/* Says msg (escaped) on standard error and gives code back. */
int die(int code, const char *msg);
/* "attnscope: wrote N files into DIR" on standard error, DIR escaped. */
void said_written(int written, const char *dir);
/* Whether a status from a pipeline or a model's check is the options' fault (exit 2). */
int is_usage_status(enum attn_status st);
/* What the command line adds to the model's files: the first's (--model) or the second's. */
struct model_options model_options_of(const struct cli_options *o, bool second);
/* Resolves every --stage name; an unknown one is a usage error (-1, msg says it). */
int resolve_stages(const struct pipeline *p, const struct cli_options *o,
                   struct pipeline_selection *chosen, char *msg, size_t size);
/* Whether every --stage named needs no (H, n, n) attention stage, or no layer kept. */
bool shows_no_attention(const struct cli_options *o);
bool shows_no_layer(const struct cli_options *o);
bool shows_no_next(const struct cli_options *o);
/* Where --print's heatmap goes and in which colours. */
void heatmap_output(const struct cli_options *o, struct print_options *po);
/* --print's exit: 0, or the code of a heatmap that could not be drawn or a stdout that failed. */
int printed(bool heatmap_failed);
/* The interactive view (or --figure) over src; dec: a model whose weights it may pack. */
int run_tui(const struct cli_options *o, const struct pipeline_source *src,
            struct decoder_model *dec);
/* --model: the whole run of a trained model, its exit code. */
int run_model(const struct cli_options *given, const char *sentence);

#endif
