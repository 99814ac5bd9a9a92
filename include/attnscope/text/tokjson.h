/*
 * tokjson.h: the pipeline a Hugging Face tokenizer.json wraps around its BPE
 * model, interpreted from the file rather than written per model.
 *
 * Encoding a text goes, as Hugging Face's tokenizers library does:
 *   1. added tokens (special ones, "<|im_start|>") are found in the text
 *      first, longest first, and stand for their own ids (lstrip, rstrip
 *      and single_word honoured); the text between them goes on;
 *   2. normalizers: NFC, NFD, NFKC, NFKD (utf8proc), Replace (a string or
 *      a PCRE2 regex), Prepend, Sequence;
 *   3. pre-tokenizers, which cut the text into pieces: Split (a string or
 *      a regex through PCRE2 in UTF and UCP mode; Removed, Isolated,
 *      MergedWithPrevious, MergedWithNext, Contiguous; invert), matches
 *      found and folded as its Rust source does (empty matches
 *      included), ByteLevel (a
 *      prefix space, GPT-2's pattern when use_regex; the pieces' bytes
 *      spelled with GPT-2's byte characters), Digits, Sequence;
 *   4. the BPE model on each piece (bpe.h: merges by rank, ignore_merges,
 *      byte_fallback to <0xNN> tokens, an unknown token);
 *   5. post-processors: TemplateProcessing (ids before and after the
 *      text: a BOS), ByteLevel (no ids), Sequence.
 * What is not interpreted yet is refused by name when the file is loaded
 * (a Unigram or WordPiece model, a Metaspace pre-tokenizer, a Lowercase
 * normalizer ...), never skipped.
 */
#ifndef ATTNSCOPE_TOKJSON_H
#define ATTNSCOPE_TOKJSON_H

#include <jansson.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/text/bpe.h"

struct tokjson;

/*
 * Reads root's added_tokens, normalizer, pre_tokenizer and post_processor
 * for b (whose model, vocabulary and merges are read): *out is the
 * pipeline, for tokjson_destroy.  Errors name path and the part refused.
 */
enum attn_status tokjson_parse(struct bpe *b, json_t *root, const char *path,
                               struct tokjson **out, struct attn_error *err);
void tokjson_destroy(struct tokjson *t);

/* Whether t leaves the text as it is (bpe_spells_back). */
bool tokjson_keeps_text(const struct tokjson *t);
/* The id t's post-processor puts before every text (a BOS template's), or -1. */
int tokjson_first_id(const struct tokjson *t);

/*
 * The pieces t's pre-tokenizers cut text (len bytes, already normalized,
 * with no added token in it) into, each given to each() in order: what
 * the BPE model is then run on.  ATTN_ELIMIT naming the tokenizer.json
 * when a pattern's regex engine gives up on the text.
 */
enum attn_status tokjson_pieces(const struct tokjson *t, const char *text, size_t len,
                                void (*each)(void *ctx, const char *piece, size_t n), void *ctx,
                                struct attn_error *err);

/* Encodes as bpe_encode says (b->pipeline is t). */
enum attn_status tokjson_encode(const struct bpe *b, const struct tokjson *t, const char *text,
                                size_t len, int max_tokens, int **ids, int *count,
                                struct attn_error *err);

#endif
