/*
 * main.c: attnscope's entry point.  Parses the command line, loads the
 * vocabulary and any given weights, runs the pipeline and hands it to the
 * chosen front end: --print, --export or the interactive view.
 */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/model_export.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"
#include "attnscope/files/filewrite.h"
#include "attnscope/models/model.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/attention/params.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/text/vocab.h"
#include "front/cli/cli.h"
#include "front/cli/inputs.h"
#include "front/cli/print.h"
#include "front/cli/write.h"
#include "front/app/app.h"
#include "tui/startup.h"
#include "tui/tui.h"
#include "front/lessons/walkthrough.h"
#include "main_internal.h"


int
die(int code, const char *msg)
{
    startup_end(); /* (the line that said what was under way goes first) */
    fprintf(stderr, "attnscope: %s\n", msg);
    if (code == EXIT_USAGE)
        fprintf(stderr, "Try 'attnscope --help' for the options.\n");
    return code;
}

void
said_written(int written, const char *dir)
{
    char msg[1200];

    /* The folder is what the user typed: escaped like every message. */
    attn_fail_text(msg, sizeof msg, "wrote %d file%s into %s", written, written == 1 ? "" : "s",
                   dir);
    fprintf(stderr, "attnscope: %s\n", msg);
}

/* What the command line adds to the model's files: the first's (--model) or the second's. */
struct model_options
model_options_of(const struct cli_options *o, bool second)
{
    const int arith = second && o->compare_arith >= 0 ? o->compare_arith : o->arith;
    struct model_options mo = { o->model_heads, o->classes, o->verify, NULL };

    if (arith == CLI_ARITH_INT8)
        mo.int8 = second && o->compare_arith >= 0 ? "--compare-arith int8" : "--arith int8";
    return mo;
}

int
is_usage_status(enum attn_status st)
{
    /* Bad values here come from options (-s, --heads, ...); files were read before. */
    return st == ATTN_EVALUE || st == ATTN_EPARSE || st == ATTN_ELIMIT;
}

/*
 * Loads the walkthrough --walkthrough names, so that a bad file is reported
 * before the screen changes; with every_step, builds and checks each step
 * too (the handout).  The view checks a step when it plays it.
 */
static int
load_walkthrough(const struct cli_options *o, struct walkthrough *w, bool every_step,
                 struct attn_error *err)
{
    char path[4096];

    if (walkthrough_find(o->walkthrough, path, sizeof path) != 0) {
        char names[1024];
        if (walkthrough_names(names, sizeof names) > 0)
            attn_fail(err, ATTN_EIO, "--walkthrough %s: no such file, and no lesson of that name; "
                                     "the lessons are %s",
                      o->walkthrough, names);
        else
            attn_fail(err, ATTN_EIO,
                      "--walkthrough %s: no such file, and no installed walkthrough of that name",
                      o->walkthrough);
        return -1;
    }
    if (walkthrough_load(w, path, err) != ATTN_OK)
        return -1;
    if (every_step && walkthrough_verify(w, err) < 0) {
        walkthrough_destroy(w);
        return -1;
    }
    return 0;
}

/*
 * The view's work between keys: packing the model's weights on a thread of
 * their own, started once the first frame is drawn, and put in once made
 * (true then).
 */
static bool
view_idle(void *ctx)
{
    static bool started;
    struct decoder_model *m = ctx;

    if (!started) {
        started = true;
        family_model_pack_meanwhile(m);
    }
    (void)family_model_pack_settle(m);
    return m->packer == NULL; /* (packed and taken over, or nothing to pack) */
}

int
run_tui(const struct cli_options *o, const struct pipeline_source *src, struct decoder_model *dec)
{
    struct app app;
    struct attn_error err;
    enum attn_status st;
    struct walkthrough w;

    attn_error_clear(&err);
    if (o->walkthrough != NULL && load_walkthrough(o, &w, false, &err) != 0)
        return die(EXIT_INPUT, err.msg);
    st = app_init(&app, &o->cfg, src, o->weights_dir, &err);
    if (st != ATTN_OK) {
        if (o->walkthrough != NULL)
            walkthrough_destroy(&w);
        return die(is_usage_status(st) ? EXIT_USAGE : EXIT_INPUT, err.msg);
    }
    app.view.present = o->present;
    if (o->compare != NULL) {
        const struct model_options mo = model_options_of(o, true);
        if (app_compare_open(&app, o->compare, &mo, &err) != ATTN_OK) {
            char msg[1200];
            if (o->walkthrough != NULL)
                walkthrough_destroy(&w);
            app_destroy(&app);
            attn_fail_text(msg, sizeof msg, "--compare %s: %s", o->compare, err.msg);
            return die(err.status == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, msg);
        }
        if (o->side >= 0)
            app.view.side = (enum compare_side)o->side;
    }
    if (app.src.model != NULL && write_end_of(&o->eos, app.src.model, &app.eos, &err) != ATTN_OK) {
        if (o->walkthrough != NULL)
            walkthrough_destroy(&w);
        app_destroy(&app);
        return die(EXIT_USAGE, err.msg);
    }
    if (dec != NULL) {
        app.idle = view_idle;
        app.idle_ctx = dec;
    }
    if (o->layer > 0 && pipeline_select_layer(&app.pipe, o->layer, &err) != ATTN_OK) {
        app_destroy(&app);
        return die(EXIT_INPUT, err.msg);
    }
    /*
     * --generate: a figure shows the text written; the terminal shows the
     * writing as it goes (a long one was a blank screen that Ctrl-C ended,
     * the tokens lost).
     */
    if (o->generate > 0 && o->mode == CLI_FIGURE &&
        app_write_tokens(&app, o->generate, &err) != ATTN_OK) {
        app_destroy(&app);
        return die(EXIT_USAGE, err.msg);
    }
    if (o->walkthrough != NULL && app_play(&app, &w, &err) != ATTN_OK) {
        walkthrough_destroy(&w);
        app_destroy(&app);
        return die(EXIT_INPUT, err.msg);
    }
    {
        const struct app_start at = { o->stage_count > 0 ? o->stages[0] : NULL, o->head, o->view,
                                      o->query };
        if (app_open_at(&app, &at, &err) != ATTN_OK) {
            app_destroy(&app);
            return die(EXIT_USAGE, err.msg);
        }
    }
    if (o->mode == CLI_FIGURE) {
        struct figure_result res;
        char msg[1024];
        app.view.colour = true; /* the screen's colours, whatever the terminal */
        app.view.utf8 = true;
        st = app_write_figure(&app, o->figure, &res, &err);
        app_destroy(&app);
        figure_release();
        if (st != ATTN_OK)
            return die(st == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, err.msg);
        attn_fail_text(msg, sizeof msg, "wrote %s: %s, %.0f x %.0f points", o->figure, res.what,
                       res.width, res.height);
        fprintf(stderr, "attnscope: %s\n", msg);
        return 0;
    }
    startup_end();
    if (o->generate > 0)
        app_write_meanwhile(&app, o->generate);
    st = tui_run(&app, o->mono, &err);
    app_destroy(&app);
    figure_release(); /* (F's fonts) */
    if (st != ATTN_OK)
        return die(EXIT_INPUT, err.msg);
    return 0;
}

/*
 * How --heatmap draws: colours when stdout is a terminal (and neither
 * NO_COLOR nor --mono), glyphs otherwise; as wide as the terminal.
 */
void
heatmap_output(const struct cli_options *o, struct print_options *po)
{
    const char *nocolor = getenv("NO_COLOR");
    const char *colorterm = getenv("COLORTERM");
    const char *term = getenv("TERM");
    const char *columns = getenv("COLUMNS");
    const char *codeset;
    struct winsize ws;
    bool tty = isatty(STDOUT_FILENO);

    setlocale(LC_CTYPE, "");
    codeset = nl_langinfo(CODESET);
    po->utf8 = codeset != NULL && strcmp(codeset, "UTF-8") == 0;
    po->depth = DEPTH_MONO;
    if (tty && !o->mono && (nocolor == NULL || nocolor[0] == '\0') &&
        (term == NULL || strcmp(term, "dumb") != 0)) {
        if (colorterm != NULL && (strcmp(colorterm, "truecolor") == 0 || strcmp(colorterm, "24bit") == 0))
            po->depth = DEPTH_DIRECT;
        else if (term != NULL && strstr(term, "256") != NULL)
            po->depth = DEPTH_256;
        else
            po->depth = DEPTH_8;
    }
    po->width = print_width(tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0,
                            columns);
}

static int
print_handout(const struct cli_options *o)
{
    struct walkthrough w;
    struct attn_error err;
    struct print_options po;
    int rc;

    if (load_walkthrough(o, &w, true, &err) != 0)
        return die(EXIT_INPUT, err.msg);
    memset(&po, 0, sizeof po);
    po.digits = o->digits;
    po.format = o->format;
    po.heatmap = o->heatmap;
    if (o->heatmap)
        heatmap_output(o, &po);
    rc = walkthrough_print(stdout, &w, &po, 78, &err);
    walkthrough_destroy(&w);
    if (rc != 0)
        return die(EXIT_INPUT, err.msg);
    return fflush(stdout) == 0 ? 0 : die(EXIT_INPUT, "cannot write to standard output");
}

/* Resolves every --stage name; an unknown one is a usage error naming it. */
int
resolve_stages(const struct pipeline *p, const struct cli_options *o,
               struct pipeline_selection *chosen, char *msg, size_t size)
{
    for (int i = 0; i < o->stage_count; i++) {
        const int got = pipeline_select(p, o->stages[i], &chosen[i]);
        if (got != 0) {
            cli_stage_refused(p, o->stages[i], got, false, msg, size);
            return -1;
        }
    }
    return 0;
}

/*
 * Whether every stage --stage names is one no (H, n, n) attention stage
 * feeds (tokens, next, lens, or a stage of one matrix, not per head): then
 * --print need not make the shown layer's scores and weights (n x n for
 * every head: 67 MB at 512 tokens of Qwen3-0.6B).  Anything else, or a
 * name not known here, makes them as always.
 */
bool
shows_no_attention(const struct cli_options *o)
{
    for (int i = 0; i < o->stage_count; i++) {
        enum pipeline_stage st;
        const char *name = o->stages[i];
        if (strcmp(name, "tokens") == 0 || strcmp(name, "next") == 0 || strcmp(name, "lens") == 0)
            continue;
        if (pipeline_stage_parse(name, &st) != 0 || pipeline_stage_per_head(st))
            return false;
    }
    return o->stage_count > 0;
}

/*
 * Whether every stage --stage names reads only the tokens and the final
 * stream (tokens, next): then --print's run need keep no layer
 * (decoder_knobs.lean: at 512 tokens of Qwen3-0.6B, 226 MB not held).
 */
bool
shows_no_layer(const struct cli_options *o)
{
    for (int i = 0; i < o->stage_count; i++)
        if (strcmp(o->stages[i], "tokens") != 0 && strcmp(o->stages[i], "next") != 0)
            return false;
    return o->stage_count > 0 && o->layer <= 0;
}

/*
 * Whether no stage --stage names (or --print's default, the weights) reads
 * the next tokens: then --print's forward makes the last position's only
 * (decoder_knobs.next_later; at 512 tokens of Llama 3.2 1B a fifth of the
 * forward).  Not when they are read: made later, the head would be read
 * twice.
 */
bool
shows_no_next(const struct cli_options *o)
{
    for (int i = 0; i < o->stage_count; i++)
        if (strcmp(o->stages[i], "next") == 0)
            return false;
    return true;
}

/* A signal that ends the process outside the interactive view: no half-written export is left. */
static void
on_fatal_signal(int sig)
{
    fileio_batch_remove_temporaries();
    filewrite_remove_temporary();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
catch_signals(void)
{
    static const int fatal[] = {
        SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
        SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPWR
        SIGPWR,
#endif
    };

    /* A file size limit makes writes fail (and the export say so) rather than kill. */
    signal(SIGXFSZ, SIG_IGN);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(fatal[i], &sa, NULL);
    }
}

/* --export of the book's classes: every stage and parameter, or the chosen ones. */
static int
export_book(const struct cli_options *o, const struct pipeline *p,
            const struct pipeline_selection *chosen)
{
    struct attn_error err;
    int written = 0;
    enum attn_status st =
        o->stage_count > 0 ? export_selection(p, chosen, o->stage_count, o->export_dir, &written, &err)
                           : export_all(p, o->export_dir, &written, &err);

    if (st != ATTN_OK)
        return die(EXIT_INPUT, err.msg);
    said_written(written, o->export_dir);
    return 0;
}

/* --print of the book's classes: tables or heatmaps of the chosen stages. */
static int
print_book(const struct cli_options *o, const struct pipeline *p,
           const struct pipeline_selection *chosen, const char *vocab_source)
{
    struct print_options po;
    bool heatmap_failed = false;

    memset(&po, 0, sizeof po);
    po.digits = o->digits;
    po.count = o->stage_count;
    po.chosen = chosen;
    po.vocab_source = o->qkv_dir != NULL ? o->qkv_dir : vocab_source;
    po.format = o->format;
    po.heatmap = o->heatmap;
    if (o->heatmap)
        heatmap_output(o, &po);
    po.failed = &heatmap_failed;
    print_pipeline(stdout, p, &po);
    return printed(heatmap_failed);
}

int
main(int argc, char **argv)
{
    struct cli_options o;
    struct attn_error err;
    struct inputs in;
    struct pipeline p;
    struct pipeline_source src;
    struct pipeline_selection chosen[CLI_MAX_STAGES];
    char msg[1024];
    char *file_text = NULL;
    char *source_text = NULL;
    int code = 0;

    if (cli_parse(argc, argv, &o, msg, sizeof msg) != 0)
        return die(EXIT_USAGE, msg);
    if (o.mode == CLI_HELP || o.mode == CLI_VERSION || o.mode == CLI_HELP_KEYS ||
        o.mode == CLI_HELP_STAGES) {
        if (o.mode == CLI_HELP)
            fputs(cli_usage(), stdout);
        else if (o.mode == CLI_HELP_KEYS)
            app_print_keys(stdout);
        else if (o.mode == CLI_HELP_STAGES)
            print_stage_list(stdout);
        else {
            char isa[96], why[256];
            printf("attnscope %s\nkernels: %s, %d thread%s\n", PACKAGE_VERSION,
                   cpu_isa_describe(isa, sizeof isa), parallel_threads(),
                   parallel_threads() == 1 ? "" : "s");
            if (cpu_isa_check(why, sizeof why) != NULL)
                printf("%s\n", why);
        }
        return fflush(stdout) == 0 && !ferror(stdout) ? 0
                                                      : die(EXIT_INPUT, "cannot write to standard output");
    }

    {
        char why[256];
        if (cpu_isa_check(why, sizeof why) != NULL)
            fprintf(stderr, "attnscope: %s\n", why);
    }
    catch_signals();
    if (o.mode == CLI_TUI)
        startup_begin(); /* (a model may take seconds to read before the view can draw) */
    attn_error_clear(&err);
    if (o.threads > 0)
        parallel_set_threads(o.threads);
    if (o.sentence_file != NULL) {
        if (inputs_read_text("--sentence-file", o.sentence_file, &file_text, &err) != 0)
            return die(EXIT_INPUT, err.msg);
        o.sentence = file_text;
    }
    if (o.source_file != NULL) {
        if (strcmp(o.source_file, "-") == 0 && o.sentence_file != NULL &&
            strcmp(o.sentence_file, "-") == 0) {
            free(file_text);
            return die(EXIT_USAGE, "--sentence-file - and --source-file -: only one of them can "
                                   "read standard input");
        }
        if (inputs_read_text("--source-file", o.source_file, &source_text, &err) != 0) {
            free(file_text);
            return die(EXIT_INPUT, err.msg);
        }
        o.source = source_text;
    }
    if (o.walkthrough != NULL && o.model != NULL) {
        /* A lesson opens its own model: the same one given again is no fault. */
        const int same = o.model_from_env ? 1 : walkthrough_model_given(o.walkthrough, o.model,
                                                                         msg, sizeof msg);
        if (same != 1) {
            free(file_text);
            free(source_text);
            return die(same == 0 ? EXIT_USAGE : EXIT_INPUT, msg);
        }
        o.model = NULL;
    }
    if (o.model != NULL) {
        code = run_model(&o, o.sentence);
        free(file_text);
        free(source_text);
        return code;
    }
    {
        const struct inputs_paths where = { o.embeddings, o.qkv_dir, o.weights_dir,
                                            o.source_embeddings };
        bool options_fault;
        if (inputs_load(&in, &o.cfg, &where, o.knobs_given, &options_fault, &err) != ATTN_OK) {
            free(file_text);
            free(source_text);
            return die(options_fault ? EXIT_USAGE : EXIT_INPUT, err.msg);
        }
    }
    src = inputs_source(&in, o.sentence, o.source);
    if (o.mode == CLI_TUI || o.mode == CLI_FIGURE) {
        code = run_tui(&o, &src, NULL);
        goto out;
    }
    if (o.walkthrough != NULL) {
        code = print_handout(&o);
        goto out;
    }
    if (pipeline_create(&p, &o.cfg, &src, &err) != ATTN_OK) {
        code = die(is_usage_status(err.status) ? EXIT_USAGE : EXIT_INPUT, err.msg);
        goto out;
    }

    if (resolve_stages(&p, &o, chosen, msg, sizeof msg) != 0)
        code = die(EXIT_USAGE, msg);
    else if (o.mode == CLI_EXPORT)
        code = export_book(&o, &p, chosen);
    else if ((code = print_book(&o, &p, chosen, in.vocab.source)) == 0 && o.print_and_export)
        code = export_book(&o, &p, chosen);
    pipeline_destroy(&p);
out:
    inputs_destroy(&in);
    free(file_text);
    free(source_text);
    return code;
}
