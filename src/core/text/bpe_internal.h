/*
 * bpe_internal.h: what the tokenizer's files share (bpe.c encodes,
 * bpe_load.c reads the files, bpe_table.c keeps the tables): not part of
 * the core's interface.
 */
#ifndef ATTNSCOPE_BPE_INTERNAL_H
#define ATTNSCOPE_BPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "attnscope/text/bpe.h"

/* A string -> number table (a token's id, a merge's rank) of about expected keys; NULL. */
struct bpe_table *bpe_table_create(size_t expected);
void bpe_table_destroy(struct bpe_table *t);
/* key's (n bytes) value, or -1. */
int bpe_table_get(const struct bpe_table *t, const char *key, size_t n);
/*
 * key -> value, the value replaced when key was there already (1 then); -1
 * when out of memory.  (Python's dict and Rust's HashMap, which the
 * reference tokenizers build their tables with, keep the last value given.)
 */
/*
 * A number -> number map (a merge's pair of ids -> its rank and the token it
 * makes; a trie's node and byte -> the next node) of about expected keys
 * (any key but UINT64_MAX); NULL when out of memory.  put replaces a key's
 * value (1 then; -1 out of memory), as bpe_table_put does.
 */
struct bpe_idmap *bpe_idmap_create(size_t expected);
void bpe_idmap_destroy(struct bpe_idmap *m);
bool bpe_idmap_get(const struct bpe_idmap *m, uint64_t key, uint64_t *value);
int bpe_idmap_put(struct bpe_idmap *m, uint64_t key, uint64_t value);
/* A merge's key in bpe.ranks: its left token's id, then its right one's. */
static inline uint64_t
bpe_merge_key(int a, int c)
{
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)c;
}

/* bpe_load_tokenizer_json's reading of a tokenizer.json's tree (root borrowed; path for messages). */
enum attn_status bpe_load_tokenizer_root(struct bpe *b, json_t *root, const char *path,
                                         struct attn_error *err);
/*
 * The same with the model's vocabulary and merges given as lists instead
 * of as root's model.vocab and model.merges (a GGUF file's arrays: the
 * 150,000 tokens of a Qwen vocabulary made into JSON first cost a tenth of
 * a second): tokens[i] is id i's, each merge "a b".
 */
struct bpe_lists {
    char *const *tokens;
    size_t count;
    char *const *merges;
    size_t merge_count;
    /*
     * Or, merges NULL, merge_count triples of ids: a merge's left and right
     * tokens and the token they make (SentencePiece's, implied by its
     * pieces), in rank order.
     */
    const int *merge_ids;
};
enum attn_status bpe_load_tokenizer_lists(struct bpe *b, json_t *root, const struct bpe_lists *lists,
                                          const char *path, struct attn_error *err);

int bpe_table_put(struct bpe_table *t, const char *key, size_t n, int value);

/* The bytes GPT-2's characters in spelling stand for, into buf; their count, or -1. */
int bpe_spell_bytes(const struct bpe *b, const char *spelling, char *buf, size_t size);

#endif
