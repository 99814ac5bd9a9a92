/*
 * bpe_gguf.c: the tokenizer a GGUF file carries (tokenizer.ggml.*), read
 * as the tokenizer.json it was made from: its tokens (ids in order), its
 * merges, its control and user-defined tokens as added tokens, the
 * pre-tokenizer its tokenizer.ggml.pre names (each name's pattern, and
 * normalizer, as the model's own tokenizer.json has them, so that the ids
 * are the reference tokenizer's: Qwen's NFC, which the GGUF does not
 * record and llama.cpp does not apply, included), and a BOS when
 * add_bos_token says so.  Then the one
 * tokenizer.json reader (bpe_load_tokenizer_root) reads it.
 */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/formats/gguf.h"
#include "attnscope/text/bpe.h"
#include "bpe_internal.h"

/* GPT-2's pattern, and the two of Llama 3 and Qwen2 (their tokenizer.json's Split). */
#define LLAMA3_PATTERN                                                                          \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+" \
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define QWEN2_PATTERN                                                                           \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"    \
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/*
 * Qwen3.5's: Qwen2's with a letter's combining marks (\p{M}) kept in its
 * word (its tokenizer.json's regex, as llama.cpp's llama-vocab.cpp quotes
 * it for the pre name "qwen35").
 */
#define QWEN35_PATTERN                                                                          \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?"           \
    "[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* The pre-tokenizers attnscope knows by tokenizer.ggml.pre's names. */
static const struct {
    const char *name;
    const char *pattern; /* a Split of this, then ByteLevel without its own; NULL: ByteLevel's */
    bool digits;         /* each digit apart first (SmolLM's Digits) */
    bool ignore_merges;  /* a piece that is a token is that token (Llama 3's BPE) */
    bool nfc;            /* the text in Unicode's composed form first (Qwen's normalizer) */
} pres[] = {
    { "gpt-2", NULL, false, false, false },
    { "olmo", NULL, false, false, false },
    { "smollm", NULL, true, false, false },
    { "llama-bpe", LLAMA3_PATTERN, false, true, false },
    { "llama3", LLAMA3_PATTERN, false, true, false },
    { "qwen2", QWEN2_PATTERN, false, false, true },
    /* (NFC as Qwen2's and Qwen3's tokenizer.json have it) */
    { "qwen35", QWEN35_PATTERN, false, false, true },
};

/* The tokenizer.json's pre_tokenizer for pres[k]. */
static json_t *
pre_tokenizer(size_t k)
{
    json_t *steps = json_array();

    if (pres[k].digits)
        json_array_append_new(steps, json_pack("{s:s, s:b}", "type", "Digits", "individual_digits", 1));
    if (pres[k].pattern != NULL)
        json_array_append_new(steps, json_pack("{s:s, s:{s:s}, s:s, s:b}", "type", "Split", "pattern",
                                               "Regex", pres[k].pattern, "behavior", "Isolated",
                                               "invert", 0));
    json_array_append_new(steps, json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel",
                                           "add_prefix_space", 0, "trim_offsets", 1, "use_regex",
                                           pres[k].pattern == NULL));
    return json_pack("{s:s, s:o}", "type", "Sequence", "pretokenizers", steps);
}

/* A TemplateProcessing that puts token bos (spelled text) first. */
static json_t *
bos_first(int bos, const char *text)
{
    return json_pack("{s:s, s:[{s:{s:s, s:i}}, {s:{s:s, s:i}}], s:{s:{s:s, s:[i], s:[s]}}}",
                     "type", "TemplateProcessing", "single", "SpecialToken", "id", text, "type_id",
                     0, "Sequence", "id", "A", "type_id", 0, "special_tokens", text, "id", text,
                     "ids", bos, "tokens", text);
}

/* Its control (3) and user-defined (4) tokens as tokenizer.json's added ones: matched whole. */
static json_t *
added_of(const struct gguf_kv *tokens, const struct gguf_kv *types)
{
    json_t *added = json_array();

    for (size_t i = 0; types != NULL && i < tokens->count; i++)
        if ((types->ints[i] == 3 || types->ints[i] == 4) && tokens->lens[i] > 0)
            json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id",
                                                   (int)i, "content", tokens->strs[i], "special",
                                                   types->ints[i] == 3, "single_word", 0, "lstrip",
                                                   0, "rstrip", 0, "normalized", 0));
    return added;
}

/* A merge a SentencePiece vocabulary implies: its pieces' ids, the score of what they make. */
struct spm_merge {
    int a, b;
    float score;
    int made;
};

static int
by_score(const void *x, const void *y)
{
    const struct spm_merge *p = x, *q = y;

    if (p->score != q->score)
        return p->score > q->score ? -1 : 1; /* the highest score first */
    if (p->made != q->made)
        return p->made < q->made ? -1 : 1;
    return p->a - q->a;
}

/*
 * A trie of the tokens, read forwards or backwards: node 0 the empty
 * string, each edge (node, byte) in a map, each node the token it spells
 * (or -1).  Its nodes are at most the tokens' bytes: what it holds is
 * linear in the file.
 */
struct spm_trie {
    struct bpe_idmap *edges;
    int *token; /* (nodes) */
    size_t nodes, cap;
};

static int
trie_add(struct spm_trie *t, const char *s, size_t n, bool backwards, int id)
{
    size_t node = 0;

    for (size_t k = 0; k < n; k++) {
        const unsigned char c = (unsigned char)s[backwards ? n - 1 - k : k];
        uint64_t next;
        if (!bpe_idmap_get(t->edges, (uint64_t)node << 8 | c, &next)) {
            if (t->nodes == t->cap) {
                int *more = realloc(t->token, (t->cap = 2 * t->cap + 1024) * sizeof *more);
                if (more == NULL)
                    return -1;
                t->token = more;
            }
            next = t->nodes++;
            t->token[next] = -1;
            if (bpe_idmap_put(t->edges, (uint64_t)node << 8 | c, next) < 0)
                return -1;
        }
        node = (size_t)next;
    }
    t->token[node] = id;
    return 0;
}

static int
trie_make(struct spm_trie *t, const struct gguf_kv *tokens, size_t bytes, bool backwards)
{
    memset(t, 0, sizeof *t);
    if ((t->edges = bpe_idmap_create(bytes)) == NULL || (t->token = malloc(sizeof *t->token)) == NULL)
        return -1;
    t->cap = t->nodes = 1;
    t->token[0] = -1;
    for (size_t i = 0; i < tokens->count; i++)
        if (trie_add(t, tokens->strs[i], tokens->lens[i], backwards, (int)i) < 0)
            return -1;
    return 0;
}

static void
trie_destroy(struct spm_trie *t)
{
    bpe_idmap_destroy(t->edges);
    free(t->token);
}

/*
 * The tokens each prefix of s (n bytes) spells, into at[1 .. n] (-1: none),
 * read along t; backwards: each suffix, at[k] the last k bytes'.
 */
static void
trie_walk(const struct spm_trie *t, const char *s, size_t n, bool backwards, int *at)
{
    uint64_t node = 0;
    size_t k = 0;

    for (; k < n; k++) {
        const unsigned char c = (unsigned char)s[backwards ? n - 1 - k : k];
        if (!bpe_idmap_get(t->edges, node << 8 | c, &node))
            break;
        at[k + 1] = t->token[node];
    }
    for (k++; k <= n; k++)
        at[k] = -1;
}

/*
 * SentencePiece's BPE as merges: every split of a normal piece into two
 * pieces of the vocabulary, ranked by the piece's score (highest first).
 * Merging the best-scored adjacent pair until none is a piece, as
 * SentencePiece and llama.cpp's tokenizer do, is applying these merges
 * lowest rank first (only the pieces' pair order differs, and one piece's
 * splits never meet: whichever half formed first decides).  The splits
 * are found by walking each piece through a trie of the pieces and one of
 * the pieces backwards, and kept as ids: time and memory linear in the
 * file (made as text, a file of 2,400 prefixes of one long piece took 1.2
 * GiB).  *list gets 3 ids a merge (bpe_lists.merge_ids), *count merges.
 */
static enum attn_status
spm_merges(const struct gguf_kv *tokens, const struct gguf_kv *scores,
           const struct gguf_kv *types, int **triples, size_t *count, const char *path,
           struct attn_error *err)
{
    struct spm_trie ahead, behind;
    struct spm_merge *list = NULL;
    size_t cap = 0, bytes = 0, longest = 0;
    int *pre = NULL, *suf = NULL;
    enum attn_status rc = ATTN_ENOMEM;

    *triples = NULL;
    *count = 0;
    for (size_t t = 0; t < tokens->count; t++) {
        bytes += tokens->lens[t];
        longest = tokens->lens[t] > longest ? tokens->lens[t] : longest;
    }
    if (trie_make(&ahead, tokens, bytes, false) < 0 || trie_make(&behind, tokens, bytes, true) < 0 ||
        (pre = malloc((longest + 1) * sizeof *pre)) == NULL ||
        (suf = malloc((longest + 1) * sizeof *suf)) == NULL)
        goto done;
    for (size_t t = 0; t < tokens->count; t++) {
        const char *s = tokens->strs[t];
        const size_t n = tokens->lens[t];
        if (types != NULL && types->ints[t] != 1)
            continue; /* (normal pieces only: bytes, control and unknown are never merged into) */
        trie_walk(&ahead, s, n, false, pre);
        trie_walk(&behind, s, n, true, suf);
        for (size_t cut = 1; cut < n; cut++) {
            if ((s[cut] & 0xc0) == 0x80 || pre[cut] < 0 || suf[n - cut] < 0)
                continue; /* (a cut inside a character, or a half that is no piece) */
            if (*count == cap) {
                struct spm_merge *bigger = realloc(list, (cap = cap ? 2 * cap : 4096) * sizeof *list);
                if (bigger == NULL)
                    goto done;
                list = bigger;
            }
            list[(*count)++] = (struct spm_merge){ pre[cut], suf[n - cut],
                                                   (float)scores->floats[t], (int)t };
        }
    }
    if (*count > 0) {
        qsort(list, *count, sizeof *list, by_score);
        if ((*triples = malloc(3 * *count * sizeof **triples)) == NULL)
            goto done;
        for (size_t i = 0; i < *count; i++) {
            (*triples)[3 * i] = list[i].a;
            (*triples)[3 * i + 1] = list[i].b;
            (*triples)[3 * i + 2] = list[i].made;
        }
    }
    rc = ATTN_OK;
done:
    if (rc != ATTN_OK)
        attn_fail(err, rc, "%s: out of memory for the merges", path);
    trie_destroy(&ahead);
    trie_destroy(&behind);
    free(pre);
    free(suf);
    free(list);
    return rc;
}

/*
 * tokenizer.ggml.model "llama": SentencePiece's BPE (Llama 2, TinyLlama,
 * Mistral, Gemma) read as the tokenizer.json Hugging Face converts it to: a
 * space as U+2581 and one before the text (add_space_prefix), the pieces and
 * the merges their scores imply, byte fallback to the <0xNN> pieces.
 */
static enum attn_status
load_spm(struct bpe *b, const struct gguf *g, const struct gguf_kv *tokens,
         const struct gguf_kv *types, struct attn_error *err)
{
    const struct gguf_kv *scores = gguf_find(g, "tokenizer.ggml.scores");
    json_t *root, *steps;
    int64_t prefix = 1, bos = -1, add_bos = 1, unk = -1;
    int *merges;
    size_t merge_count;
    enum attn_status rc;

    if (scores == NULL || scores->floats == NULL || scores->count != tokens->count)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a SentencePiece tokenizer without a score for each of its %zu pieces",
                         g->path, tokens->count);
    if (spm_merges(tokens, scores, types, &merges, &merge_count, g->path, err) != ATTN_OK)
        return err->status;
    root = json_object();
    (void)gguf_int(g, "tokenizer.ggml.add_space_prefix", &prefix);
    (void)gguf_int(g, "tokenizer.ggml.add_bos_token", &add_bos);
    steps = json_array();
    if (prefix)
        json_array_append_new(steps, json_pack("{s:s, s:s}", "type", "Prepend", "prepend", "\xe2\x96\x81"));
    json_array_append_new(steps, json_pack("{s:s, s:{s:s}, s:s}", "type", "Replace", "pattern",
                                           "String", " ", "content", "\xe2\x96\x81"));
    json_object_set_new(root, "added_tokens", added_of(tokens, types));
    json_object_set_new(root, "normalizer", json_pack("{s:s, s:o}", "type", "Sequence", "normalizers", steps));
    json_object_set_new(root, "pre_tokenizer", json_null());
    if (add_bos && gguf_int(g, "tokenizer.ggml.bos_token_id", &bos) && bos >= 0 &&
        (size_t)bos < tokens->count)
        json_object_set_new(root, "post_processor", bos_first((int)bos, tokens->strs[bos]));
    if (!gguf_int(g, "tokenizer.ggml.unknown_token_id", &unk) || unk < 0 ||
        (size_t)unk >= tokens->count)
        unk = -1;
    /* (the vocabulary and merges given as lists, not made JSON) */
    json_object_set_new(root, "model",
                        json_pack("{s:s, s:b, s:b, s:b, s:s?}", "type", "BPE", "ignore_merges", 0,
                                  "byte_fallback", 1, "fuse_unk", 1, "unk_token",
                                  unk >= 0 ? tokens->strs[unk] : NULL));
    {
        const struct bpe_lists lists = { tokens->strs, tokens->count, NULL, merge_count, merges };
        rc = bpe_load_tokenizer_lists(b, root, &lists, g->path, err);
    }
    json_decref(root);
    free(merges);
    return rc;
}

enum attn_status
bpe_load_gguf(struct bpe *b, const struct gguf *g, struct attn_error *err)
{
    const char *model = gguf_string(g, "tokenizer.ggml.model");
    const char *pre = gguf_string(g, "tokenizer.ggml.pre");
    const struct gguf_kv *tokens = gguf_find(g, "tokenizer.ggml.tokens");
    const struct gguf_kv *merges = gguf_find(g, "tokenizer.ggml.merges");
    const struct gguf_kv *types = gguf_find(g, "tokenizer.ggml.token_type");
    json_t *root, *added;
    size_t k;
    int64_t bos = -1, add_bos = 0;
    enum attn_status rc;

    memset(b, 0, sizeof *b);
    if (model == NULL || tokens == NULL || tokens->item != GGUF_STRING)
        return attn_fail(err, ATTN_EPARSE, "%s: no tokenizer in its metadata (tokenizer.ggml.model "
                                           "and tokens)",
                         g->path);
    if (types != NULL && (types->ints == NULL || types->count != tokens->count))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tokenizer.ggml.token_type does not give each of the %zu tokens a type",
                         g->path, tokens->count);
    if (strcmp(model, "llama") == 0)
        return load_spm(b, g, tokens, types, err);
    if (strcmp(model, "gpt2") != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tokenizer.ggml.model '%s' is not read yet (attnscope reads 'gpt2', "
                         "byte-level BPE, and 'llama', SentencePiece's BPE)",
                         g->path, model);
    for (k = 0; k < sizeof pres / sizeof pres[0]; k++)
        if (pre != NULL && strcmp(pre, pres[k].name) == 0)
            break;
    if (k == sizeof pres / sizeof pres[0]) {
        /* (the names from the table; the file's own escaped: it may hold anything) */
        char known[256] = "", shown[96];
        for (size_t i = 0; i < sizeof pres / sizeof pres[0]; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                     pres[i].name);
        attn_escape_text(shown, sizeof shown, pre != NULL ? pre : "(missing)");
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tokenizer.ggml.pre '%s' is not one attnscope knows (%s)", g->path,
                         shown, known);
    }
    if (merges == NULL || merges->item != GGUF_STRING)
        return attn_fail(err, ATTN_EPARSE, "%s: no tokenizer.ggml.merges", g->path);
    root = json_object();
    added = added_of(tokens, types);
    json_object_set_new(root, "added_tokens", added);
    json_object_set_new(root, "normalizer",
                        pres[k].nfc ? json_pack("{s:s}", "type", "NFC") : json_null());
    json_object_set_new(root, "pre_tokenizer", pre_tokenizer(k));
    if (gguf_int(g, "tokenizer.ggml.add_bos_token", &add_bos) && add_bos &&
        gguf_int(g, "tokenizer.ggml.bos_token_id", &bos) && bos >= 0 &&
        (size_t)bos < tokens->count)
        json_object_set_new(root, "post_processor", bos_first((int)bos, tokens->strs[bos]));
    /* (the vocabulary and merges read from the file's arrays themselves, not made JSON) */
    json_object_set_new(root, "model",
                        json_pack("{s:s, s:b, s:b}", "type", "BPE", "ignore_merges",
                                  pres[k].ignore_merges, "byte_fallback", 0));
    {
        const struct bpe_lists lists = { tokens->strs, tokens->count, merges->strs, merges->count,
                                         NULL };
        rc = bpe_load_tokenizer_lists(b, root, &lists, g->path, err);
    }
    json_decref(root);
    return rc;
}
