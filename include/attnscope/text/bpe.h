/*
 * bpe.h: BPE tokenizers: GPT-2's byte-level one (and every byte-level
 * tokenizer.json: Llama 3's, Qwen's), and the character-level merges with
 * byte fallback that SentencePiece models ship as tokenizer.json (Gemma's,
 * Llama 2's: byte_level false, <0xNN> tokens for what no token spells).
 *
 * GPT-2's own: text is split by GPT-2's pre-tokenizer pattern (PCRE2, in UTF and UCP
 * mode, so \p{L} and \s are Unicode's), each piece's bytes are spelled with
 * GPT-2's byte-to-character table (the printable bytes stand for
 * themselves, the others for U+0100 onwards: a space is 'Ġ'), and the
 * merges are applied lowest rank first.  The vocabulary is vocab.json or
 * encoder.json (a token -> id object), the merges merges.txt or vocab.bpe
 * (a "#version" line, then "a b" per line).
 */
#ifndef ATTNSCOPE_BPE_H
#define ATTNSCOPE_BPE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

/* GPT-2's pre-tokenizer pattern, as its encoder.py writes it. */
#define BPE_GPT2_PATTERN \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

struct bpe_table; /* a string -> number hash table (bpe_table.c) */
struct bpe_idmap; /* a number -> number hash table (bpe_table.c) */
struct tokjson;   /* a tokenizer.json's pipeline around the model (tokjson.h) */

struct bpe {
    int vocab_size;
    char **token;              /* (vocab_size) each id's token, as the vocabulary spells it */
    struct bpe_table *ids;     /* token -> id */
    /*
     * The merges, by their tokens' ids (bpe_merge_key): each one's rank,
     * from 0, in the high half, the token it makes in the low one.
     */
    struct bpe_idmap *ranks;
    int merges;
    size_t longest;            /* the most bytes a token stands for */
    char **raw;                /* (vocab_size) the bytes each token stands for, or NULL */
    int *raw_len;              /* (vocab_size) how many; -1 when its spelling is not bytes */
    void *re;                  /* the compiled pattern (pcre2_code) */
    char byte_char[256][3];    /* each byte's character, UTF-8, NUL-terminated */
    short char_byte[324];      /* and back: the byte of code points 0 to 323, or -1 */
    /*
     * A tokenizer.json's: its pipeline (NULL: GPT-2's pattern and nothing
     * else, as vocab.json + merges.txt have it), and its model's options.
     */
    struct tokjson *pipeline;
    bool byte_level;           /* symbols are GPT-2's byte characters (else UTF-8 characters) */
    bool ignore_merges;        /* a piece that is a token is that token, unmerged */
    bool byte_fallback;        /* a character with no token is its bytes' <0xNN> tokens */
    bool fuse_unk;             /* consecutive unknown characters are one unknown token */
    int unk;                   /* the unknown token's id, or -1 */
    int byte_token[256];       /* the <0xNN> tokens (byte fallback), or -1 */
    unsigned char *added;      /* (vocab_size) 1 for an added token: its bytes are its text */
};

/* Loads the vocabulary and the merges; errors name the file (and line). */
enum attn_status bpe_load(struct bpe *b, const char *vocab_path, const char *merges_path,
                          struct attn_error *err);
/*
 * Loads Hugging Face's tokenizer.json instead: model.vocab and model.merges,
 * whose merges are "a b" strings in older files and ["a", "b"] pairs in
 * newer ones (both are read; none at all is refused).
 */
enum attn_status bpe_load_tokenizer_json(struct bpe *b, const char *path, struct attn_error *err);
/*
 * Loads the tokenizer a GGUF file carries (tokenizer.ggml.model "gpt2":
 * byte-level BPE; its tokens, merges, token types, the pre-tokenizer
 * tokenizer.ggml.pre names, add_bos_token), read as the tokenizer.json it
 * was converted from; another model or an unknown pre-tokenizer is refused
 * by name.
 */
struct gguf;
enum attn_status bpe_load_gguf(struct bpe *b, const struct gguf *g, struct attn_error *err);
void bpe_destroy(struct bpe *b);

/*
 * For the tokenizer.json interpreter (tokjson.c): the model's ids of one
 * piece the pre-tokenizers cut (n bytes of text) appended to *ids (*count
 * of *cap used, grown as needed); and an added token given its id (the
 * vocabulary grown to hold it; ids between are "<unused N>").
 */
enum attn_status bpe_encode_piece(const struct bpe *b, const char *piece, size_t n, int **ids,
                                  int *count, size_t *cap, struct attn_error *err);
enum attn_status bpe_add_token(struct bpe *b, const char *text, int id, struct attn_error *err);
/*
 * Whether the ids of any UTF-8 text spell it back byte for byte: GPT-2's
 * files, or a tokenizer.json that changes no text (no normalizer, no
 * pre-tokenizer that removes what it matches, no ids added around the
 * text) and never falls back on an unknown token.
 */
bool bpe_spells_back(const struct bpe *b);
/* Appends id to *ids (*count of *cap used), growing it. */
enum attn_status bpe_append_id(int **ids, int *count, size_t *cap, int id, struct attn_error *err);

/*
 * The ids of len bytes of UTF-8 text, in *ids (malloc'd, the caller
 * frees) and *count.  Bytes that are not UTF-8 are refused with their
 * position.  With max_tokens > 0 the encoding stops as soon as the text is
 * known to need more (ATTN_ELIMIT, "more than N tokens"): a megabyte of
 * text is not encoded whole to be told it is too long.  The work is
 * O(n log n) in a piece's length whatever the text.
 */
enum attn_status bpe_encode(const struct bpe *b, const char *text, size_t len, int max_tokens,
                            int **ids, int *count, struct attn_error *err);

/*
 * How token id is made, into buf: its bytes, GPT-2's characters for them,
 * and the merges that join those characters, in the order the merges'
 * ranks apply them ("bytes 20 63 61 74; as characters Ġ c a t; merged by
 * rank: Ġ+c (9) a+t (4) Ġc+at (11) -> Ġcat (id 267)"); of a special
 * token (an added one, or one its bytes do not merge into), that it is
 * matched whole and never merged.  Returns its length, or -1 for an
 * unknown id.
 */
int bpe_token_story(const struct bpe *b, int id, char *buf, size_t size);

/* The bytes token id stands for (its text), NUL-terminated in buf; returns their count or -1. */
int bpe_token_bytes(const struct bpe *b, int id, char *buf, size_t size);

/*
 * The bytes token id stands for, however many (*len of them, not
 * NUL-terminated), or NULL for an unknown id or a spelling that is not
 * bytes.  The tokenizer's own: valid while it is loaded.
 */
const char *bpe_token_raw(const struct bpe *b, int id, int *len);

#endif
