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

#include "attnscope/base/status.h"

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

#endif
