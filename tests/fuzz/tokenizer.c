/*
 * tokenizer.c: fuzzes the tokenizer with any bytes as a sentence, and
 * checks what it promises: tokens are non-empty, in order, inside the
 * sentence, free of whitespace, and each is the sentence's own bytes.
 */
#include "config.h"

#include <stdlib.h>

#include "attnscope/text/tokenizer.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct token_list t;
    char *sentence = malloc(size + 1);
    int end = 0;

    if (sentence == NULL)
        return 0;
    memcpy(sentence, data, size);
    sentence[size] = '\0';
    if (tokenizer_split(sentence, &t, NULL) == ATTN_OK) {
        if (t.count < 1 || t.count > TOKENIZER_MAX_TOKENS)
            abort();
        for (int i = 0; i < t.count; i++) {
            if (t.length[i] < 1 || t.offset[i] < end ||
                (size_t)t.offset[i] + (size_t)t.length[i] > strlen(sentence) ||
                strlen(t.text[i]) != (size_t)t.length[i] ||
                memcmp(t.text[i], sentence + t.offset[i], (size_t)t.length[i]) != 0 ||
                strpbrk(t.text[i], " \t\r\n\v\f") != NULL)
                abort();
            end = t.offset[i] + t.length[i];
        }
        token_list_destroy(&t);
    }
    free(sentence);
    return 0;
}
