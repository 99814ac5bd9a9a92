/*
 * model.h: a trained model as users have it: a folder (or a name in the
 * Hugging Face cache) holding GPT-2's weights, config and tokenizer, or a
 * weights file alone (the model.pth a reader of the book saved).
 *
 * model_open() finds the folder or file, reads the weights in any format
 * tensors.h reads and their sizes (its architecture's), and the tokenizer in whichever
 * of its three forms the folder has (bpe.h): vocab.json + merges.txt
 * (Hugging Face), encoder.json + vocab.bpe (OpenAI's files, as the book's
 * chapter 5 downloads them) or tokenizer.json.  A folder without one (a
 * bare model.pth) borrows GPT-2's, the first found of: a gpt2/SIZE/ folder
 * beside it (where chapter 5 downloads), tiktoken's cache, the Hugging
 * Face cache's gpt2, the copy installed with attnscope; m->about says
 * which.  Nothing is half-loaded: on failure the model is empty and the
 * error names the file and the fault.
 */
#ifndef ATTNSCOPE_MODEL_H
#define ATTNSCOPE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/locate/locate.h"
#include "attnscope/text/bpe.h"

/* Classes a classifier's names are kept for (more are "class N"). */
#define MODEL_CLASSES_MAX 64

/* What the command line adds to a model's files. */
struct model_options {
    int heads;           /* --heads N: the head count where no file gives it (0: none) */
    const char *classes; /* --classes a,b,...: a classifier's class names (NULL: class 0, ...) */
    bool verify;         /* --verify: an Ollama blob hashed against its sha256-HEX name first */
    /*
     * The option that asked for the int8 arithmetic ("--arith int8",
     * "--compare-arith int8"; decoder_use_int8), or NULL: the exact one.
     */
    const char *int8;
};


struct model {
    char dir[MODEL_PATH_MAX];     /* the folder read (a weights file's own folder) */
    char weights[MODEL_PATH_MAX]; /* the weights file named, or "": the folder's */
    char name[256];           /* its short name: the repository's ("gpt2") or the folder's */
    char tokenizer[MODEL_PATH_MAX]; /* the tokenizer's vocabulary file read */
    char note[512];           /* what the user should know of where it was found, or "" */
    char about[1024];         /* where the weights, the sizes and the tokenizer came from */
    char borrowed[768];       /* what of that was not the model's own files (a tokenizer
                                 borrowed, the heads from --heads or GPT-2's sizes), or "" */
    char class_names[MODEL_CLASSES_MAX][48]; /* a classifier's (decoder cfg.n_classes) */
    char **expert_labels;     /* (dec.cfg.moe.n_experts) "e0", "e1" ...: a router's columns, or NULL */
    /*
     * What the folder's attnscope.json says of the model, or "": the text
     * to open on when none is given (example, with <|endoftext|> first when
     * example_bos), and what the model knows (about).
     */
    char example[512];
    bool example_bos;
    char knows[256];
    struct decoder_model dec; /* the decoder its files describe (architecture.h reads it) */
    struct bpe bpe;
    /*
     * The token --bos puts first: the config's bos_token_id (<|begin_of_text|>,
     * <bos>), else <|endoftext|> (GPT-2's and the book's), or -1 when the
     * vocabulary has neither.
     */
    int first_token;
    struct model_params params; /* Ollama's params layer (model_place's), from empty */
    /*
     * Its chat template, or NULL: chat_template.jinja, tokenizer_config.json's
     * chat_template, a GGUF's tokenizer.chat_template, Ollama's template
     * layer (chat_from names which); chat_bos the bos_token text it puts first.
     */
    char *chat_template;
    char chat_from[160];
    char chat_wrong[200]; /* a template there but not one ("tokenizer_config.json's chat_template
                             is a number"), said by --chat; else "" */
    char chat_bos[64];
    char chat_used[256]; /* what --chat wrapped the text in ("chat: the message in ..."), or "" */
    char *chat_text;     /* --chat's text in the template, the run's sentence, or NULL */
};

/*
 * text as one user message in m's chat template (chat.h) with the
 * generation prompt, its bos_token left to the tokenizer when the tokenizer
 * puts it first itself; *kind the template's family.  A string the caller
 * frees; NULL with err set when m has no template or one of no family
 * attnscope knows.  date: what Llama 3.1's system block names.
 */
char *model_chat(const struct model *m, const char *text, const char *date, const char **kind,
                 struct attn_error *err);

/*
 * The folder what names: what itself when it is a folder; the file's own
 * folder when it is a weights file (or a TensorFlow checkpoint's prefix,
 * gpt2/124M/model.ckpt), the file then read as the weights; a model that
 * ships with attnscope ("induction": $ATTNSCOPE_MODELS, the installed
 * samples/models, or beside the program), otherwise a model of the Hugging
 * Face cache ("gpt2", "openai-community/gpt2"): under
 * $HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub or
 * ~/.cache/huggingface/hub, models--ORG--NAME/snapshots/REVISION (the
 * revision refs/main names, or the newest with a config.json).  A bare
 * name is also looked for under openai-community and distilbert, where
 * GPT-2's repositories now live.  A repository whose snapshots are
 * incomplete (links to blobs that are missing) is reported as such, and a
 * name found nowhere names the cache folders looked in.
 */

enum attn_status model_locate(const char *what, struct model_place *where,
                              struct attn_error *err);
/*
 * The models that ship with attnscope, by folder name, as --model finds
 * them (the first of its places that has any): "chapter5, minigemma, ...
 * and minimoe" into buf; returns how many.
 */
int model_shipped_names(char *buf, size_t size);

/* Opens the model what names (model_locate), with o's additions (NULL: none). */

enum attn_status model_open(struct model *m, const char *what, const struct model_options *o,
                            struct attn_error *err);
void model_close(struct model *m);

/*
 * How token id reads on screen and in labels: its text, with every space
 * shown as '·' (U+00B7: GPT-2's words carry their leading space) and a newline, tab or other control byte as its
 * escape ("\n", "\t", "\x01"); bytes that are not whole UTF-8 characters
 * (a piece of an emoji) as "\xHH".  Cut at a whole character when buf is
 * too small (MODEL_TOKEN_DISPLAY_MAX(n) bytes hold a token of n bytes).
 * Returns buf.
 */
#define MODEL_TOKEN_DISPLAY_MAX(n) (4 * (size_t)(n) + 16)
char *model_token_display(const struct model *m, int id, char *buf, size_t size);
/*
 * The id of the token spelled text in m's vocabulary, as the vocabulary
 * spells it ("<|im_end|>", "Ġthe") or by its bytes (" the"); -1 when none.
 */
int model_token_find(const struct model *m, const char *text);

/*
 * What output id of the model's head reads as: the token (as
 * model_token_display), or a classifier's class name.  Returns buf.
 */
char *model_output_display(const struct model *m, int id, char *buf, size_t size);

/* Whether the model's head scores classes (chapter 6's classifier) rather than next tokens. */
bool model_is_classifier(const struct model *m);

/* Whether its tokenizer came from inside its GGUF weights (not a tokenizer file beside them). */
bool model_tokenizer_inside(const struct model *m);

#endif
