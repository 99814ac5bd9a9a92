/*
 * cli_check.c: checks of the command line that need every option read:
 * where the text comes from, and --compare's companions (see cli.c, which
 * runs them with the rest in check_modes).
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "front/cli/cli.h"
#include "front/cli/cli_internal.h"

/*
 * Where the text comes from (-s, --sentence-file, --chat, --source, --qkv, a
 * lesson's steps): two at once, or one a mode ignores, is refused (options
 * that would be accepted and then ignored are refused instead).
 */
int
cli_check_texts(const struct cli_options *o, char *err, size_t err_size)
{
    if (o->walkthrough != NULL && o->sentence_file != NULL)
        return attn_fail_text(err, err_size,
                              "--walkthrough: each step gives its own inputs; drop --sentence-file");
    if (o->walkthrough != NULL && (o->embeddings || o->sentence_given || o->weights_dir || o->qkv_dir))
        return attn_fail_text(err, err_size,
                              "--walkthrough: each step gives its own inputs; drop %s",
                              o->embeddings    ? "--embeddings"
                              : o->sentence_given ? "--sentence"
                              : o->weights_dir ? "--weights"
                                               : "--qkv");
    if (o->sentence_file != NULL && o->sentence_given)
        return attn_fail_text(err, err_size, "--sentence and --sentence-file: choose one");
    if (o->chat != NULL && (o->sentence_given || o->sentence_file != NULL))
        return attn_fail_text(err, err_size, "--chat and --%s: choose one (--chat is the text)",
                              o->sentence_given ? "sentence" : "sentence-file");
    if (o->chat != NULL && o->model == NULL)
        return attn_fail_text(err, err_size,
                              "--chat is a trained model's (--model): the book's classes have no "
                              "chat template");
    if (o->chat != NULL && o->walkthrough != NULL)
        return attn_fail_text(err, err_size, "--walkthrough: each step gives its own inputs; "
                                             "drop --chat");
    if (o->source != NULL && o->source_file != NULL)
        return attn_fail_text(err, err_size, "--source and --source-file: choose one");
    if (o->source_embeddings != NULL && o->source == NULL && o->source_file == NULL)
        return attn_fail_text(err, err_size,
                              "--source-embeddings is the source sentence's vocabulary: give "
                              "--source or --source-file");
    if (o->walkthrough != NULL && (o->source != NULL || o->source_file != NULL))
        return attn_fail_text(err, err_size,
                              "--walkthrough: each step gives its own inputs; drop %s",
                              o->source != NULL ? "--source" : "--source-file");
    if (o->qkv_dir != NULL && (o->source != NULL || o->source_file != NULL))
        return attn_fail_text(err, err_size,
                              "--qkv gives Q, K and V directly, from no sentence: drop %s",
                              o->source != NULL ? "--source" : "--source-file");
    return 0;
}

/* --compare's companions (--side, --compare-arith) and what it works with. */
int
cli_check_compare(const struct cli_options *o, char *err, size_t err_size)
{
    if (o->side >= 0 && o->compare == NULL)
        return attn_fail_text(err, err_size, "--side chooses one of two models' numbers: give "
                                             "--compare too");
    if (o->side >= 0 && o->mode == CLI_EXPORT)
        return attn_fail_text(err, err_size, "--side: --export writes all three (DIR, "
                                             "DIR/compare, DIR/difference); drop --side");
    if (o->compare != NULL && o->model == NULL)
        return attn_fail_text(err, err_size, "--compare is a second trained model beside the "
                                             "first: give --model too");
    if (o->compare_arith >= 0 && o->compare == NULL)
        return attn_fail_text(err, err_size, "--compare-arith is the second model's arithmetic: "
                                             "give --compare too");
    if (o->compare != NULL && o->walkthrough != NULL)
        return attn_fail_text(err, err_size, "--walkthrough: each step names its models; drop "
                                             "--compare");
    return 0;
}
