/*
 * model_writing.c: what a model's own files say about its writing (see
 * model.h): the end tokens that stop it, its chat template and a message
 * put in it, and an Ollama model's params layer.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/models/model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/text/chat.h"
#include "attnscope/text/tokjson.h"
#include "model_internal.h"

/*
 * The end tokens a Hugging Face folder names, as its generate stops:
 * generation_config.json's eos_token_id (an id or a list of them), else
 * config.json's (what Hugging Face makes the generation config of when the
 * folder has none).  0, or -1 with err naming the file and the key when
 * it holds something else or an id outside the vocabulary.
 */
int
model_read_end_tokens(struct model *m, struct attn_error *err)
{
    static const char *const files[] = { "generation_config.json", "config.json" };
    struct decoder_model *d = &m->dec;
    const char *dot = strrchr(m->weights, '.');

    /* A GGUF names its own (architecture_gguf.c); the book's .pth files none, as the book. */
    if (d->n_end_tokens > 0 || strncmp(d->format, "GGUF", 4) == 0 ||
        (dot != NULL && strcmp(dot, ".pth") == 0))
        return 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[MODEL_PATH_MAX + 32];
        json_t *root, *eos;
        struct stat st;
        size_t count;
        snprintf(path, sizeof path, "%s/%s", m->dir, files[f]);
        if (stat(path, &st) != 0)
            continue;
        root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
        if (root == NULL)
            return -1;
        eos = json_is_object(root) ? json_object_get(root, "eos_token_id") : NULL;
        if (eos == NULL || json_is_null(eos)) {
            json_decref(root);
            continue;
        }
        count = json_is_array(eos) ? json_array_size(eos) : 1;
        for (size_t i = 0; i < count; i++) {
            json_t *v = json_is_array(eos) ? json_array_get(eos, i) : eos;
            json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
            if (id < 0 || id >= d->cfg.vocab_size || i >= DECODER_END_MAX) {
                json_decref(root);
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: eos_token_id: give a token id from 0 to %d, or a list of "
                                 "at most %d", path, d->cfg.vocab_size - 1, DECODER_END_MAX),
                       -1;
            }
            d->end_tokens[d->n_end_tokens++] = (int)id;
        }
        snprintf(d->end_from, sizeof d->end_from, "%s's eos_token_id", files[f]);
        json_decref(root);
        return 0;
    }
    return 0;
}

int
model_token_find(const struct model *m, const char *text)
{
    const size_t len = strlen(text);

    /* As the vocabulary spells it ("<|im_end|>", "Ġthe") first, then by its bytes (" the"). */
    for (int id = 0; id < m->bpe.vocab_size; id++)
        if (m->bpe.token[id] != NULL && strcmp(m->bpe.token[id], text) == 0)
            return id;
    for (int id = 0; id < m->bpe.vocab_size; id++) {
        int n = 0;
        const char *raw = bpe_token_raw(&m->bpe, id, &n);
        if (raw != NULL && (size_t)n == len && memcmp(raw, text, len) == 0)
            return id;
    }
    return -1;
}

/* tokenizer_config.json's bos_token (a string, or an added token's {"content": ...}) into m. */
static void
config_bos(struct model *m, json_t *config)
{
    json_t *bos = json_object_get(config, "bos_token");
    const char *s = json_is_string(bos) ? json_string_value(bos)
                                         : json_string_value(json_object_get(bos, "content"));

    if (s != NULL)
        snprintf(m->chat_bos, sizeof m->chat_bos, "%s", s);
}

/*
 * m's chat template, if its files have one: Ollama's template layer
 * (ollama, a blob's path, or ""), a GGUF's tokenizer.chat_template, a
 * folder's chat_template.jinja, or tokenizer_config.json's chat_template
 * (a string, or a list of named ones: "default" or the first).  And the
 * bos_token text it puts first.  None is no error (--chat says so); 0, or
 * -1 with err set when a file is damaged.
 */
int
model_read_chat_template(struct model *m, const char *ollama, struct attn_error *err)
{
    char path[MODEL_PATH_MAX + 64];
    size_t len = 0;
    const char *weights = m->weights[0] != '\0' ? m->weights : NULL;

    if (m->dec.bos_token >= 0 && m->dec.bos_token < m->bpe.vocab_size &&
        m->bpe.token[m->dec.bos_token] != NULL)
        snprintf(m->chat_bos, sizeof m->chat_bos, "%s", m->bpe.token[m->dec.bos_token]);
    if (ollama[0] != '\0') {
        if (fileio_read_regular(ollama, JSONFILE_CONFIG_MAX, &m->chat_template, &len, err) !=
            ATTN_OK)
            return -1;
        snprintf(m->chat_from, sizeof m->chat_from, "Ollama's template layer");
        return 0;
    }
    if (weights != NULL && gguf_file_is(weights)) {
        /* (read with the rest of its metadata: architecture_gguf.c) */
        if (m->dec.chat_template != NULL &&
            (m->chat_template = strdup(m->dec.chat_template)) == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
        if (m->dec.chat_template_type[0] != '\0')
            snprintf(m->chat_wrong, sizeof m->chat_wrong,
                     "its GGUF's tokenizer.chat_template is there, but of type %s, not a STRING "
                     "of template text", m->dec.chat_template_type);
        snprintf(m->chat_from, sizeof m->chat_from, "its GGUF's tokenizer.chat_template");
        return 0;
    }
    snprintf(path, sizeof path, "%s/chat_template.jinja", m->dir);
    if (!fileio_absent(path)) {
        if (fileio_read_regular(path, JSONFILE_CONFIG_MAX, &m->chat_template, &len, err) != ATTN_OK)
            return -1;
        snprintf(m->chat_from, sizeof m->chat_from, "chat_template.jinja");
    }
    snprintf(path, sizeof path, "%s/tokenizer_config.json", m->dir);
    if (!fileio_absent(path)) {
        json_t *config = jsonfile_load(path, JSONFILE_VOCAB_MAX, err), *ct;
        const char *s = NULL;
        if (config == NULL)
            return -1;
        config_bos(m, config);
        ct = json_object_get(config, "chat_template");
        if (json_is_string(ct))
            s = json_string_value(ct);
        for (size_t i = 0; json_is_array(ct) && i < json_array_size(ct); i++) {
            json_t *one = json_array_get(ct, i);
            const char *name = json_string_value(json_object_get(one, "name"));
            const char *text = json_string_value(json_object_get(one, "template"));
            if (text != NULL && (s == NULL || (name != NULL && strcmp(name, "default") == 0)))
                s = text;
        }
        if (s == NULL && ct != NULL && !json_is_null(ct))
            snprintf(m->chat_wrong, sizeof m->chat_wrong,
                     "tokenizer_config.json's chat_template is there, but %s, not a template's "
                     "text (a string, or a list of {\"name\", \"template\"})",
                     json_is_array(ct) ? "a list holding no {\"template\": text}"
                     : json_is_object(ct) ? "an object" : json_is_number(ct) ? "a number"
                                                            : "true or false");
        if (s != NULL && m->chat_template == NULL) {
            if ((m->chat_template = strdup(s)) == NULL) {
                json_decref(config);
                return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
            }
            snprintf(m->chat_from, sizeof m->chat_from, "tokenizer_config.json's chat_template");
        }
        json_decref(config);
    }
    return 0;
}

char *
model_chat(const struct model *m, const char *text, const char *date, const char **kind,
           struct attn_error *err)
{
    struct chat_template t;
    char what[MODEL_PATH_MAX + 200];
    char *out;

    if (m->chat_template == NULL && m->chat_wrong[0] != '\0')
        return attn_fail(err, ATTN_EVALUE, "--chat: %s: %s; give the text with -s", m->name,
                         m->chat_wrong),
               NULL;
    if (m->chat_template == NULL)
        return attn_fail(err, ATTN_EVALUE,
                         "--chat: %s has no chat template (no chat_template.jinja, no "
                         "chat_template in tokenizer_config.json, none in a GGUF): it is not an "
                         "instruction model, or its template was left behind; give the text "
                         "with -s",
                         m->name),
               NULL;
    snprintf(what, sizeof what, "--chat: %s's %s", m->name, m->chat_from);
    if (chat_detect(m->chat_template, what, &t, err) != 0)
        return NULL;
    /* A tokenizer that puts the BOS first itself (Gemma's) is not given it twice. */
    if (t.bos && m->bpe.pipeline != NULL && tokjson_first_id(m->bpe.pipeline) >= 0)
        t.bos = false;
    out = chat_render(&t, m->chat_bos, date, text);
    if (out == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory"), NULL;
    *kind = t.name;
    return out;
}

/*
 * An Ollama model's params layer (m->params), the part the model itself
 * takes: its stop strings that are one token each end the writing beside
 * the file's own end tokens (as Ollama stops at both), num_ctx shortens the
 * context; said in m->note with the sampling settings the front end takes
 * as the writing's defaults (the command line wins).
 */
void
model_take_params(struct model *m)
{
    struct model_params *p = &m->params;
    struct decoder_model *d = &m->dec;
    size_t at = strlen(m->note);
    char num[32];
    bool stops = false;

    if (p->from[0] == '\0')
        return;
    attn_appendf(m->note, sizeof m->note, &at, "%sOllama's params for %.60s:", at > 0 ? "; " : "",
                 m->name);
    if (p->has_temperature) {
        attn_shortest(num, sizeof num, p->temperature);
        attn_appendf(m->note, sizeof m->note, &at, " temperature %s", num);
    }
    if (p->has_top_k)
        attn_appendf(m->note, sizeof m->note, &at, " top_k %d", p->top_k);
    if (p->has_top_p) {
        attn_shortest(num, sizeof num, p->top_p);
        attn_appendf(m->note, sizeof m->note, &at, " top_p %s", num);
    }
    for (int i = 0; i < p->n_stop; i++) {
        const int id = model_token_find(m, p->stop[i]);
        char shown[160];
        attn_escape_text(shown, sizeof shown, p->stop[i]);
        attn_appendf(m->note, sizeof m->note, &at, "%s%s%s", i == 0 ? " stop " : ", ", shown,
                     id < 0 ? " (not one token: not taken)" : "");
        if (id < 0 || id >= d->cfg.vocab_size || d->n_end_tokens == DECODER_END_MAX)
            continue;
        for (int k = 0; k < d->n_end_tokens; k++)
            if (d->end_tokens[k] == id)
                goto next;
        d->end_tokens[d->n_end_tokens++] = id;
        stops = true;
    next:;
    }
    if (stops) {
        size_t e = strlen(d->end_from);
        attn_appendf(d->end_from, sizeof d->end_from, &e, "%sthe stop of Ollama's params",
                     e > 0 ? " and " : "");
    }
    if (p->num_ctx > 0) {
        attn_appendf(m->note, sizeof m->note, &at, " num_ctx %d", p->num_ctx);
        if (p->num_ctx < d->cfg.n_ctx) {
            d->cfg.n_ctx = p->num_ctx;
            snprintf(d->context_from, sizeof d->context_from, "num_ctx in Ollama's params");
        }
    }
    attn_appendf(m->note, sizeof m->note, &at, " (the command line wins)");
}
