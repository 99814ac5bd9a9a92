/*
 * csv.c: fuzzes the CSV reader and what is built on it: the table parser
 * (libcsv, the limits, BOM, NUL and quoting checks), the conversion of
 * cells to numbers, and a vocabulary made from the table, which then embeds
 * a sentence of its own tokens and made-up ones.
 */
#include "config.h"

#include <stdlib.h>

#include "attnscope/files/csvio.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/vocab.h"
#include "fuzz.h"

static void
embed_with(const struct vocab *v)
{
    struct token_list tokens;
    struct matrix m;
    char sentence[256];
    size_t len = 0;

    /* The first tokens of the vocabulary and a word it lacks. */
    for (int i = 0; i < v->count && i < 4; i++) {
        size_t n = strlen(v->token[i]);
        if (len + n + 2 >= sizeof sentence - 8)
            break;
        memcpy(sentence + len, v->token[i], n);
        len += n;
        sentence[len++] = ' ';
    }
    memcpy(sentence + len, "zyzzyva", 8);
    if (tokenizer_split(sentence, &tokens, NULL) != ATTN_OK)
        abort(); /* every vocabulary token is one token of the tokenizer's */
    if (matrix_create(&m, tokens.count, v->dim, NULL) == ATTN_OK) {
        unsigned char made_up[8];
        vocab_embed(v, &tokens, &m, made_up);
        /* The first tokens are the vocabulary's own; a made-up one is marked. */
        for (int i = 0; i < tokens.count; i++)
            if (made_up[i] != (vocab_find(v, tokens.text[i]) < 0))
                abort();
        matrix_destroy(&m);
    }
    token_list_destroy(&tokens);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct csvio_table t;
    struct attn_error err;
    struct matrix m;
    struct vocab v;

    if (csvio_parse_table("fuzz.csv", (const char *)data, size, &t, &err) != ATTN_OK)
        return 0;
    if (t.rows < 1 || t.cols < 1)
        abort(); /* a parsed table is never empty */
    if (t.rows > 1 && t.cols > 1 && csvio_table_matrix(&t, 1, 1, &m, &err) == ATTN_OK)
        matrix_destroy(&m);
    if (vocab_from_table(&v, &t, &err) == ATTN_OK) {
        embed_with(&v);
        vocab_destroy(&v);
    }
    csvio_table_destroy(&t);
    return 0;
}
