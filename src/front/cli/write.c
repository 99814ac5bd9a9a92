/* write.c: --generate on the command line (see write.h). */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/progress.h"
#include "attnscope/base/status.h"
#include "attnscope/base/utf8.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/files/csvio.h"
#include "attnscope/pipeline/knob.h"
#include "front/cli/write.h"

void
write_options_of(const struct attention_config *cfg, const struct generate_end *end,
                 struct generate_options *o)
{
    generate_options_init(o);
    o->sample.temperature = cfg->sample_temperature;
    o->sample.top_k = cfg->top_k;
    o->sample.top_p = cfg->top_p;
    o->seed = cfg->seed;
    if (end != NULL)
        o->end = *end;
}

void
write_take_params(struct cli_options *o, const struct model *m)
{
    const struct model_params *p = &m->params;

    if (p->has_temperature && !(o->knobs_given & ((uint64_t)1 << KNOB_SAMPLE_TEMPERATURE)))
        o->cfg.sample_temperature = p->temperature;
    if (p->has_top_k && !(o->knobs_given & ((uint64_t)1 << KNOB_TOP_K)))
        o->cfg.top_k = p->top_k;
    if (p->has_top_p && !(o->knobs_given & ((uint64_t)1 << KNOB_TOP_P)))
        o->cfg.top_p = p->top_p;
}

enum attn_status
write_end_of(const struct write_eos *asked, const struct model *m, struct generate_end *end,
             struct attn_error *err)
{
    const int outputs = decoder_outputs(&m->dec.cfg);

    generate_end_one(end, -1, "");
    if (!asked->given) {
        /* The model's own, as Hugging Face's generate stops (those its head can choose). */
        for (int i = 0; i < m->dec.n_end_tokens && end->n < GENERATE_EOS_MAX; i++)
            if (m->dec.end_tokens[i] < outputs)
                end->id[end->n++] = m->dec.end_tokens[i];
        snprintf(end->from, sizeof end->from, "%s", end->n > 0 ? m->dec.end_from : "");
        return ATTN_OK;
    }
    if (asked->text[0] != '\0') {
        const int id = model_token_find(m, asked->text);
        char shown[160];
        attn_escape_text(shown, sizeof shown, asked->text);
        if (id < 0 || id >= outputs)
            return attn_fail(err, ATTN_EVALUE,
                             "--eos '%s': no token of %s's tokenizer (%s) is spelled so; give "
                             "its id, its text as the vocabulary spells it, or none",
                             shown, m->name, m->tokenizer);
        generate_end_one(end, id, "--eos");
        return ATTN_OK;
    }
    if (asked->id >= outputs)
        return attn_fail(err, ATTN_EVALUE, "--eos %d: give a token id from 0 to %d, or none",
                         asked->id, outputs - 1);
    generate_end_one(end, asked->id, "--eos");
    return ATTN_OK;
}

/* text's lines as they are, anything else that is not printable escaped (a model writes any byte). */
static void
put_text(FILE *out, const char *text)
{
    while (*text != '\0') {
        const size_t line = strcspn(text, "\n");
        char *piece = strndup(text, line);
        if (piece != NULL) {
            char shown[4 * 256 + 1];
            /* (in pieces of 256 bytes, escaped each; a cut character shows as its bytes) */
            for (size_t at = 0; at < line; at += 256) {
                char part[257];
                const size_t n = line - at < 256 ? line - at : 256;
                memcpy(part, piece + at, n);
                part[n] = '\0';
                attn_escape_text(shown, sizeof shown, part);
                fputs(shown, out);
            }
            free(piece);
        }
        text += line;
        if (*text == '\n') {
            fputc('\n', out);
            text++;
        }
    }
}

/* How the tokens are chosen, in the book's words. */
static void
put_method(FILE *out, const struct generation *g, int count)
{
    const struct sample_options *s = &g->o.sample;
    char t[32], p[32];

    attn_shortest(t, sizeof t, s->temperature);
    attn_shortest(p, sizeof p, s->top_p);
    fprintf(out, "writing %d token%s as the book's generate does: ", count, count == 1 ? "" : "s");
    if (s->top_k > 0)
        fprintf(out, "top-k %d (logits below the likeliest %d's smallest set to -inf), ",
                s->top_k, s->top_k);
    if (s->temperature == 0.0)
        fprintf(out, "greedy (argmax of the logits)");
    else {
        fprintf(out, "logits / %s, ", t);
        if (s->top_p < 1.0)
            fprintf(out, "top-p %s (Hugging Face's TopPLogitsWarper), ", p);
        fprintf(out, "softmax, a draw (torch.multinomial) after torch.manual_seed(%llu)",
                (unsigned long long)g->o.seed);
    }
    for (int i = 0; i < g->o.end.n; i++) {
        char shown[MODEL_TOKEN_DISPLAY_MAX(64)];
        fprintf(out, "%s%s (%d)", i == 0 ? "; stops at " : " or ",
                model_token_display(g->model, g->o.end.id[i], shown, sizeof shown),
                g->o.end.id[i]);
    }
    if (g->o.end.n > 0)
        fprintf(out, " (%s%s)", g->o.end.from,
                strcmp(g->o.end.from, "--eos") == 0 ? "" : "; --eos none writes on");
    fprintf(out, "\n");
}

static void
put_header(FILE *out, const struct generation *g, const struct pipeline *p,
           const struct pipeline *second, int count, const struct print_options *po)
{
    char *prompt;

    if (po->format == PRINT_CSV) {
        fputs(second != NULL ? "# generated\nstep,position,id,token,probability,second_probability\n"
                             : "# generated\nstep,position,id,token,probability\n",
              out);
        return;
    }
    put_method(out, g, count);
    prompt = generation_text(g, 0, g->prompt);
    fprintf(out, "prompt (%d token%s): ", g->prompt, g->prompt == 1 ? "" : "s");
    if (prompt != NULL)
        put_text(out, prompt);
    free(prompt);
    fprintf(out, "\n  p: the token's probability from the logits as they are, rank among all "
                 "(0: the likeliest);\n  p drawn, rank kept: after the cuts and the temperature, "
                 "what it was chosen with\n");
    if (second != NULL) {
        char name[4 * sizeof pipeline_decoder(second)->model->name];
        attn_escape_text(name, sizeof name, pipeline_decoder(second)->model->name);
        fprintf(out, "  p second: the probability %s gave the token, reading the same text\n",
                name);
    }
    fprintf(out, "  %4s  %8s  %6s  %-16s  %8s  %6s  %8s  %9s%s\n", "step", "position", "id",
            "token", "p", "rank", "p drawn", "rank kept", second != NULL ? "  p second" : "");
    (void)p;
}

static void
put_step(FILE *out, const struct generation *g, int step, const struct print_options *po)
{
    const struct generate_step *s = &g->steps[step];
    char shown[MODEL_TOKEN_DISPLAY_MAX(64)];

    model_token_display(g->model, s->choice.id, shown, sizeof shown);
    if (po->format == PRINT_CSV) {
        fprintf(out, "%d,%d,%d,", step + 1, s->position, s->choice.id);
        csvio_write_field(out, shown);
        fprintf(out, ",%.*f", po->digits, (double)s->choice.prob);
        if (!isnan(s->compared_prob))
            fprintf(out, ",%.*f", po->digits, (double)s->compared_prob);
        fputc('\n', out);
        return;
    }
    if (s->slid && (step == 0 || !g->steps[step - 1].slid))
        fprintf(out, "  (the text is past the model's context of %d tokens: from here it reads "
                     "the last %d, idx[:, -%d:], every row computed again)\n",
                g->context, g->context, g->context);
    fprintf(out, "  %4d  %8d  %6d  %s", step + 1, s->position, s->choice.id, shown);
    /* (padded by columns on screen: "·" is two bytes, one column) */
    for (int w = utf8_width(shown); w < 16; w++)
        fputc(' ', out);
    fprintf(out, "  %8.*f  %6d  %8.*f  %9d", po->digits, (double)s->choice.prob_plain,
            s->choice.rank, po->digits, (double)s->choice.prob, s->choice.rank_kept);
    if (!isnan(s->compared_prob))
        fprintf(out, "  %8.*f", po->digits, (double)s->compared_prob);
    fputc('\n', out);
}

/* Ctrl-C while writing: stop at the next step, keep what was written. */
static void
on_interrupt(int sig)
{
    (void)sig;
    progress_stop();
}

/*
 * The probability the second model gave the token the writer just wrote
 * (reading the text the writer chose it after: the second is one token
 * behind), then the second brought to the writer's text.
 */
static enum attn_status
follow_second(struct generation *g, struct pipeline *p, struct pipeline *second,
              const struct pipeline_source *src, struct attn_error *err)
{
    struct generate_step *s = &g->steps[g->written - 1];
    struct pipeline_source base = *src;
    struct compare c;

    compare_init(&c, p, second);
    s->compared_prob =
        compare_second_prob(&c, pipeline_decoder(second)->run.n - 1, s->choice.id);
    compare_destroy(&c);
    base.model = pipeline_decoder(second)->model;
    return generation_follow(g, second, &p->cfg, &base, err);
}

enum attn_status
write_tokens(FILE *out, struct generation *g, struct pipeline *p, struct pipeline *second,
             const struct pipeline_source *src, int count, const struct print_options *po,
             double *seconds, struct attn_error *err)
{
    struct sigaction stop, before;
    enum attn_status st = ATTN_OK;
    int room = count;

    *seconds = 0.0;
    if (room > g->context)
        room = g->context;
    progress_reset();
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = on_interrupt;
    /* A write blocked on a full pipe (a paused pager) goes on after it: nothing is lost. */
    stop.sa_flags = SA_RESTART;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, &before);
    st = generation_begin(g, p, &p->cfg, src, room, err);
    if (st == ATTN_OK && second != NULL) {
        /* The second reads the prompt as the writer does (its ids, its window). */
        struct pipeline_source base = *src;
        base.model = pipeline_decoder(second)->model;
        st = generation_follow(g, second, &p->cfg, &base, err);
    }
    if (st == ATTN_OK && out != NULL)
        put_header(out, g, p, second, count, po);
    for (int i = 0; st == ATTN_OK && i < count; i++) {
        bool ended;
        if (progress_stopped()) {
            st = attn_fail(err, ATTN_ESTOPPED, "stopped after %d of %d tokens", g->written, count);
            break;
        }
        st = generation_write(g, p, &p->cfg, src, &ended, err);
        if (st == ATTN_ESTOPPED)
            st = attn_fail(err, ATTN_ESTOPPED, "stopped after %d of %d tokens", g->written, count);
        if (st != ATTN_OK)
            break;
        if (ended) {
            if (out != NULL && po->format != PRINT_CSV) {
                char shown[MODEL_TOKEN_DISPLAY_MAX(64)];
                fprintf(out, "  the model chose %s (id %d, p drawn %.*f): the writing stops there "
                             "(%s), as the book's generate breaks\n",
                        model_token_display(g->model, g->end.id, shown, sizeof shown),
                        g->end.id, po->digits, (double)g->end.prob,
                        g->o.end.from[0] != '\0' ? g->o.end.from : "--eos");
            }
            break;
        }
        *seconds += g->steps[g->written - 1].seconds;
        if (second != NULL && (st = follow_second(g, p, second, src, err)) != ATTN_OK)
            break;
        if (out != NULL) {
            put_step(out, g, g->written - 1, po);
            fflush(out);
        }
    }
    sigaction(SIGINT, &before, NULL);
    progress_reset();
    return st;
}

void
write_print_steps(FILE *out, const struct generation *g, const struct print_options *po)
{
    put_header(out, g, NULL, NULL, g->written, po);
    for (int i = 0; i < g->written; i++)
        put_step(out, g, i, po);
    write_print_text(out, g, po);
}

/*
 * A model with layers that keep a state of their own (Gated DeltaNet's):
 * the attention layers' keys and values beside those states, whose size
 * does not grow with the text.
 */
static void
put_cache_states(FILE *out, const struct decoder_config *c, int n, size_t bytes)
{
    int attends = 0, stateful = 0, one = -1;
    size_t kv = 0;
    char shown[32], each[32], at32k[32];

    for (int l = 0; l < c->n_layer; l++) {
        const struct decoder_mixer *mx = decoder_mixer_of(c, l);
        if (mx->keeps_state) {
            stateful++;
            one = one < 0 ? l : one;
        } else {
            attends++;
            kv += mx->kept_floats(c, l, n) * sizeof(float);
        }
    }
    const struct decoder_mixer *st = decoder_mixer_of(c, one);
    fprintf(out, "kv cache: %d attention %s keys and values (%zu bytes: 2 x %d tokens x %d "
                 "(kv width) x 4 bytes a layer) + %d %s %s states (%s: %s each, the same at "
                 "any length) = %zu bytes (%s; at 32768 tokens: %s): what a written token reads "
                 "instead of the text\n\n",
            attends, attends == 1 ? "layer's" : "layers'", kv, n, decoder_kv_width(c), stateful,
            st->name, stateful == 1 ? "layer's" : "layers'", st->keeps,
            attn_size_text(each, sizeof each, st->kept_floats(c, one, n) * sizeof(float)),
            bytes, attn_size_text(shown, sizeof shown, bytes),
            attn_size_text(at32k, sizeof at32k, generation_cache_bytes(c, 32768)));
}

/* What the cache held for the last token read: its formula and size. */
static void
put_cache(FILE *out, const struct generation *g)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    const int n = g->n - g->first;
    const size_t bytes = generation_cache_bytes(c, n);
    const size_t full = generation_cache_bytes_full(c, n);
    int ringed = 0;
    char shown[32], saved[32];

    for (int l = 0; l < c->n_layer; l++) {
        if (decoder_mixer_of(c, l)->keeps_state) {
            put_cache_states(out, c, n, bytes);
            return;
        }
        ringed += generation_cache_rows(c, l, n) < n;
    }
    if (ringed == 0) {
        fprintf(out, "kv cache: 2 x %d layers x %d tokens x %d (kv width) x 4 bytes = %zu bytes "
                     "(%s): the keys and values kept so a written token computes one row\n\n",
                c->n_layer, n, decoder_kv_width(c), bytes,
                attn_size_text(shown, sizeof shown, bytes));
        return;
    }
    /* The sliding layers keep a ring of their window (generation_cache_rows). */
    fprintf(out, "kv cache: 2 x (%d full layer%s x %d tokens + %d sliding layer%s x %d rows, a "
                 "ring of each window) x %d (kv width) x 4 bytes = %zu bytes (%s, %s less than "
                 "every row of every layer): the keys and values kept so a written token "
                 "computes one row\n\n",
            c->n_layer - ringed, c->n_layer - ringed == 1 ? "" : "s", n, ringed,
            ringed == 1 ? "" : "s", c->sliding_window, decoder_kv_width(c), bytes,
            attn_size_text(shown, sizeof shown, bytes),
            attn_size_text(saved, sizeof saved, full - bytes));
}

void
write_print_text(FILE *out, const struct generation *g, const struct print_options *po)
{
    char *text;

    if (po->format == PRINT_CSV) {
        fputc('\n', out);
        return;
    }
    text = generation_text(g, 0, -1);
    fprintf(out, "\ntext (%d token%s of prompt, %d written):\n", g->prompt,
            g->prompt == 1 ? "" : "s", g->written);
    if (text != NULL)
        put_text(out, text);
    fputs("\n\n", out);
    free(text);
    put_cache(out, g);
}
