/*
 * bpe.c: fuzzes GPT-2's tokenizer files and its encoding: the input is a
 * vocabulary (a JSON object of tokens and ids), a NUL byte, the merges, a
 * NUL byte and a text.  Whatever the files hold, loading either refuses
 * them with a message naming the file or gives a tokenizer whose ids, for
 * any UTF-8 text, are in the vocabulary and spell the text back, and
 * whose encoding with a limit stops past it.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "attnscope/text/bpe.h"
#include "fuzz.h"

static const char *
write_part(const char *suffix, const uint8_t *data, size_t size)
{
    static char paths[2][80];

    return fuzz_write_file(paths[suffix[0] == 'm'], sizeof paths[0], "bpe", suffix, data, size);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *end = data + size;
    const uint8_t *v_end = memchr(data, 0, size);
    const uint8_t *m_end;
    const char *vocab;
    const char *merges;
    struct bpe b;
    struct attn_error err;

    if (v_end == NULL)
        return 0;
    m_end = memchr(v_end + 1, 0, (size_t)(end - v_end - 1));
    if (m_end == NULL)
        return 0;
    vocab = write_part("vocab", data, (size_t)(v_end - data));
    merges = write_part("merges", v_end + 1, (size_t)(m_end - v_end - 1));
    if (vocab == NULL || merges == NULL)
        return 0;
    if (bpe_load(&b, vocab, merges, &err) == ATTN_OK) {
        const char *text = (const char *)m_end + 1;
        size_t len = (size_t)(end - m_end - 1);
        int *ids;
        int count;
        if (bpe_encode(&b, text, len, 0, &ids, &count, &err) == ATTN_OK) {
            char *back = malloc(len + 1);
            size_t at = 0;
            if (back == NULL)
                abort();
            for (int i = 0; i < count; i++) {
                int n;
                if (ids[i] < 0 || ids[i] >= b.vocab_size)
                    abort();
                n = bpe_token_bytes(&b, ids[i], back + at, len + 1 - at);
                if (n < 0)
                    abort();
                at += (size_t)n;
            }
            if (at != len || memcmp(back, text, len) != 0)
                abort(); /* the tokens spell the text back */
            free(back);
            /* With a limit: the same ids when they fit, "more than N" when they do not. */
            {
                int *few;
                int n_few;
                const int limit = count > 1 ? count - 1 : 1;
                enum attn_status st = bpe_encode(&b, text, len, limit, &few, &n_few, &err);
                if (count <= limit && (st != ATTN_OK || n_few != count ||
                                       memcmp(few, ids, (size_t)count * sizeof *ids) != 0))
                    abort();
                if (count > limit && st != ATTN_ELIMIT)
                    abort();
                if (st == ATTN_OK)
                    free(few);
            }
            free(ids);
        } else if (err.msg[0] == '\0') {
            abort();
        }
        bpe_destroy(&b);
    } else if (err.msg[0] == '\0') {
        abort(); /* a refusal always says why */
    }
    unlink(vocab);
    unlink(merges);
    return 0;
}
