/*
 * tokenizer.h: a sentence in, tokens out.
 *
 * Words and punctuation become separate tokens: "Hello shiny sun!" gives
 * Hello, shiny, sun, !.  A word is a run of letters, digits and any non-ASCII
 * characters (so "café" and "naïve" stay whole); every ASCII punctuation mark
 * is a token of its own; whitespace separates.  The sentence must be UTF-8.
 */
#ifndef ATTNSCOPE_TOKENIZER_H
#define ATTNSCOPE_TOKENIZER_H

#include <stddef.h>

#include "attnscope/status.h"

/* A sentence of more tokens than this is refused (see doc/attnscope.1). */
#define TOKENIZER_MAX_TOKENS 4096
/* A sentence longer than this many bytes is refused. */
#define TOKENIZER_MAX_BYTES (1u << 20)

struct token_list {
    int count;
    char **text;   /* (count) NUL-terminated tokens, pointing into storage */
    int *offset;   /* (count) byte offset of each token in the sentence */
    int *length;   /* (count) length in bytes */
    char *storage; /* every token's bytes, each followed by a NUL */
};

/*
 * Splits sentence into tokens.  An empty sentence (or one of only spaces), a
 * sentence that is not valid UTF-8, or one beyond the limits above is
 * refused with a message that says where.
 */
enum attn_status tokenizer_split(const char *sentence, struct token_list *out,
                                 struct attn_error *err);

void token_list_destroy(struct token_list *tokens);

/*
 * The number of bytes of the valid UTF-8 sequence starting at s (1 to 4), or
 * 0 if s does not start one.  Shared with the renderer's width handling.
 */
int tokenizer_utf8_length(const unsigned char *s, size_t avail);

/*
 * How many of the len bytes at s are text safe to show as they are: valid
 * UTF-8 without control characters (see below), but for the ASCII ones in
 * allowed (such as "\n\t").  len if all of them are.
 */
size_t tokenizer_text_span(const unsigned char *s, size_t len, const char *allowed);

/*
 * The number of bytes of the control character at s (1 for C0 and DEL, 2
 * for a C1 code point U+0080 to U+009F), or 0 if s does not start one.
 * Terminals act on these, so attnscope never shows them as they are.
 */
static inline int
tokenizer_control_length(const unsigned char *s, size_t avail)
{
    if (avail >= 1 && (s[0] < 0x20 || s[0] == 0x7F))
        return 1;
    if (avail >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    return 0;
}

#endif
