/*
 * run_model.c: a trained model from the command line (--model): its text,
 * its switches, then --print, --export, the writing, the comparison with a
 * second model, or the view (main.c's run_tui).
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
#include "attnscope/families/model/switches.h"
#include "main_internal.h"

/*
 * --generate N with --print or --export: the model writes after p's text,
 * --print shows each token as it comes and the whole text (then any
 * --stage of the text written), --export writes the text's files with
 * generated.csv.  Ctrl-C stops the writing and keeps what was written.
 */
static int
write_model(const struct cli_options *o, const struct model *m, struct pipeline *p,
            const struct pipeline_source *src, const struct pipeline_selection *chosen,
            struct compare *cmp)
{
    struct generate_options go;
    struct generate_end end;
    struct generation g;
    struct print_options po;
    struct attn_error err;
    enum attn_status st;
    double seconds;
    int code = 0;

    st = write_end_of(&o->eos, m, &end, &err);
    if (st != ATTN_OK)
        return die(EXIT_USAGE, err.msg);
    write_options_of(&o->cfg, &end, &go);
    st = generation_init(&g, m, &go, &err);
    if (st != ATTN_OK)
        return die(is_usage_status(st) ? EXIT_USAGE : EXIT_INPUT, err.msg);
    memset(&po, 0, sizeof po);
    po.digits = o->digits;
    po.format = o->format;
    if (o->mode == CLI_PRINT && o->format == PRINT_TEXT)
        print_model_header(stdout, p, pipeline_decoder(p));
    {
        /* No layer's n x n stages made for every token: the one asked for, once, at the end. */
        struct pipeline_source writing = *src;
        writing.layer = PIPELINE_NO_LAYER;
        st = write_tokens(o->mode == CLI_PRINT ? stdout : NULL, &g, p,
                          cmp != NULL ? cmp->b : NULL, &writing, o->generate, &po, &seconds,
                          &err);
    }
    if (st == ATTN_OK || st == ATTN_ESTOPPED) {
        struct attn_error lerr;
        if (p->layer == PIPELINE_NO_LAYER &&
            pipeline_select_layer(p, o->layer > 0 ? o->layer : 0, &lerr) != ATTN_OK) {
            generation_destroy(&g);
            return die(EXIT_INPUT, lerr.msg);
        }
    }
    if (st != ATTN_OK && st != ATTN_ESTOPPED) {
        generation_destroy(&g);
        return die(EXIT_INPUT, err.msg);
    }
    if (o->mode == CLI_PRINT) {
        write_print_text(stdout, &g, &po);
        po.count = o->stage_count;
        po.chosen = chosen;
        if (cmp != NULL && o->stage_count > 0 && compare_check(p, cmp->b, &err) == ATTN_OK)
            print_compared(stdout, cmp, &po); /* (the text written, in both) */
        for (int i = 0; i < o->stage_count && cmp == NULL; i++)
            print_model_selection(stdout, p, &chosen[i], &po);
        if (fflush(stdout) != 0 || ferror(stdout))
            code = die(EXIT_INPUT, "cannot write to standard output");
    }
    if (code == 0 && (o->mode == CLI_EXPORT || o->print_and_export)) {
        int written = 0;
        struct attn_error xerr;
        if ((cmp != NULL ? export_model_compared(cmp, o->stage_count > 0 ? chosen : NULL,
                                                 o->stage_count, &g, o->export_dir, &written,
                                                 &xerr)
                         : export_model_written(p, o->stage_count > 0 ? chosen : NULL,
                                                o->stage_count, &g, o->export_dir, &written,
                                                &xerr)) != ATTN_OK) {
            code = die(EXIT_INPUT, xerr.msg);
        } else {
            said_written(written, o->export_dir);
        }
    }
    if (code == 0 && g.written > 0) {
        /* (a slow machine's rate in seconds a token: "0.0 tokens/s" says nothing) */
        const double each = seconds / g.written;
        char rate[64], isa[96];
        if (each >= 1.0)
            snprintf(rate, sizeof rate, "%.2f s a token", each);
        else
            snprintf(rate, sizeof rate, "%.1f ms a token, %.1f tokens/s", each * 1e3,
                     each > 0.0 ? 1.0 / each : 0.0);
        fprintf(stderr, "attnscope: wrote %d token%s in %.3f s of forwards (%s; kernels %s, %d "
                        "thread%s)\n",
                g.written, g.written == 1 ? "" : "s", seconds, rate,
                cpu_isa_describe(isa, sizeof isa), parallel_threads(),
                parallel_threads() == 1 ? "" : "s");
    }
    if (code == 0 && st == ATTN_ESTOPPED) {
        fprintf(stderr, "attnscope: %s (Ctrl-C): what was written is kept\n", err.msg);
        code = 130;
    }
    generation_destroy(&g);
    return code;
}

/* --export of a trained model's run: every stage of every layer, or the chosen ones. */
static int
export_model_run(const struct cli_options *o, struct pipeline *p,
                 const struct pipeline_selection *chosen)
{
    struct attn_error err;
    int written = 0;

    if (export_model(p, o->stage_count > 0 ? chosen : NULL, o->stage_count, o->export_dir,
                     &written, &err) != ATTN_OK)
        return die(EXIT_INPUT, err.msg);
    said_written(written, o->export_dir);
    return 0;
}

/* --print's options for a trained model's run (and two models'), as the command line set them. */
static void
model_print_options(const struct cli_options *o, const struct pipeline_selection *chosen,
                    struct print_options *po, bool *heatmap_failed)
{
    memset(po, 0, sizeof *po);
    po->digits = o->digits;
    po->count = o->stage_count;
    po->chosen = chosen;
    po->format = o->format;
    po->heatmap = o->heatmap;
    if (o->heatmap)
        heatmap_output(o, po);
    po->failed = heatmap_failed;
    po->side = o->side >= 0 ? 1 + o->side : 0;
}

/* What printing to standard output ended with: 0, or the error said. */
int
printed(bool heatmap_failed)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return die(EXIT_INPUT, "cannot write to standard output");
    if (heatmap_failed)
        return die(EXIT_INPUT, "a heatmap could not be drawn: out of memory");
    return 0;
}

/*
 * --compare with --print or --export: the second model opened as --model's
 * is (its messages name --compare), its sizes checked against the first's,
 * the same source run through it, the two pipelines' ids and stages
 * checked, then printed or exported three ways.
 */
static int
run_compared(const struct cli_options *o, const struct model *m, struct pipeline *p,
             const struct pipeline_source *src, const struct pipeline_selection *chosen)
{
    static struct model m2; /* large (paths); one per process */
    struct pipeline_source second = *src;
    struct pipeline p2;
    struct compare c;
    struct attn_error err;
    char msg[1200];
    int code = 0;
    const struct model_options mo = model_options_of(o, true);

    attn_error_clear(&err);
    if (model_open(&m2, o->compare, &mo, &err) != ATTN_OK) {
        if (strncmp(err.msg, "--model", 7) == 0)
            snprintf(msg, sizeof msg, "--compare%s", err.msg + 7);
        else
            snprintf(msg, sizeof msg, "--compare %s: %s", o->compare, err.msg);
        return die(err.status == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, msg);
    }
    if (compare_check_models(m, &m2, &err) != ATTN_OK) {
        attn_fail_text(msg, sizeof msg, "--compare %s: cannot be set beside %s: %s", o->compare,
                       m->name, err.msg);
        model_close(&m2);
        return die(EXIT_USAGE, msg);
    }
    second.model = &m2;
    if (pipeline_create(&p2, &o->cfg, &second, &err) != ATTN_OK) {
        attn_fail_text(msg, sizeof msg, "--compare %s: %s", o->compare, err.msg);
        model_close(&m2);
        return die(is_usage_status(err.status) ? EXIT_USAGE : EXIT_INPUT, msg);
    }
    compare_init(&c, p, &p2);
    if (compare_check(p, &p2, &err) != ATTN_OK || compare_follow(&c, &err) != ATTN_OK) {
        attn_fail_text(msg, sizeof msg, "--compare %s: cannot be set beside %s: %s", o->compare,
                       m->name, err.msg);
        code = die(err.status == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, msg);
    } else if (o->generate >= 0) {
        /* The first writes; the second reads along, each token's probability to it said. */
        code = write_model(o, m, p, src, chosen, &c);
        compare_destroy(&c);
        pipeline_destroy(&p2);
        model_close(&m2);
        return code;
    } else if (o->mode == CLI_PRINT) {
        struct print_options po;
        bool heatmap_failed = false;
        model_print_options(o, chosen, &po, &heatmap_failed);
        print_compared(stdout, &c, &po);
        code = printed(heatmap_failed);
    }
    if (code == 0 && (o->mode == CLI_EXPORT || o->print_and_export)) {
        int written = 0;
        if (export_model_compared(&c, o->stage_count > 0 ? chosen : NULL, o->stage_count, NULL,
                                  o->export_dir, &written, &err) != ATTN_OK) {
            code = die(EXIT_INPUT, err.msg);
        } else {
            attn_fail_text(msg, sizeof msg, "wrote %d files into %s, %s/compare and "
                           "%s/difference", written, o->export_dir, o->export_dir,
                           o->export_dir);
            fprintf(stderr, "attnscope: %s\n", msg);
        }
    }
    compare_destroy(&c);
    pipeline_destroy(&p2);
    model_close(&m2);
    return code;
}

/*
 * The text a model reads: --chat's message in the model's own template, the
 * model's own example when no text is given, else the sentence.  0, or the
 * exit code of the error already said (the model is the caller's to close).
 */
static int
model_text(const struct cli_options *o, struct model *m, const char *sentence,
           struct pipeline_source *srcp)
{
    struct attn_error err;

    attn_error_clear(&err);
    srcp->sentence = sentence;
    srcp->bos = o->bos;
    if (o->chat != NULL) {
        /* The message in the model's own template: the template says what comes first. */
        const char *kind = NULL;
        char date[32];
        time_t now = time(NULL);
        struct tm tm;
        strftime(date, sizeof date, "%d %b %Y", localtime_r(&now, &tm));
        /* (kept by the model, freed with it) */
        m->chat_text = model_chat(m, o->chat, date, &kind, &err);
        if (m->chat_text == NULL)
            return die(err.status == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, err.msg);
        srcp->sentence = m->chat_text;
        srcp->bos = false;
        attn_fail_text(m->chat_used, sizeof m->chat_used,
                       "chat: the message in the %s chat template (%s), the assistant's turn "
                       "begun", kind, m->chat_from);
        if (m->note[0] == '\0')
            snprintf(m->note, sizeof m->note, "%s", m->chat_used);
    }
    if (o->chat == NULL && !o->sentence_given && o->sentence_file == NULL && m->example[0] != '\0') {
        /* No text given: the model's own example (its attnscope.json), not the book's sentence. */
        srcp->sentence = m->example;
        srcp->bos = o->bos || m->example_bos;
        if (m->note[0] == '\0')
            attn_fail_text(m->note, sizeof m->note, "no -s: %s's own example%s%s", m->name,
                           m->knows[0] != '\0' ? "; " : "", m->knows);
    }
    if (m->note[0] != '\0' && o->mode != CLI_TUI)
        fprintf(stderr, "attnscope: %s\n", m->note); /* (escaped when it was made) */
    return 0;
}

/*
 * The model's switches the options set (switches.h: heads ablated, experts
 * off, sinks off) checked against it and put in src, and --layer checked.
 * 0, or the exit code of the error already said; the masks are the
 * caller's to free either way.
 */
static int
model_switches(const struct cli_options *o, const struct model *m, struct pipeline_source *src,
               struct model_switch_masks *masks)
{
    struct attn_error err;
    char msg[1024];

    attn_error_clear(&err);
    if (model_switches_apply(m, &o->switches, masks, src, &err) != ATTN_OK)
        return die(is_usage_status(err.status) ? EXIT_USAGE : EXIT_INPUT, err.msg);
    if (o->layer >= m->dec.cfg.n_layer) {
        attn_fail_text(msg, sizeof msg, "--layer %d: %s has layers 0 to %d", o->layer, m->name,
                       m->dec.cfg.n_layer - 1);
        return die(EXIT_USAGE, msg);
    }
    return 0;
}

/* --print or --export on a trained model (--model). */
int
run_model(const struct cli_options *given, const char *sentence)
{
    static struct model m; /* large (paths); one per process */
    static struct cli_options own; /* the options with the model's own defaults taken */
    const struct cli_options *o = given;
    struct model_switch_masks masks = { { NULL } };
    struct pipeline p;
    struct pipeline_source src;
    struct pipeline_selection chosen[CLI_MAX_STAGES];
    struct attn_error err;
    char msg[1024];
    int code = 0;
    const struct model_options mo = model_options_of(given, false);

    attn_error_clear(&err);
    /* A value of an option the files contradict (--heads, --classes) is the user's to change. */
    if (model_open(&m, o->model, &mo, &err) != ATTN_OK) {
        /* The model's name came from the environment, not the command line: say so. */
        if (o->model_from_env && strncmp(err.msg, "--model", 7) == 0) {
            char said[sizeof err.msg + 32];
            snprintf(said, sizeof said, "$ATTNSCOPE_MODEL=%s", err.msg + 8);
            if (strncmp(err.msg + 7, ": ", 2) == 0)
                snprintf(said, sizeof said, "$ATTNSCOPE_MODEL%s", err.msg + 7);
            return die(EXIT_INPUT, said);
        }
        return die(err.status == ATTN_EVALUE ? EXIT_USAGE : EXIT_INPUT, err.msg);
    }
    /* An Ollama model's params: the writing's defaults where the command line says nothing. */
    own = *given;
    write_take_params(&own, &m);
    o = &own;
    memset(&src, 0, sizeof src);
    if ((code = model_text(o, &m, sentence, &src)) != 0) {
        model_close(&m);
        return code;
    }
    src.family = &family_model;
    src.model = &m;
    src.top = o->top;
    if ((code = model_switches(o, &m, &src, &masks)) != 0) {
        model_switch_masks_free(&masks);
        model_close(&m);
        return code;
    }
    /* (the head's rows but the last made when a screen reads them: the view's first frame
       shows none; --print when no stage it prints reads them) */
    src.next_later = o->mode == CLI_TUI || o->mode == CLI_FIGURE ||
                     (o->mode == CLI_PRINT && !o->print_and_export &&
                      o->compare == NULL && shows_no_next(o));
    if (o->mode == CLI_TUI || o->mode == CLI_FIGURE) {
        /*
         * The view builds its own pipeline from the same source, and runs
         * many forwards: its weights are packed, on a thread of their own
         * once the first frame is up (view_idle), or first when it writes.
         */
        if (o->mode == CLI_TUI && o->generate > 0)
            (void)family_model_pack_if_room(&m.dec);
        code = run_tui(o, &src, o->mode == CLI_TUI ? &m.dec : NULL);
        model_switch_masks_free(&masks);
        model_close(&m);
        return code;
    }
    /* Writing runs a forward a token: packing the weights once wins back its 0.3 s at once. */
    if (o->generate > 1)
        (void)family_model_pack_for_writing(&m.dec);
    /* (the run has room for what is written, and none when nothing is: --print never appends) */
    src.room = o->generate > 0 ? o->generate : DECODER_NO_ROOM;
    src.no_attention = o->mode == CLI_PRINT && !o->print_and_export && o->generate < 0 &&
                       shows_no_attention(o);
    src.lean = o->mode == CLI_PRINT && !o->print_and_export && o->generate < 0 &&
               shows_no_layer(o);
    if (pipeline_create(&p, &o->cfg, &src, &err) != ATTN_OK) {
        model_switch_masks_free(&masks);
        model_close(&m);
        return die(is_usage_status(err.status) ? EXIT_USAGE : EXIT_INPUT, err.msg);
    }
    if (o->layer > 0 && pipeline_select_layer(&p, o->layer, &err) != ATTN_OK) {
        code = die(EXIT_INPUT, err.msg);
    } else if (resolve_stages(&p, o, chosen, msg, sizeof msg) != 0) {
        code = die(EXIT_USAGE, msg);
    } else if (o->compare != NULL) {
        code = run_compared(o, &m, &p, &src, chosen);
    } else if (o->generate >= 0) {
        code = write_model(o, &m, &p, &src, chosen, NULL);
    } else if (o->mode == CLI_EXPORT) {
        code = export_model_run(o, &p, chosen);
    } else {
        struct print_options po;
        bool heatmap_failed = false;
        model_print_options(o, chosen, &po, &heatmap_failed);
        print_model(stdout, &p, &po);
        code = printed(heatmap_failed);
        if (code == 0 && o->print_and_export)
            code = export_model_run(o, &p, chosen);
    }
    pipeline_destroy(&p);
    model_switch_masks_free(&masks);
    model_close(&m);
    return code;
}

