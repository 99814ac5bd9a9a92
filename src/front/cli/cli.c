/* cli.c: the command line (see cli.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/switches.h"
#include "front/cli/cli.h"
#include "front/cli/cli_internal.h"

/* The options that are not knobs (the knobs' come from knob_table). */
enum {
    OPT_WEIGHTS = 256,
    OPT_PRINT,
    OPT_EXPORT,
    OPT_STAGE,
    OPT_DIGITS,
    OPT_MONO,
    OPT_QKV,
    OPT_FORMAT,
    OPT_HEATMAP,
    OPT_WALKTHROUGH,
    OPT_PRESENT,
    OPT_VERSION,
    OPT_HELP_KEYS,
    OPT_HELP_STAGES,
    OPT_MODEL,
    OPT_COMPARE,
    OPT_SIDE,
    OPT_LAYER,
    OPT_TOP,
    OPT_BOS,
    OPT_THREADS,
    OPT_ARITH,
    OPT_COMPARE_ARITH,
    OPT_SWITCHES, /* where the model's switches stand in plain_options */
    OPT_SOURCE,
    OPT_SOURCE_FILE,
    OPT_SOURCE_EMBEDDINGS,
    OPT_CLASSES,
    OPT_VERIFY,
    OPT_FIGURE,
    OPT_HEAD,
    OPT_VIEW,
    OPT_QUERY,
    OPT_GENERATE,
    OPT_EOS,
    OPT_CHAT,
    OPT_SWITCH, /* + switch: a trained model's switches (switches.h's table) */
    OPT_KNOB = OPT_SWITCH + SWITCH_COUNT /* + 2 * knob + option: the knobs' options */
};

const struct plain_option plain_options[] = {
    { "sentence", 's', 's', "TEXT", GROUP_INPUT, "the sentence (default \"" CLI_DEFAULT_SENTENCE "\")" },
    { "sentence-file", 'f', 'f', "FILE", GROUP_INPUT,
      "read the sentence from FILE (- for standard input; one final newline is dropped)" },
    { "chat", 0, OPT_CHAT, "TEXT", GROUP_INPUT,
      "with --model: the text as one user message in the model's own chat template (ChatML, "
      "Llama 3, Gemma, Phi, Olmo 2, Mistral), with the assistant's turn begun, as Hugging "
      "Face's apply_chat_template makes it" },
    { "source", 0, OPT_SOURCE, "TEXT", GROUP_INPUT,
      "cross-attention: queries from the sentence (the target), keys and values from TEXT (the "
      "source); no mask" },
    { "source-file", 0, OPT_SOURCE_FILE, "FILE", GROUP_INPUT,
      "the source sentence from FILE (- for standard input)" },
    { "source-embeddings", 0, OPT_SOURCE_EMBEDDINGS, "FILE", GROUP_INPUT,
      "the source's vocabulary CSV (default: the sentence's, -e); the same width" },
    { "model", 0, OPT_MODEL, "PATH", GROUP_INPUT,
      "a trained %FAMILIES%: a folder (Hugging Face's, or gpt2/124M as the "
      "book's chapter 5 downloads it, or LM Studio's of one .gguf), a weights file (model.pth, "
      "qwen3-0.6B.pth, model.safetensors, a GGUF file), a name in the Hugging Face cache (gpt2, "
      "Qwen/Qwen3-0.6B, ...), an Ollama model (qwen3:0.6b) or one that ships (%SHIPPED%); "
      "default $ATTNSCOPE_MODEL, none for the book's classes" },
    { "compare", 0, OPT_COMPARE, "PATH", GROUP_INPUT,
      "with --model: a second model (any form --model takes: a quantized, fine-tuned or "
      "otherwise trained checkpoint of the same shapes and tokenizer) through the same text; "
      "every stage three ways (the first's, the second's, second minus first), the heads ranked "
      "by how much their attention changed, both next-token distributions and their KL "
      "divergence" },
    { "side", 0, OPT_SIDE, "SIDE", GROUP_OUTPUT,
      "with --compare: first, second or difference, the one of the three the view opens on "
      "(default difference), --figure draws and --print prints (default all three)" },
    { "layer", 0, OPT_LAYER, "L", GROUP_INPUT,
      "with --model: the layer --print shows (from 0; default 0)" },
    { "top", 0, OPT_TOP, "K", GROUP_INPUT,
      "with --model: the next tokens shown per position (default 5; 0 skips the model's head)" },
    { "bos", 0, OPT_BOS, NULL, GROUP_INPUT,
      "with --model: put the model's first token before the text (its bos_token_id: "
      "<|begin_of_text|>, <bos>; GPT-2's <|endoftext|>), as interpretability tools do" },
    /* (a trained model's switches, --ablate ..., from their table: switches.h) */
    { NULL, 0, OPT_SWITCHES, NULL, GROUP_INPUT, NULL },
    { "classes", 0, OPT_CLASSES, "A,B,...", GROUP_INPUT,
      "with --model: a classifier's class names, in the order of its outputs (default class 0, "
      "class 1, ...)" },
    { "verify", 0, OPT_VERIFY, NULL, GROUP_INPUT,
      "with --model: hash an Ollama model's weights against the SHA-256 they are named by before "
      "reading them (gigabytes: Ollama checked them when it pulled them)" },
    { "threads", 0, OPT_THREADS, "N", GROUP_INPUT,
      "with --model: threads for the forward pass (default $ATTNSCOPE_THREADS, or every core)" },
    { "arith", 0, OPT_ARITH, "exact|int8", GROUP_INPUT,
      "with --model: the arithmetic of a quantized model's products: exact (the default: each "
      "weight widened, products in float32, PyTorch's numbers) or int8 (llama.cpp's: the "
      "activations rounded to 8 bits, the products in integers; faster, not exact) for its "
      "Q4_0, Q8_0, Q4_K and Q6_K matrices" },
    { "compare-arith", 0, OPT_COMPARE_ARITH, "exact|int8", GROUP_INPUT,
      "with --compare: the second model's arithmetic (default --arith's); --compare of the same "
      "file with --compare-arith int8 shows what the int8 arithmetic changes" },
    { "embeddings", 'e', 'e', "FILE", GROUP_INPUT,
      "vocabulary CSV: token,v1,...,vd (default: the book's six words)" },
    { "weights", 0, OPT_WEIGHTS, "DIR", GROUP_INPUT,
      "load the parameters --export wrote instead of drawing them" },
    { "qkv", 0, OPT_QKV, "DIR", GROUP_INPUT,
      "take Q, K and V from DIR/queries.csv, keys.csv, values.csv (as --export writes them) "
      "instead of a sentence" },
    { "generate", 0, OPT_GENERATE, "N", GROUP_WRITING,
      "with --model: write N tokens after the text, one at a time, as the book's generate does "
      "(--print shows each with its probability and rank, --export adds generated.csv; the "
      "view opens on the text written)" },
    { "eos", 0, OPT_EOS, "ID|TEXT|none", GROUP_WRITING,
      "stop writing when the model chooses this token (an id or its text, '<|im_end|>'), which "
      "is not written (the book's eos_id); default: the end tokens the model's files name "
      "(generation_config.json's eos_token_id, a GGUF's eos and eot), none for the book's "
      ".pth" },
    { "print", 0, OPT_PRINT, NULL, GROUP_OUTPUT,
      "print the stages instead of starting the interactive view" },
    { "stage", 0, OPT_STAGE, "NAME", GROUP_OUTPUT,
      "only this stage (repeatable), with --print or --export; NAME is a stage (%STAGES%), a "
      "stage of one head (weights.h1), a parameter (W_query.weight), or with --model tokens, "
      "next (the next tokens), heads (the model map), lens (the logit lens) or kv (the KV "
      "cache, also cache); without them, "
      "the stage the view opens on" },
    { "head", 0, OPT_HEAD, "H", GROUP_OUTPUT,
      "the head the view opens on; L.H: head H of layer L (with --model)" },
    { "view", 0, OPT_VIEW, "SCREEN", GROUP_OUTPUT,
      "the screen the view opens on: stage (default), grid (every head side by side), map (the "
      "model map), overview (every head's weights), sentence, next (the predictions)" },
    { "query", 0, OPT_QUERY, "TOKEN", GROUP_OUTPUT,
      "the query (row) the view opens on: a token (it, or it#6 for a repeated one) or a position "
      "from 0 (default: the last on the sentence and next screens, else the first)" },
    { "figure", 0, OPT_FIGURE, "FILE", GROUP_OUTPUT,
      "draw what the view would open on (--stage, --layer, --head, --view, --query) into FILE "
      "instead of starting it: FILE.svg, FILE.png or FILE.pdf" },
    { "digits", 0, OPT_DIGITS, "N", GROUP_OUTPUT, "decimals printed by --print (default 4)" },
    { "format", 0, OPT_FORMAT, "F", GROUP_OUTPUT,
      "--print's tables as text (default), csv, markdown or latex" },
    { "heatmap", 0, OPT_HEATMAP, NULL, GROUP_OUTPUT,
      "--print heatmaps instead of tables (colour on a terminal, glyphs otherwise)" },
    { "export", 0, OPT_EXPORT, "DIR", GROUP_OUTPUT, "write every stage and parameter as CSV files into DIR" },
    { "mono", 0, OPT_MONO, NULL, GROUP_OUTPUT, "no colour in the interactive view" },
    { "present", 0, OPT_PRESENT, NULL, GROUP_OUTPUT,
      "presentation mode: scaled to the screen and centred, high contrast, no bars" },
    { "walkthrough", 0, OPT_WALKTHROUGH, "FILE", GROUP_OUTPUT,
      "play a scripted lesson (a file, or the name of an installed one); with --print, write it "
      "out as a handout" },
    { "help", 'h', 'h', NULL, GROUP_OUTPUT, "this help" },
    { "help-stages", 0, OPT_HELP_STAGES, NULL, GROUP_OUTPUT,
      "every stage --stage and the view know, a line each (as the manual's STAGES lists them)" },
    { "help-keys", 0, OPT_HELP_KEYS, NULL, GROUP_OUTPUT,
      "every key of the interactive view and what it does (as ? shows them)" },
    { "version", 0, OPT_VERSION, NULL, GROUP_OUTPUT, "the version" },
};

const size_t plain_option_count = sizeof plain_options / sizeof plain_options[0];
#define PLAIN_COUNT (sizeof plain_options / sizeof plain_options[0])

/* The long name of the plain option with value val. */
static const char *
plain_name(int val)
{
    if (val >= OPT_SWITCH && val < OPT_SWITCH + SWITCH_COUNT)
        return model_switch_table[val - OPT_SWITCH].option;
    for (size_t i = 0; i < PLAIN_COUNT; i++)
        if (plain_options[i].val == val && plain_options[i].name != NULL)
            return plain_options[i].name;
    return "?";
}

/* getopt's table, made from the two tables above. */
static const struct option *
long_options(void)
{
    static struct option all[PLAIN_COUNT + SWITCH_COUNT + KNOB_COUNT * KNOB_OPTIONS + 1];

    if (all[0].name == NULL) {
        size_t n = 0;
        for (int sw = 0; sw < SWITCH_COUNT; sw++)
            all[n++] = (struct option){ model_switch_table[sw].option,
                                        model_switch_table[sw].metavar ? required_argument
                                                                       : no_argument,
                                        NULL, OPT_SWITCH + sw };
        for (size_t i = 0; i < PLAIN_COUNT; i++)
            if (plain_options[i].name != NULL)
                all[n++] = (struct option){ plain_options[i].name,
                                        plain_options[i].metavar ? required_argument : no_argument,
                                        NULL, plain_options[i].val };
        for (int k = 0; k < KNOB_COUNT; k++)
            for (size_t j = 0; j < KNOB_OPTIONS; j++)
                if (knob_table[k].options[j].name != NULL)
                    all[n++] = (struct option){ knob_table[k].options[j].name,
                                                knob_table[k].options[j].metavar ? required_argument
                                                                                 : no_argument,
                                                NULL, OPT_KNOB + 2 * k + (int)j };
    }
    return all;
}

/* A knob's option as given: applied once every option is read, in knob priority order. */
struct knob_setting {
    const struct knob *knob;
    const char *option;
    const char *text;
};

/* Sets knob k from an option's text into cfg; the message names "--NAME". */
static int
set_knob(struct attention_config *cfg, const struct knob_setting *ks, char *err, size_t size)
{
    char option[64];

    snprintf(option, sizeof option, "--%s", ks->option);
    return knob_parse(ks->knob, cfg, option, ks->text, err, size);
}

/* --model with options that only the book's classes have: refused, naming the option. */
static int
check_model(struct cli_options *o, const struct knob_setting *settings, int count, char *err,
            size_t err_size)
{
    const char *env = o->model_from_env ? " ($ATTNSCOPE_MODEL names a model: --model none for the "
                                          "book's classes)"
                                        : "";
    const char *input = o->embeddings != NULL    ? "--embeddings"
                        : o->source != NULL      ? "--source"
                        : o->source_file != NULL ? "--source-file"
                        : o->source_embeddings != NULL ? "--source-embeddings"
                        : o->weights_dir != NULL ? "--weights"
                        : o->qkv_dir != NULL     ? "--qkv"
                                                 : NULL;

    if (input != NULL)
        return attn_fail_text(err, err_size,
                              "%s is for the book's classes; a trained model brings its own "
                              "vocabulary and weights%s",
                              input, env);
    for (int i = 0; i < count; i++)
        if (settings[i].knob - knob_table == KNOB_HEADS) {
            /* The head count where the model's files do not give it (checked against theirs). */
            if (knob_parse_int("--heads", settings[i].text, 1, 1 << 16, &o->model_heads, err,
                               err_size) != 0)
                return -1;
        } else if (!(KNOB_MODEL_SET & ((uint64_t)1 << (settings[i].knob - knob_table))))
            return attn_fail_text(err, err_size,
                                  "--%s does not apply to a trained model: its weights fix the "
                                  "attention (the knobs that do apply: --mask, --scale, "
                                  "--no-scale, --temperature, and the writing's --seed, "
                                  "--sample-temperature, --top-k, --top-p)%s",
                                  settings[i].option, env);
    for (int i = 0; o->top == 0 && i < o->stage_count; i++)
        if (strcmp(o->stages[i], "next") == 0)
            return attn_fail_text(err, err_size,
                                  "--stage next with --top 0: no next tokens to show (--top 0 "
                                  "skips the model's head); give --top 1 or more");
    return 0;
}

/*
 * --eos ID|TEXT|none: a whole number is an id; anything else but none the
 * text of a token (--eos '<|im_end|>'), looked up once the model is open.
 */
static int
eos_option(struct write_eos *e, const char *arg, char *err, size_t err_size)
{
    const char *p = arg;

    memset(e, 0, sizeof *e);
    e->given = true;
    e->id = -1;
    if (strcmp(arg, "none") == 0)
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p == '\0' && p != arg)
        return knob_parse_int("--eos", arg, 0, 1 << 30, &e->id, err, err_size);
    if (arg[0] == '\0' || strlen(arg) >= sizeof e->text)
        return attn_fail_text(err, err_size,
                              "--eos: give a token id, a token's text (at most %zu bytes) or none",
                              sizeof e->text - 1);
    snprintf(e->text, sizeof e->text, "%s", arg);
    return 0;
}

/*
 * One of the plain options (not a knob's): 0, -1 with err set, or 1 for an
 * option that ends parsing (--help, --version, --help-keys).
 */

/*
 * --print, --figure or --export: one of them (or --print and --export, both
 * done), their argument not empty (arg NULL: none).  Two others are refused
 * by name, in that order whichever came first.
 */
static int
output_mode(struct cli_options *o, enum cli_mode mode, const char *arg, char *err,
            size_t err_size)
{
    static const struct {
        enum cli_mode mode;
        const char *name;
        const char *what; /* its argument */
    } outputs[] = {
        { CLI_PRINT, "print", NULL },
        { CLI_FIGURE, "figure", "file name" },
        { CLI_EXPORT, "export", "folder name" },
    };
    int had = -1;
    int now = -1;

    for (int i = 0; i < 3; i++) {
        if (outputs[i].mode == o->mode)
            had = i;
        if (outputs[i].mode == mode)
            now = i;
    }
    o->mode = mode;
    /* --print and --export together: print, then export the same run. */
    if (had >= 0 && had != now &&
        (outputs[had].mode == CLI_PRINT || outputs[now].mode == CLI_PRINT) &&
        (outputs[had].mode == CLI_EXPORT || outputs[now].mode == CLI_EXPORT)) {
        o->mode = CLI_PRINT;
        o->print_and_export = true;
    } else if (had >= 0 && had != now)
        return attn_fail_text(err, err_size, "--%s and --%s: choose one",
                              outputs[had < now ? had : now].name,
                              outputs[had < now ? now : had].name);
    if (arg != NULL && arg[0] == '\0')
        return attn_fail_text(err, err_size, "--%s: the %s is empty", outputs[now].name,
                              outputs[now].what);
    return 0;
}

/* Whether c only names a file, a folder or a text, or turns something on: then it is set. */
static bool
simple_option(struct cli_options *o, int c, const char *arg)
{
    static const struct {
        int opt;
        size_t field;
        bool flag; /* a bool field set true, not a string */
    } simple[] = {
        { 'e', offsetof(struct cli_options, embeddings), false },
        { 'f', offsetof(struct cli_options, sentence_file), false },
        { OPT_MODEL, offsetof(struct cli_options, model), false },
        { OPT_COMPARE, offsetof(struct cli_options, compare), false },
        { OPT_CLASSES, offsetof(struct cli_options, classes), false },
        { OPT_SOURCE, offsetof(struct cli_options, source), false },
        { OPT_SOURCE_FILE, offsetof(struct cli_options, source_file), false },
        { OPT_SOURCE_EMBEDDINGS, offsetof(struct cli_options, source_embeddings), false },
        { OPT_WEIGHTS, offsetof(struct cli_options, weights_dir), false },
        { OPT_QKV, offsetof(struct cli_options, qkv_dir), false },
        { OPT_WALKTHROUGH, offsetof(struct cli_options, walkthrough), false },
        { OPT_HEAD, offsetof(struct cli_options, head), false },
        { OPT_VIEW, offsetof(struct cli_options, view), false },
        { OPT_QUERY, offsetof(struct cli_options, query), false },
        { OPT_CHAT, offsetof(struct cli_options, chat), false },
        { OPT_BOS, offsetof(struct cli_options, bos), true },
        { OPT_VERIFY, offsetof(struct cli_options, verify), true },
        { OPT_MONO, offsetof(struct cli_options, mono), true },
        { OPT_HEATMAP, offsetof(struct cli_options, heatmap), true },
        { OPT_PRESENT, offsetof(struct cli_options, present), true },
    };

    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (simple[i].opt == c) {
            if (simple[i].flag)
                *(bool *)(void *)((char *)o + simple[i].field) = true;
            else
                *(const char **)(void *)((char *)o + simple[i].field) = arg;
            return true;
        }
    return false;
}

static int
plain_option(struct cli_options *o, int c, const char *arg, char **argv, char *err, size_t err_size)
{
    int r = 0;

    if (simple_option(o, c, arg))
        return 0;
    if (c >= OPT_SWITCH && c < OPT_SWITCH + SWITCH_COUNT)
        return model_switch_parse(&o->switches, (enum model_switch_id)(c - OPT_SWITCH), arg, err,
                                  err_size);
    switch (c) {
    case 's':
        o->sentence = arg;
        o->sentence_given = true;
        break;
    case OPT_LAYER:
        r = knob_parse_int("--layer", arg, 0, 100000, &o->layer, err, err_size);
        break;
    case OPT_SIDE:
        for (o->side = 0; o->side < COMPARE_SIDES &&
                          strcmp(arg, compare_side_name((enum compare_side)o->side)) != 0;
             o->side++)
            ;
        if (o->side == COMPARE_SIDES)
            r = attn_fail_text(err, err_size, "--side %s: choose first, second or difference",
                               arg);
        break;
    case OPT_TOP:
        r = knob_parse_int("--top", arg, 0, 1000, &o->top, err, err_size);
        break;
    case OPT_GENERATE:
        r = knob_parse_int("--generate", arg, 0, 1000000, &o->generate, err, err_size);
        break;
    case OPT_EOS:
        r = eos_option(&o->eos, arg, err, err_size);
        break;
    case OPT_THREADS:
        r = knob_parse_int("--threads", arg, 1, PARALLEL_MAX_THREADS, &o->threads, err, err_size);
        break;
    case OPT_ARITH:
    case OPT_COMPARE_ARITH: {
        int *into = c == OPT_ARITH ? &o->arith : &o->compare_arith;
        if (strcmp(arg, "exact") == 0 || strcmp(arg, "int8") == 0)
            *into = strcmp(arg, "int8") == 0 ? CLI_ARITH_INT8 : CLI_ARITH_EXACT;
        else
            r = attn_fail_text(err, err_size, "--%s %s: choose exact or int8",
                               c == OPT_ARITH ? "arith" : "compare-arith", arg);
        break;
    }
    case OPT_PRINT:
        r = output_mode(o, CLI_PRINT, NULL, err, err_size);
        break;
    case OPT_FIGURE:
        r = output_mode(o, CLI_FIGURE, arg, err, err_size);
        o->figure = arg;
        break;
    case OPT_EXPORT:
        r = output_mode(o, CLI_EXPORT, arg, err, err_size);
        o->export_dir = arg;
        break;
    case OPT_STAGE:
        if (o->stage_count == CLI_MAX_STAGES)
            r = attn_fail_text(err, err_size, "--stage: at most %d stages", CLI_MAX_STAGES);
        else
            o->stages[o->stage_count++] = arg;
        break;
    case OPT_DIGITS:
        r = knob_parse_int("--digits", arg, 0, 9, &o->digits, err, err_size);
        break;
    case OPT_FORMAT:
        if (print_format_parse(arg, &o->format) != 0)
            r = attn_fail_text(err, err_size,
                     "--format: '%s' is not a format; choose text, csv, markdown or latex", arg);
        break;
    case 'h':
        o->mode = CLI_HELP;
        return 1;
    case OPT_VERSION:
        o->mode = CLI_VERSION;
        return 1;
    case OPT_HELP_KEYS:
        o->mode = CLI_HELP_KEYS;
        return 1;
    case OPT_HELP_STAGES:
        o->mode = CLI_HELP_STAGES;
        return 1;
    case ':':
        r = attn_fail_text(err, err_size, "%s needs a value", argv[optind - 1]);
        break;
    default:
        if (optopt != 0 && optopt < 256)
            r = attn_fail_text(err, err_size, "-%c: unknown option", optopt);
        else if (strncmp(argv[optind - 1], "--", 2) == 0)
            r = cli_unknown_option(long_options(), argv[optind - 1], err, err_size);
        else
            r = attn_fail_text(err, err_size, "%s: unknown option", argv[optind - 1]);
        break;
    }
    return r;
}

/*
 * The writing's options: a trained model's, and with --print or --export
 * only beside --generate (they choose what it writes).
 */
static int
check_writing(const struct cli_options *o, const struct knob_setting *settings, int count,
              char *err, size_t err_size)
{
    const char *writing = NULL;

    for (int i = 0; i < count && writing == NULL; i++)
        if (KNOB_WRITING_SET & ((uint64_t)1 << (settings[i].knob - knob_table)))
            writing = settings[i].option;
    if (o->model == NULL && (o->generate >= 0 || o->eos.given || writing != NULL))
        return attn_fail_text(err, err_size,
                              "--%s is a trained model's (--model): the book's classes have no "
                              "vocabulary head to write from",
                              o->generate >= 0 ? "generate" : o->eos.given ? "eos" : writing);
    if (o->model == NULL || o->generate >= 0 || (o->mode != CLI_PRINT && o->mode != CLI_EXPORT))
        return 0;
    if (writing == NULL && o->eos.given)
        writing = "eos";
    if (writing == NULL && (o->knobs_given & ((uint64_t)1 << KNOB_SEED)))
        writing = "seed";
    if (writing != NULL)
        return attn_fail_text(err, err_size,
                              "--%s chooses what a model writes: give --generate N (the tokens "
                              "to write)%s",
                              writing,
                              o->model_from_env ? " ($ATTNSCOPE_MODEL names a model: --model "
                                                  "none for the book's classes)"
                                                : "");
    if (o->walkthrough != NULL && o->generate >= 0)
        return attn_fail_text(err, err_size, "--walkthrough: each step says what it shows; drop "
                                             "--generate");
    return 0;
}

/*
 * The checks that need every option, then the knobs in priority order: the
 * variant first (it sets the mask and scaling its class uses), then the
 * knobs, then the explicit --mask and --scale/--no-scale.
 */
static int
check_modes(int argc, char **argv, struct cli_options *o, bool variant_given,
            const struct knob_setting *settings, int count, char *err, size_t err_size)
{
    const int sw = model_switch_given(&o->switches); /* the first switch given, or -1 */

    if (optind < argc)
        return attn_fail_text(err, err_size,
                    "'%s': unexpected argument (give the sentence with -s \"...\")", argv[optind]);
    if (o->walkthrough != NULL && (o->mode == CLI_EXPORT || o->stage_count > 0))
        return attn_fail_text(err, err_size, "--walkthrough: each step names its own stage; drop %s",
                    o->mode == CLI_EXPORT ? "--export" : "--stage");
    if ((o->heatmap || o->format != PRINT_TEXT) && o->mode == CLI_EXPORT)
        return attn_fail_text(err, err_size, "--%s works with --print, not --export",
                    o->heatmap ? "heatmap" : "format");
    if ((o->heatmap || o->format != PRINT_TEXT) && o->mode == CLI_TUI)
        o->mode = CLI_PRINT;
    if (o->stage_count > 1 && o->mode != CLI_PRINT && o->mode != CLI_EXPORT)
        return attn_fail_text(err, err_size,
                              "--stage: the view opens on one stage (several work with --print "
                              "and --export)");
    if ((o->head != NULL || o->view != NULL || o->query != NULL) &&
        (o->mode == CLI_PRINT || o->mode == CLI_EXPORT))
        return attn_fail_text(err, err_size,
                              "--%s says where the view opens, or what --figure draws; with "
                              "--%s choose with --stage (weights.h1)",
                              o->head != NULL ? "head" : o->view != NULL ? "view" : "query",
                              o->mode == CLI_PRINT ? "print" : "export");
    if (o->walkthrough != NULL && (o->head != NULL || o->view != NULL || o->query != NULL ||
                                   o->mode == CLI_FIGURE))
        return attn_fail_text(err, err_size, "--walkthrough: each step says what it shows; drop --%s",
                              o->head != NULL   ? "head"
                              : o->view != NULL ? "view"
                              : o->query != NULL ? "query"
                                                 : "figure");
    if (cli_check_texts(o, err, err_size) != 0)
        return -1;
    /* Across sentences: set before the knobs; the variant (given or the default) then has no mask. */
    o->cfg.cross = o->source != NULL || o->source_file != NULL;
    attention_config_set_variant(&o->cfg, o->cfg.variant);
    if (o->model != NULL && check_model(o, settings, count, err, err_size) != 0)
        return -1;
    if (check_writing(o, settings, count, err, err_size) != 0 ||
        cli_check_compare(o, err, err_size) != 0)
        return -1;
    if (o->model == NULL && (o->layer >= 0 || o->top != CLI_DEFAULT_TOP || o->bos || sw >= 0 ||
                             o->classes != NULL || o->verify || o->arith != CLI_ARITH_EXACT))
        return attn_fail_text(err, err_size, "--%s works with --model (a trained GPT-2)",
                              o->layer >= 0          ? "layer"
                              : o->bos               ? "bos"
                              : sw >= 0              ? model_switch_table[sw].option
                              : o->classes != NULL   ? "classes"
                              : o->verify            ? "verify"
                              : o->arith != CLI_ARITH_EXACT ? "arith"
                                                     : "top");
    if (o->qkv_dir != NULL && (o->sentence_given || o->sentence_file != NULL ||
                               (o->knobs_given & ((uint64_t)1 << KNOB_POSITIONAL)))) {
        const char *positional = "--positional";
        for (int i = 0; i < count; i++)
            if (settings[i].knob == &knob_table[KNOB_POSITIONAL] &&
                strcmp(settings[i].option, "learned-positional") == 0)
                positional = "--learned-positional";
        return attn_fail_text(err, err_size,
                              "--qkv gives Q, K and V instead of a sentence: drop %s",
                              o->sentence_given            ? "--sentence"
                              : o->sentence_file != NULL ? "--sentence-file"
                                                         : positional);
    }
    for (int priority = 0; priority <= 2; priority++) {
        for (int i = 0; i < count; i++)
            if (settings[i].knob->priority == priority &&
                !(o->model != NULL && settings[i].knob == &knob_table[KNOB_HEADS]) &&
                set_knob(&o->cfg, &settings[i], err, err_size) != 0)
                return -1;
        if (priority == 0 && o->qkv_dir != NULL) {
            if (variant_given && attention_variant_has_weights(o->cfg.variant))
                return attn_fail_text(err, err_size,
                            "--qkv gives Q, K and V directly: it works with --variant simple only");
            if (o->embeddings != NULL || o->weights_dir != NULL)
                return attn_fail_text(err, err_size, "--qkv replaces the sentence and the weights: drop %s",
                            o->embeddings != NULL ? "--embeddings" : "--weights");
            attention_config_set_variant(&o->cfg, ATTN_SIMPLE);
        }
    }
    if (o->weights_dir != NULL && !attention_variant_has_weights(o->cfg.variant))
        return attn_fail_text(err, err_size, "--weights: --variant %s has no weights to load",
                              attention_variant_name(o->cfg.variant));
    return 0;
}

static int
parse(int argc, char **argv, struct cli_options *o, bool lesson, char *err, size_t err_size)
{
    struct knob_setting *settings = NULL;
    int setting_count = 0;
    bool variant_given = false;
    int c;
    int r = 0;

    memset(o, 0, sizeof *o);
    attention_config_init(&o->cfg);
    o->mode = CLI_TUI;
    o->sentence = CLI_DEFAULT_SENTENCE;
    o->digits = 4;
    o->layer = -1;
    o->side = -1;
    o->compare_arith = -1;
    o->top = CLI_DEFAULT_TOP;
    o->generate = -1;
    o->eos.id = -1;

    settings = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *settings);
    if (settings == NULL)
        return attn_fail_text(err, err_size, "out of memory");
    optind = 0; /* glibc: a full reset, so tests can parse again */
    opterr = 0;
    while (r == 0 && (c = getopt_long(argc, argv, ":s:f:e:h", long_options(), NULL)) != -1) {
        const char *arg = optarg;
        if (c >= OPT_KNOB) {
            const struct knob *k = &knob_table[(c - OPT_KNOB) / 2];
            const struct knob_option *ko = &k->options[(c - OPT_KNOB) % 2];
            struct knob_setting ks = { k, ko->name, ko->metavar ? arg : ko->value };
            struct attention_config scratch = o->cfg;
            /* Checked now, so errors come in the order the options were given. */
            r = set_knob(&scratch, &ks, err, err_size);
            settings[setting_count++] = ks;
            o->knobs_given |= (uint64_t)1 << (k - knob_table);
            variant_given |= k == &knob_table[KNOB_VARIANT];
            continue;
        }
        /* An empty path would name "/W_query.weight.csv" or a folder: refused as an option. */
        if ((c == 'e' || c == 'f' || c == OPT_WEIGHTS || c == OPT_QKV || c == OPT_WALKTHROUGH ||
             c == OPT_MODEL || c == OPT_COMPARE || c == OPT_SOURCE_FILE ||
             c == OPT_SOURCE_EMBEDDINGS) &&
            arg[0] == '\0') {
            r = attn_fail_text(err, err_size, "--%s: the %s name is empty", plain_name(c),
                               c == OPT_WEIGHTS || c == OPT_QKV || c == OPT_MODEL ||
                                       c == OPT_COMPARE
                                   ? "folder"
                                   : "file");
            break;
        }
        r = plain_option(o, c, arg, argv, err, err_size);
        if (r > 0) {
            free(settings);
            return 0; /* --help, --version, --help-keys: nothing more to parse */
        }
    }
    /* A lesson names its own model, if any: $ATTNSCOPE_MODEL is where it may be found. */
    if (r == 0 && o->model == NULL && !lesson && o->walkthrough == NULL) {
        const char *env = getenv("ATTNSCOPE_MODEL");
        if (env != NULL && env[0] != '\0') {
            o->model = env;
            o->model_from_env = true;
        }
    }
    if (r == 0 && o->model != NULL && strcmp(o->model, "none") == 0) {
        o->model = NULL;
        o->model_from_env = false;
    }
    if (r == 0)
        r = check_modes(argc, argv, o, variant_given, settings, setting_count, err, err_size);
    free(settings);
    return r;
}

int
cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t err_size)
{
    return parse(argc, argv, o, false, err, err_size);
}

int
cli_parse_lesson(int argc, char **argv, struct cli_options *o, char *err, size_t err_size)
{
    return parse(argc, argv, o, true, err, err_size);
}

void
cli_stage_refused(const struct pipeline *p, const char *name, int got, bool in_view, char *msg,
                  size_t size)
{
    const bool model = p->layers > 1 || pipeline_stage_present(p, STAGE_PRE_ATTN_NORM);
    char names[512];

    if (got == PIPELINE_SELECT_NO_HEAD) {
        /* (the stage's own heads: NAME.hH) */
        const char *dot = strstr(name, ".h");
        char base[64];
        enum pipeline_stage st;
        int heads = p->st.shape.heads;
        if (dot != NULL && (size_t)(dot - name) < sizeof base) {
            memcpy(base, name, (size_t)(dot - name));
            base[dot - name] = '\0';
            if (pipeline_stage_parse(base, &st) == 0)
                heads = pipeline_stage_heads(p, st);
        }
        attn_fail_text(msg, size, "--stage %s: head out of range; the heads are 0-%d", name,
                       heads - 1);
        return;
    }
    pipeline_stage_names(p, ", ", names, sizeof names);
    if (!model && in_view) /* (the view shows a parameter on its stage, not by name) */
        attn_fail_text(msg, size,
                       "--stage %s: no such stage here; stages are %s (NAME.hH for one head)", name,
                       names);
    else
        attn_fail_text(msg, size,
                       "--stage %s: no such stage here; stages are %s (NAME.hH for one head), %s",
                       name, names,
                       model ? "and tokens, next, heads (the model map), lens (the logit lens) and kv "
                               "(the KV cache)"
                             : "and the parameters");
}
