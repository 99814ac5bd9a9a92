/* tokenizer.c: sentence -> tokens (see tokenizer.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"

static int
is_space_byte(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int
is_word_byte(unsigned char c)
{
    /* Spelled out rather than isalnum(), whose answer depends on the locale. */
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
           (c >= 'a' && c <= 'z') || c == '_';
}

/* Counts tokens and checks the encoding; returns -1 with err set on failure. */
static int
scan(const unsigned char *s, size_t len, struct attn_error *err)
{
    int count = 0;
    size_t i = 0;

    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            if (utf8_length(s + i, len - i) == 0) {
                attn_fail(err, ATTN_EPARSE,
                          "the sentence is not valid UTF-8 (byte %zu, 0x%02X)", i + 1, c);
                return -1;
            }
        }
        if (!is_space_byte(c) && utf8_control_length(s + i, len - i) > 0) {
            uint32_t cp = c;
            if (c >= 0x80)
                utf8_decode((const char *)s + i, &cp);
            attn_fail(err, ATTN_EPARSE, "the sentence holds a control character (byte %zu, U+%04X)",
                      i + 1, (unsigned)cp);
            return -1;
        }
        if (is_space_byte(c)) {
            i++;
            continue;
        }
        count++;
        if (count > TOKENIZER_MAX_TOKENS) {
            attn_fail(err, ATTN_ELIMIT,
                      "the sentence has more than %d tokens, attnscope's limit",
                      TOKENIZER_MAX_TOKENS);
            return -1;
        }
        if (is_word_byte(c)) {
            while (i < len && is_word_byte(s[i])) {
                int n = s[i] >= 0x80 ? utf8_length(s + i, len - i) : 1;
                if (n == 0 || utf8_control_length(s + i, len - i) > 0)
                    break; /* reported by the outer loop */
                i += (size_t)n;
            }
        } else {
            i++;
        }
    }
    return count;
}

enum attn_status
tokenizer_split(const char *sentence, struct token_list *out, struct attn_error *err)
{
    const unsigned char *s = (const unsigned char *)sentence;
    size_t len = strlen(sentence);
    int count;
    int t = 0;
    size_t i = 0;
    char *dst;

    memset(out, 0, sizeof *out);
    if (len > TOKENIZER_MAX_BYTES)
        return attn_fail(err, ATTN_ELIMIT,
                         "the sentence is %zu bytes long; attnscope's limit is %u bytes",
                         len, TOKENIZER_MAX_BYTES);
    count = scan(s, len, err);
    if (count < 0)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (count == 0)
        return attn_fail(err, ATTN_EVALUE, "the sentence is empty: type at least one word");

    out->text = calloc((size_t)count, sizeof *out->text);
    out->offset = calloc((size_t)count, sizeof *out->offset);
    out->length = calloc((size_t)count, sizeof *out->length);
    out->storage = malloc(len + (size_t)count + 1);
    if (out->text == NULL || out->offset == NULL || out->length == NULL || out->storage == NULL) {
        token_list_destroy(out);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for %d tokens", count);
    }

    dst = out->storage;
    while (i < len) {
        size_t start = i;
        if (is_space_byte(s[i])) {
            i++;
            continue;
        }
        if (is_word_byte(s[i])) {
            while (i < len && is_word_byte(s[i]))
                i += s[i] >= 0x80 ? (size_t)utf8_length(s + i, len - i) : 1;
        } else {
            i++;
        }
        out->text[t] = dst;
        out->offset[t] = (int)start;
        out->length[t] = (int)(i - start);
        memcpy(dst, s + start, i - start);
        dst += i - start;
        *dst++ = '\0';
        t++;
    }
    out->count = count;
    return ATTN_OK;
}

void
token_list_destroy(struct token_list *tokens)
{
    if (tokens == NULL)
        return;
    free(tokens->text);
    free(tokens->offset);
    free(tokens->length);
    free(tokens->storage);
    memset(tokens, 0, sizeof *tokens);
}
