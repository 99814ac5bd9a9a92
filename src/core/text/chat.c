/* chat.c: a user message in its model's chat template (see chat.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "attnscope/text/chat.h"

const char *
chat_known(void)
{
    return "ChatML (Qwen, SmolLM, Olmo 3), Phi-4, Llama 3, Gemma, Phi-3, Olmo 2, Mistral";
}

/*
 * A default system message in a ChatML template: the literal after
 * "<|im_start|>system" and its line end up to "<|im_end|>", when no quote
 * ends the literal first (Qwen3's '<|im_start|>system\n' + content is not
 * one; Qwen2.5's '<|im_start|>system\nYou are Qwen, ...<|im_end|>\n' is).
 * Jinja's \n in it is a line end.
 */
static void
default_system(const char *tmpl, char *out, size_t size)
{
    static const char mark[] = "<|im_start|>system";
    const char *at = tmpl;

    out[0] = '\0';
    while ((at = strstr(at, mark)) != NULL) {
        const char *p = at + sizeof mark - 1;
        const char *end;
        size_t n = 0;
        at = p;
        if (p[0] == '\\' && p[1] == 'n')
            p += 2;
        else if (p[0] == '\n')
            p++;
        else
            continue;
        end = strstr(p, "<|im_end|>");
        if (end == NULL || end == p || memchr(p, '\'', (size_t)(end - p)) != NULL ||
            memchr(p, '"', (size_t)(end - p)) != NULL || memchr(p, '{', (size_t)(end - p)) != NULL)
            continue;
        for (; p < end && n + 1 < size; p++) {
            if (p[0] == '\\' && p + 1 < end && p[1] == 'n') {
                out[n++] = '\n';
                p++;
            } else {
                out[n++] = *p;
            }
        }
        out[n] = '\0';
        return;
    }
}

int
chat_detect(const char *tmpl, const char *what, struct chat_template *t, struct attn_error *err)
{
    memset(t, 0, sizeof *t);
    t->bos = strstr(tmpl, "bos_token") != NULL;
    if (strstr(tmpl, "<|im_sep|>") != NULL) {
        t->kind = CHAT_PHI4;
        t->name = "Phi-4";
    } else if (strstr(tmpl, "<|im_start|>") != NULL) {
        t->kind = CHAT_CHATML;
        t->name = "ChatML";
        default_system(tmpl, t->system, sizeof t->system);
    } else if (strstr(tmpl, "<|start_header_id|>") != NULL) {
        t->kind = CHAT_LLAMA3;
        t->name = "Llama 3";
        t->trim = true;
        t->dated = strstr(tmpl, "Cutting Knowledge Date") != NULL;
    } else if (strstr(tmpl, "<start_of_turn>") != NULL) {
        t->kind = CHAT_GEMMA;
        t->name = "Gemma";
        t->trim = true;
    } else if (strstr(tmpl, "<|user|>") != NULL && strstr(tmpl, "<|end|>") != NULL) {
        t->kind = CHAT_PHI3;
        t->name = "Phi-3";
    } else if (strstr(tmpl, "<|user|>") != NULL && strstr(tmpl, "<|assistant|>") != NULL) {
        t->kind = CHAT_OLMO2;
        t->name = "Olmo 2";
    } else if (strstr(tmpl, "[SYSTEM_PROMPT]") != NULL) {
        return attn_fail(err, ATTN_EVALUE,
                         "%s: Mistral's v7 template ([SYSTEM_PROMPT], its own default system "
                         "prompt) is not one attnscope writes; the ones it does: %s. Give the "
                         "text as the template would make it with -s",
                         what, chat_known()),
               -1;
    } else if (strstr(tmpl, "[INST]") != NULL) {
        const bool spaced = strstr(tmpl, "[INST] '") != NULL || strstr(tmpl, "[INST] \"") != NULL ||
                            strstr(tmpl, "' [/INST]") != NULL || strstr(tmpl, "\" [/INST]") != NULL;
        t->kind = spaced ? CHAT_MISTRAL_V1 : CHAT_MISTRAL;
        t->name = spaced ? "Mistral v1" : "Mistral";
    } else {
        return attn_fail(err, ATTN_EVALUE,
                         "%s: a chat template of no family attnscope knows (it knows %s). Give "
                         "the text as the template would make it with -s",
                         what, chat_known()),
               -1;
    }
    return 0;
}

/* Appends s (n bytes) to the growing text. */
static bool
put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = (*len + n + 1) * 2;
        char *more = realloc(*buf, want);
        if (more == NULL)
            return false;
        *buf = more;
        *cap = want;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

/*
 * Python's str.isspace(), what Jinja's trim strips (str.strip()): ASCII's
 * white space, the separators U+001C-001F, and Unicode's (NEL, no-break
 * space, the ideographic space a CJK keyboard types, ...).
 */
static bool
is_space(uint32_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
           c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* The bytes of the white-space character at s (n bytes left), or 0 when it is none. */
static int
space_at(const char *s, size_t n)
{
    uint32_t cp;
    const int len = utf8_length((const unsigned char *)s, n);

    return len > 0 && utf8_decode(s, &cp) == len && is_space(cp) ? len : 0;
}

/* The bytes of the white-space character ending s + n, or 0. */
static int
space_before(const char *s, size_t n)
{
    size_t start = n;

    while (start > 0 && n - start < 4 && ((unsigned char)s[start - 1] & 0xc0) == 0x80)
        start--;
    if (start == 0)
        return 0;
    start--;
    return space_at(s + start, n - start) == (int)(n - start) ? (int)(n - start) : 0;
}

char *
chat_render(const struct chat_template *t, const char *bos, const char *date, const char *user)
{
    size_t len = 0, cap = 0, n = strlen(user);
    const char *msg = user;
    char *out = NULL;
    bool ok = true;

    if (t->trim) {
        int k;
        while (n > 0 && (k = space_at(msg, n)) > 0) {
            msg += k;
            n -= (size_t)k;
        }
        while (n > 0 && (k = space_before(msg, n)) > 0)
            n -= (size_t)k;
    }
#define PUT(s) (ok = ok && put(&out, &len, &cap, (s), strlen(s)))
    PUT("");
    if (t->bos && bos != NULL)
        PUT(bos);
    switch (t->kind) {
    case CHAT_CHATML:
        if (t->system[0] != '\0') {
            PUT("<|im_start|>system\n");
            PUT(t->system);
            PUT("<|im_end|>\n");
        }
        PUT("<|im_start|>user\n");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("<|im_end|>\n<|im_start|>assistant\n");
        break;
    case CHAT_PHI4:
        PUT("<|im_start|>user<|im_sep|>");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("<|im_end|><|im_start|>assistant<|im_sep|>");
        break;
    case CHAT_LLAMA3:
        if (t->dated) {
            PUT("<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December "
                "2023\nToday Date: ");
            PUT(date);
            PUT("\n\n<|eot_id|>");
        }
        PUT("<|start_header_id|>user<|end_header_id|>\n\n");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case CHAT_GEMMA:
        PUT("<start_of_turn>user\n");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("<end_of_turn>\n<start_of_turn>model\n");
        break;
    case CHAT_PHI3:
        PUT("<|user|>\n");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("<|end|>\n<|assistant|>\n");
        break;
    case CHAT_OLMO2:
        PUT("<|user|>\n");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("\n<|assistant|>\n");
        break;
    case CHAT_MISTRAL:
        PUT("[INST]");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT("[/INST]");
        break;
    case CHAT_MISTRAL_V1:
        PUT("[INST] ");
        ok = ok && put(&out, &len, &cap, msg, n);
        PUT(" [/INST]");
        break;
    }
#undef PUT
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}
