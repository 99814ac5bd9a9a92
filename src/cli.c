/* cli.c: the command line (see cli.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_VARIANT = 256,
    OPT_D_OUT,
    OPT_HEADS,
    OPT_SEED,
    OPT_DROPOUT,
    OPT_EVAL,
    OPT_TRAIN,
    OPT_QKV_BIAS,
    OPT_MASK,
    OPT_NO_SCALE,
    OPT_SCALE,
    OPT_TEMPERATURE,
    OPT_POSITIONAL,
    OPT_RNG,
    OPT_WEIGHTS,
    OPT_PRINT,
    OPT_EXPORT,
    OPT_STAGE,
    OPT_DIGITS,
    OPT_DROPOUT_SEED,
    OPT_DROPOUT_PASS,
    OPT_MONO,
    OPT_QKV,
    OPT_SCALE_DIM,
    OPT_FORMAT,
    OPT_HEATMAP,
    OPT_WALKTHROUGH,
    OPT_PRESENT,
    OPT_VERSION
};

static const struct option long_options[] = {
    { "sentence", required_argument, NULL, 's' },
    { "embeddings", required_argument, NULL, 'e' },
    { "variant", required_argument, NULL, OPT_VARIANT },
    { "d-out", required_argument, NULL, OPT_D_OUT },
    { "heads", required_argument, NULL, OPT_HEADS },
    { "seed", required_argument, NULL, OPT_SEED },
    { "dropout", required_argument, NULL, OPT_DROPOUT },
    { "eval", no_argument, NULL, OPT_EVAL },
    { "train", no_argument, NULL, OPT_TRAIN },
    { "qkv-bias", no_argument, NULL, OPT_QKV_BIAS },
    { "mask", required_argument, NULL, OPT_MASK },
    { "no-scale", no_argument, NULL, OPT_NO_SCALE },
    { "scale", no_argument, NULL, OPT_SCALE },
    { "temperature", required_argument, NULL, OPT_TEMPERATURE },
    { "positional", no_argument, NULL, OPT_POSITIONAL },
    { "rng", required_argument, NULL, OPT_RNG },
    { "weights", required_argument, NULL, OPT_WEIGHTS },
    { "print", no_argument, NULL, OPT_PRINT },
    { "export", required_argument, NULL, OPT_EXPORT },
    { "stage", required_argument, NULL, OPT_STAGE },
    { "digits", required_argument, NULL, OPT_DIGITS },
    { "dropout-seed", required_argument, NULL, OPT_DROPOUT_SEED },
    { "dropout-pass", required_argument, NULL, OPT_DROPOUT_PASS },
    { "mono", no_argument, NULL, OPT_MONO },
    { "qkv", required_argument, NULL, OPT_QKV },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "heatmap", no_argument, NULL, OPT_HEATMAP },
    { "walkthrough", required_argument, NULL, OPT_WALKTHROUGH },
    { "present", no_argument, NULL, OPT_PRESENT },
    { "scale-dim", required_argument, NULL, OPT_SCALE_DIM },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 },
};

static const char usage_head[] =
    "Usage: attnscope [options]                 step through attention interactively\n"
    "       attnscope --print [options]         every stage as text tables\n"
    "       attnscope --export DIR [options]    every stage and parameter as CSV files\n"
    "\n"
    "Input:\n"
    "  -s, --sentence TEXT     the sentence (default \"" CLI_DEFAULT_SENTENCE "\")\n"
    "  -e, --embeddings FILE   vocabulary CSV: token,v1,...,vd (default: the book's six words)\n"
    "      --positional        add the sinusoidal positional encoding\n"
    "      --weights DIR       load the parameters --export wrote instead of drawing them\n"
    "      --qkv DIR           take Q, K and V from DIR/queries.csv, keys.csv, values.csv\n"
    "                          (as --export writes them) instead of a sentence\n"
    "\n"
    "Attention:\n"
    "      --variant NAME      simple | v1 | v2 | causal | wrapper | mha (default mha)\n"
    "      --d-out N           output size: per head for wrapper, in total for mha (default 2)\n"
    "      --heads N           heads of wrapper and mha (default 2)\n"
    "      --seed N            torch.manual_seed before the parameters are drawn (default 123)\n"
    "      --qkv-bias          give W_query, W_key and W_value a bias\n"
    "      --mask causal|none  default: causal for causal, wrapper and mha; none otherwise\n"
    "      --no-scale          do not divide the scores by sqrt(d_k) (--scale to force it)\n"
    "      --scale-dim N       divide by sqrt(N) instead of sqrt(d_k)\n"
    "      --temperature T     softmax(scores / (sqrt(d_k) * T)) (default 1)\n"
    "      --dropout P         dropout on the attention weights, 0 <= P < 1 (default 0)\n"
    "      --eval              evaluation mode: dropout off (--train is the default)\n"
    "      --rng default|mkl   how dropout draws its mask: PyTorch built without MKL\n"
    "                          (default) or with it (older x86-64 wheels)\n"
    "      --dropout-seed N    reseed the generator just before dropout, as the book does\n"
    "      --dropout-pass K    the mask of the (K+1)-th forward call (default 0)\n"
    "\n"
    "Output:\n"
    "      --print             print the stages instead of starting the interactive view\n"
    "      --stage NAME        only this stage (repeatable), with --print or --export; NAME\n"
    "                          is a stage (";

static const char usage_tail[] =
    "),\n"
    "                          a stage of one head (weights.h1) or a parameter\n"
    "                          (W_query.weight)\n"
    "      --digits N          decimals printed by --print (default 4)\n"
    "      --format F          --print's tables as text (default), csv, markdown or latex\n"
    "      --heatmap           --print heatmaps instead of tables (colour on a terminal,\n"
    "                          glyphs otherwise)\n"
    "      --export DIR        write every stage and parameter as CSV files into DIR\n"
    "      --mono              no colour in the interactive view\n"
    "      --present           presentation mode: big cells, high contrast, no bars\n"
    "      --walkthrough FILE  play a scripted lesson (a file, or the name of an installed\n"
    "                          one); with --print, write it out as a handout\n"
    "  -h, --help              this help\n"
    "      --version           the version\n"
    "\n"
    "Exit status: 0 on success, 1 when an input or output fails, 2 for a bad option.\n"
    "See attnscope(1) for the keys, the CSV layouts and examples.\n";

/* The stage names, from the stage table, wrapped to the usage text's column. */
static void
append_stage_names(char *buf, size_t size)
{
    char names[512];
    const char *indent = "\n                          ";
    size_t line = strlen("                          is a stage (");
    char *save = NULL;

    pipeline_stage_names(NULL, " ", names, sizeof names);
    for (char *w = strtok_r(names, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
        size_t len = strlen(buf);
        bool first = line == strlen("                          is a stage (");
        if (!first && line + 1 + strlen(w) > 78) {
            snprintf(buf + len, size - len, "%s%s", indent, w);
            line = strlen(indent) - 1 + strlen(w);
        } else {
            snprintf(buf + len, size - len, "%s%s", first ? "" : " ", w);
            line += strlen(w) + !first;
        }
    }
}

const char *
cli_usage(void)
{
    static char text[sizeof usage_head + sizeof usage_tail + 640];

    if (text[0] == '\0') {
        snprintf(text, sizeof text, "%s", usage_head);
        append_stage_names(text, sizeof text);
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s", usage_tail);
    }
    return text;
}

static int
fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    attn_vformat_text(err, size, fmt, ap); /* it quotes what was typed */
    va_end(ap);
    return -1;
}

static int
parse_int(const char *opt, const char *text, long min, long max, int *out, char *err,
          size_t size)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (end == text || *end != '\0')
        return fail(err, size, "%s: '%s' is not a whole number", opt, text);
    if (errno == ERANGE || v < min || v > max)
        return fail(err, size, "%s %s: give a number from %ld to %ld", opt, text, min, max);
    *out = (int)v;
    return 0;
}

static int
parse_u64(const char *opt, const char *text, uint64_t *out, char *err, size_t size)
{
    char *end;
    unsigned long long v;

    if (text[0] < '0' || text[0] > '9')
        return fail(err, size, "%s: '%s' is not a whole number from 0 to 18446744073709551615",
                    opt, text);
    errno = 0;
    v = strtoull(text, &end, 10);
    if (*end != '\0')
        return fail(err, size, "%s: '%s' is not a whole number", opt, text);
    if (errno == ERANGE)
        return fail(err, size, "%s %s: beyond 64 bits (the largest seed is 18446744073709551615)",
                    opt, text);
    *out = (uint64_t)v;
    return 0;
}

static int
parse_real(const char *opt, const char *text, double *out, char *err, size_t size)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || *end != '\0')
        return fail(err, size, "%s: '%s' is not a number", opt, text);
    if (!isfinite(v))
        return fail(err, size, "%s: '%s' is not a finite number", opt, text);
    *out = v;
    return 0;
}

int
cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t err_size)
{
    /* Options that depend on the variant are applied after it is known. */
    int has_mask = 0;
    enum attn_mask mask = ATTN_MASK_NONE;
    int scale_choice = -1;
    int variant_given = 0;
    enum attn_variant variant = ATTN_MHA;
    int c;

    memset(o, 0, sizeof *o);
    attention_config_init(&o->cfg);
    o->mode = CLI_TUI;
    o->sentence = CLI_DEFAULT_SENTENCE;
    o->digits = 4;

    optind = 0; /* glibc: a full reset, so tests can parse again */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:e:h", long_options, NULL)) != -1) {
        const char *arg = optarg;
        int r = 0;
        switch (c) {
        case 's':
            o->sentence = arg;
            break;
        case 'e':
            o->embeddings = arg;
            break;
        case OPT_VARIANT:
            variant_given = 1;
            if (attention_variant_parse(arg, &variant) != 0)
                return fail(err, err_size,
                            "--variant: '%s' is not a variant; choose simple, v1, v2, causal, "
                            "wrapper or mha",
                            arg);
            break;
        case OPT_D_OUT:
            r = parse_int("--d-out", arg, 1, ATTN_MAX_DIM, &o->cfg.d_out, err, err_size);
            break;
        case OPT_HEADS:
            r = parse_int("--heads", arg, 1, ATTN_MAX_HEADS, &o->cfg.heads, err, err_size);
            break;
        case OPT_SEED:
            r = parse_u64("--seed", arg, &o->cfg.seed, err, err_size);
            break;
        case OPT_DROPOUT:
            r = parse_real("--dropout", arg, &o->cfg.dropout, err, err_size);
            if (r == 0 && !(o->cfg.dropout >= 0.0 && o->cfg.dropout < 1.0))
                r = fail(err, err_size, "--dropout %s: p must be at least 0 and below 1", arg);
            break;
        case OPT_EVAL:
            o->cfg.train = false;
            break;
        case OPT_TRAIN:
            o->cfg.train = true;
            break;
        case OPT_QKV_BIAS:
            o->cfg.qkv_bias = true;
            break;
        case OPT_MASK:
            has_mask = 1;
            if (strcmp(arg, "causal") == 0)
                mask = ATTN_MASK_CAUSAL;
            else if (strcmp(arg, "none") == 0)
                mask = ATTN_MASK_NONE;
            else
                r = fail(err, err_size, "--mask: '%s' is not a mask; choose causal or none", arg);
            break;
        case OPT_NO_SCALE:
            scale_choice = 0;
            break;
        case OPT_SCALE:
            scale_choice = 1;
            break;
        case OPT_TEMPERATURE:
            r = parse_real("--temperature", arg, &o->cfg.temperature, err, err_size);
            if (r == 0 && !(o->cfg.temperature > 0.0))
                r = fail(err, err_size, "--temperature %s: T must be above 0", arg);
            break;
        case OPT_POSITIONAL:
            o->cfg.positional = true;
            break;
        case OPT_RNG:
            if (strcmp(arg, "default") == 0)
                o->cfg.rng_path = RNG_PATH_DEFAULT;
            else if (strcmp(arg, "mkl") == 0)
                o->cfg.rng_path = RNG_PATH_MKL;
            else
                r = fail(err, err_size, "--rng: '%s' is not a generator path; choose default or mkl",
                         arg);
            break;
        case OPT_WEIGHTS:
            o->weights_dir = arg;
            break;
        case OPT_PRINT:
            if (o->mode == CLI_EXPORT)
                return fail(err, err_size, "--print and --export: choose one");
            o->mode = CLI_PRINT;
            break;
        case OPT_EXPORT:
            if (o->mode == CLI_PRINT)
                return fail(err, err_size, "--print and --export: choose one");
            if (arg[0] == '\0')
                return fail(err, err_size, "--export: the folder name is empty");
            o->mode = CLI_EXPORT;
            o->export_dir = arg;
            break;
        case OPT_STAGE:
            if (o->stage_count == CLI_MAX_STAGES)
                return fail(err, err_size, "--stage: at most %d stages", CLI_MAX_STAGES);
            o->stages[o->stage_count++] = arg;
            break;
        case OPT_DIGITS:
            r = parse_int("--digits", arg, 0, 9, &o->digits, err, err_size);
            break;
        case OPT_DROPOUT_SEED:
            o->cfg.dropout_reseed = true;
            r = parse_u64("--dropout-seed", arg, &o->cfg.dropout_seed, err, err_size);
            break;
        case OPT_DROPOUT_PASS:
            r = parse_int("--dropout-pass", arg, 0, ATTN_MAX_DROPOUT_PASS, &o->cfg.dropout_pass,
                          err, err_size);
            break;
        case OPT_MONO:
            o->mono = true;
            break;
        case OPT_QKV:
            o->qkv_dir = arg;
            break;
        case OPT_FORMAT:
            if (print_format_parse(arg, &o->format) != 0)
                r = fail(err, err_size,
                         "--format: '%s' is not a format; choose text, csv, markdown or latex", arg);
            break;
        case OPT_HEATMAP:
            o->heatmap = true;
            break;
        case OPT_WALKTHROUGH:
            o->walkthrough = arg;
            break;
        case OPT_PRESENT:
            o->present = true;
            break;
        case OPT_SCALE_DIM:
            r = parse_int("--scale-dim", arg, 1, ATTN_MAX_DIM, &o->cfg.scale_dim, err, err_size);
            break;
        case 'h':
            o->mode = CLI_HELP;
            return 0;
        case OPT_VERSION:
            o->mode = CLI_VERSION;
            return 0;
        case ':':
            return fail(err, err_size, "%s needs a value", argv[optind - 1]);
        default:
            if (optopt != 0 && optopt < 256)
                return fail(err, err_size, "-%c: unknown option", optopt);
            return fail(err, err_size, "%s: unknown option", argv[optind - 1]);
        }
        if (r != 0)
            return -1;
    }
    if (optind < argc)
        return fail(err, err_size,
                    "'%s': unexpected argument (give the sentence with -s \"...\")", argv[optind]);
    if (o->walkthrough != NULL && (o->mode == CLI_EXPORT || o->stage_count > 0))
        return fail(err, err_size, "--walkthrough: each step names its own stage; drop %s",
                    o->mode == CLI_EXPORT ? "--export" : "--stage");
    if ((o->heatmap || o->format != PRINT_TEXT) && o->mode == CLI_EXPORT)
        return fail(err, err_size, "--%s works with --print, not --export",
                    o->heatmap ? "heatmap" : "format");
    if ((o->heatmap || o->format != PRINT_TEXT) && o->mode == CLI_TUI)
        o->mode = CLI_PRINT;
    if (o->stage_count > 0 && o->mode != CLI_PRINT && o->mode != CLI_EXPORT)
        return fail(err, err_size, "--stage works with --print and --export");

    if (o->qkv_dir != NULL) {
        if (variant_given && variant != ATTN_SIMPLE)
            return fail(err, err_size,
                        "--qkv gives Q, K and V directly: it works with --variant simple only");
        if (o->embeddings != NULL || o->weights_dir != NULL)
            return fail(err, err_size, "--qkv replaces the sentence and the weights: drop %s",
                        o->embeddings != NULL ? "--embeddings" : "--weights");
        variant = ATTN_SIMPLE;
    }
    attention_config_set_variant(&o->cfg, variant);
    if (o->cfg.scale_dim > 0 && scale_choice < 0)
        scale_choice = 1;
    if (has_mask)
        o->cfg.mask = mask;
    if (scale_choice >= 0)
        o->cfg.scale = scale_choice == 1;
    return 0;
}
