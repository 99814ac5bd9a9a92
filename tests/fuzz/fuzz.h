/*
 * fuzz.h: what attnscope's fuzz harnesses share.
 *
 * Each harness (csv.c, tokenizer.c, walkthrough.c, options.c, keys.c)
 * defines LLVMFuzzerTestOneInput().  Linked with clang's -fsanitize=fuzzer
 * it is a libFuzzer target (tests/fuzz/run builds and runs them); linked
 * with replay.c it replays a corpus, which is how `make check` keeps every
 * input in tests/fuzz/corpus/ and tests/fuzz/regressions/ passing.
 */
#ifndef ATTNSCOPE_FUZZ_H
#define ATTNSCOPE_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/attention/attention_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Whether a configuration the fuzzer reached is small enough to compute
 * quickly.  Large ones are valid (the limits are tested elsewhere), but
 * computing them would only slow the search down.
 */
static inline bool
fuzz_small(const struct attention_config *cfg, const char *sentence)
{
    /* Tables of every stage are printed per input: a few thousand numbers at most. */
    return cfg->d_out <= 64 && cfg->heads <= 8 && cfg->dropout_pass <= 8 &&
           (sentence == NULL || strlen(sentence) <= 160);
}

/* The same with cross-attention's source sentence (NULL: none). */
static inline bool
fuzz_small_pair(const struct attention_config *cfg, const char *sentence, const char *source)
{
    return fuzz_small(cfg, sentence) && (source == NULL || strlen(source) <= 160);
}

/*
 * Writes size bytes of data to a temporary file of this process named
 * "/tmp/attnscope-fuzz-TAG-PID.NAME" into path (size bytes of room);
 * returns path, or NULL when it cannot be written.
 */
static inline const char *
fuzz_write_file(char *path, size_t room, const char *tag, const char *name, const uint8_t *data,
                size_t size)
{
    FILE *f;

    snprintf(path, room, "/tmp/attnscope-fuzz-%s-%ld.%s", tag, (long)getpid(), name);
    f = fopen(path, "wb");
    if (f == NULL)
        return NULL;
    if (size > 0 && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

/* A stream that discards what is written to it. */
static inline FILE *
fuzz_sink(void)
{
    static FILE *sink;

    if (sink == NULL)
        sink = fopen("/dev/null", "w");
    return sink;
}

/* Whether a name reads as it is in messages (printable ASCII, short): they escape the rest. */
static inline int
fuzz_plain_name(const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] >= 0x7f)
            return 0;
    return n < 64;
}

#endif
