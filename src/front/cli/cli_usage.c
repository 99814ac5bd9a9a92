/* cli_usage.c: --help's text, made from the options' table and the knobs' (see cli.h). */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/base/status.h"
#include "attnscope/models/model.h"
#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/families/model/switches.h"
#include "front/cli/cli.h"
#include "front/cli/cli_internal.h"

/* --------------------------------------------------------- unknown options */

/* The edit distance of a and b (insertions, deletions, substitutions, swaps of two), at most 63 bytes. */
static int
edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    int d[64][64];

    if (na > 63 || nb > 63)
        return 64;
    for (size_t i = 0; i <= na; i++)
        for (size_t j = 0; j <= nb; j++) {
            int best;
            if (i == 0 || j == 0) {
                d[i][j] = (int)(i + j);
                continue;
            }
            best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

/*
 * An unknown long option: "--sentance: unknown option;
 * did you mean --sentence?", the nearest option by edit distance (one edit
 * in a name of under 8 letters, one in four in a longer), or every option
 * a prefix could be.
 */
int
cli_unknown_option(const struct option *all, const char *given, char *err, size_t size)
{
    const char *name = given + 2;
    const size_t n = strcspn(name, "=");
    const char *best = NULL;
    int best_d = 64;
    char also[256] = "";
    int prefixed = 0;

    for (const struct option *op = all; op->name != NULL; op++) {
        const int dist = edit_distance(name, n, op->name, strlen(op->name));
        if (n > 0 && strncmp(op->name, name, n) == 0) {
            if (prefixed++ < 6)
                attn_appendf(also, sizeof also, &(size_t){ strlen(also) }, "%s--%s",
                             prefixed > 1 ? ", " : "", op->name);
        }
        if (dist < best_d)
            best_d = dist, best = op->name;
    }
    if (prefixed > 1)
        return attn_fail_text(err, size, "%.*s: which option? it begins %s%s", (int)(n + 2), given,
                              also, prefixed > 6 ? ", ..." : "");
    if (best != NULL && n >= 3 && best_d <= (n >= 8 ? (int)n / 4 : 1))
        return attn_fail_text(err, size, "%.*s: unknown option; did you mean --%s?", (int)(n + 2),
                              given, best);
    return attn_fail_text(err, size, "%s: unknown option", given);
}

/* ------------------------------------------------------------------ usage */

#define USAGE_HELP_COLUMN 26
#define USAGE_WIDTH 92

struct usage {
    char *buf;
    size_t size;
    size_t len;
};

/* Appends to the usage text. */
#define add(u, ...) attn_appendf((u)->buf, (u)->size, &(u)->len, __VA_ARGS__)

/* The families --model opens, by the architecture table's titles: "GPT-2, Llama, ... or gpt-oss". */
static const char *
family_titles(char *buf, size_t size)
{
    size_t at = 0;
    int n = 0;

    while (architectures[n] != NULL)
        n++;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        attn_appendf(buf, size, &at, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                     architectures[i]->title);
    return buf;
}

/*
 * help with its lists put in from the tables that decide them: %STAGES%
 * the stages, %FAMILIES% the architectures --model opens, %SHIPPED% the
 * models that ship.  Of any length (a fixed buffer cut --stage's help
 * mid-word once the stages grew); NULL when help has none.
 */
static char *
expand_lists(const char *help)
{
    static const char *const marks[] = { "%STAGES%", "%FAMILIES%", "%SHIPPED%" };
    char *text = NULL;

    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
        const char *from = text != NULL ? text : help;
        const char *at = strstr(from, marks[k]);
        char list[4096];
        char *made;
        if (at == NULL)
            continue;
        if (k == 0)
            pipeline_stage_names(NULL, " ", list, sizeof list);
        else if (k == 1)
            family_titles(list, sizeof list);
        else if (model_shipped_names(list, sizeof list) == 0)
            snprintf(list, sizeof list, "minigpt, minillama, ...");
        if (asprintf(&made, "%.*s%s%s", (int)(at - from), from, list, at + strlen(marks[k])) < 0)
            made = NULL;
        free(text);
        text = made;
        if (text == NULL)
            return NULL;
    }
    return text;
}

/* One option: its names on the left, its help wrapped in the column on the right. */
static void
add_option(struct usage *u, char short_name, const char *name, const char *metavar, const char *help)
{
    char left[64];
    char *text = NULL;
    const char *t;
    int col = 0;

    snprintf(left, sizeof left, "  %c%c%s--%s%s%s", short_name ? '-' : ' ',
             short_name ? short_name : ' ', short_name ? ", " : "  ", name, metavar ? " " : "",
             metavar ? metavar : "");
    add(u, "%s", left);
    col = (int)strlen(left);
    text = expand_lists(help);
    t = text != NULL ? text : help;
    if (col + 1 > USAGE_HELP_COLUMN) {
        add(u, "\n");
        col = 0;
    }
    while (*t != '\0') {
        size_t fit = strlen(t);
        if (fit > (size_t)(USAGE_WIDTH - USAGE_HELP_COLUMN)) {
            fit = (size_t)(USAGE_WIDTH - USAGE_HELP_COLUMN);
            while (fit > 0 && t[fit] != ' ')
                fit--;
            if (fit == 0)
                fit = strcspn(t, " ");
        }
        add(u, "%*s%.*s\n", USAGE_HELP_COLUMN - col, "", (int)fit, t);
        col = 0;
        t += fit;
        while (*t == ' ')
            t++;
    }
    free(text);
}

static void
add_group(struct usage *u, enum usage_group g, const char *title)
{
    add(u, "\n%s:\n", title);
    for (size_t i = 0; i < plain_option_count; i++) {
        const struct plain_option *o = &plain_options[i];
        if (o->group == g && o->name == NULL) /* (the model's switches stand here) */
            for (int sw = 0; sw < SWITCH_COUNT; sw++)
                add_option(u, 0, model_switch_table[sw].option, model_switch_table[sw].metavar,
                           model_switch_table[sw].help);
        else if (o->group == g)
            add_option(u, o->short_name, o->name, o->metavar, o->help);
    }
    for (int k = 0; k < KNOB_COUNT; k++) {
        const struct knob *kn = &knob_table[k];
        bool in = g == GROUP_INPUT       ? kn->group == KNOB_GROUP_INPUT
                  : g == GROUP_ATTENTION ? kn->group == KNOB_GROUP_ATTENTION
                                         : g == GROUP_WRITING && kn->group == KNOB_GROUP_WRITING;
        for (size_t j = 0; in && j < KNOB_OPTIONS; j++)
            if (kn->options[j].name != NULL && kn->options[j].help != NULL)
                add_option(u, 0, kn->options[j].name, kn->options[j].metavar, kn->options[j].help);
    }
}

const char *
cli_usage(void)
{
    static char text[16384];

    if (text[0] == '\0') {
        struct usage u = { text, sizeof text, 0 };
        add(&u, "Usage: attnscope [options]                 step through attention interactively\n"
                "       attnscope --print [options]         every stage as text tables\n"
                "       attnscope --export DIR [options]    every stage and parameter as CSV files\n"
                "       attnscope --model DIR --print       a trained GPT-2, Llama or Qwen, layer by "
                "layer\n");
        add_group(&u, GROUP_INPUT, "Input");
        add_group(&u, GROUP_ATTENTION, "Attention");
        add_group(&u, GROUP_WRITING, "Writing (a trained model, --model)");
        add_group(&u, GROUP_OUTPUT, "Output");
        add(&u, "\nExit status: 0 on success, 1 when an input or output fails, 2 for a bad option.\n"
                "See attnscope(1) for the keys, the CSV layouts and examples (in a clone of\n"
                "the source: man -l doc/attnscope.1).\n");
    }
    return text;
}

