/*
 * check_chat.c: one user message in a model's chat template, against the
 * templates themselves rendered as Hugging Face's apply_chat_template
 * renders them (tests/fixtures/chat/cases.txt, made by
 * tests/oracle/chat_fixtures.py with Jinja2 from the real templates:
 * Qwen3, Qwen2.5, Llama 3, Llama 3.2, Gemma 3, Gemma 2, Phi-3.5, Mistral
 * Nemo).  Then the families each is recognised as, the templates refused
 * by name, and the rendered Qwen3 turn tokenized by Qwen3's own
 * tokenizer: its markers one special token each.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/fileio.h"
#include "attnscope/text/bpe.h"
#include "attnscope/text/chat.h"
#include "testutil.h"

/* The text of tests/fixtures/chat/NAME (the caller frees it). */
static char *
template_text(const char *name)
{
    char path[512];
    char *text = NULL;
    size_t len = 0;
    struct attn_error err;

    snprintf(path, sizeof path, "tests/fixtures/chat/%s", name);
    ck_assert_msg(fileio_read_all(test_path(path), 1 << 20, &text, &len, &err) == ATTN_OK, "%s",
                  err.msg);
    return text;
}

/* The JSON string after the line's key ("text \"...\""), decoded (the caller frees it). */
static char *
field(const char *line, const char *key)
{
    const size_t k = strlen(key);
    json_error_t je;
    json_t *v;
    char *s;

    ck_assert_msg(strncmp(line, key, k) == 0 && line[k] == ' ', "want %s: %s", key, line);
    v = json_loads(line + k + 1, JSON_DECODE_ANY, &je);
    ck_assert_msg(json_is_string(v), "%s: %s", key, je.text);
    s = strdup(json_string_value(v));
    json_decref(v);
    return s;
}

START_TEST(every_template_renders_as_jinja_does)
{
    FILE *f = fopen(test_path("tests/fixtures/chat/cases.txt"), "r");
    char line[8192];
    int cases = 0;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL) {
        char *name, *bos, *user, *want, *tmpl, *got;
        struct chat_template t;
        struct attn_error err;
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = '\0';
        name = field(line, "case");
        ck_assert(fgets(line, sizeof line, f) != NULL);
        line[strcspn(line, "\n")] = '\0';
        bos = field(line, "bos");
        ck_assert(fgets(line, sizeof line, f) != NULL);
        line[strcspn(line, "\n")] = '\0';
        user = field(line, "user");
        ck_assert(fgets(line, sizeof line, f) != NULL);
        line[strcspn(line, "\n")] = '\0';
        want = field(line, "text");
        tmpl = template_text(name);
        ck_assert_msg(chat_detect(tmpl, name, &t, &err) == 0, "%s", err.msg);
        got = chat_render(&t, bos, "26 Jul 2024", user);
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, want) == 0, "%s (%s) on '%s':\n got '%s'\nwant '%s'", name,
                      t.name, user, got, want);
        free(got);
        free(tmpl);
        free(name);
        free(bos);
        free(user);
        free(want);
        cases++;
    }
    fclose(f);
    ck_assert_int_eq(cases, 40); /* (8 templates, 5 messages each) */
}
END_TEST

/* Each template's family, and what it takes from the text. */
START_TEST(templates_are_recognised_by_their_markers)
{
    static const struct {
        const char *file, *name;
        bool bos, dated;
        const char *system;
    } cases[] = {
        { "qwen3.jinja", "ChatML", false, false, "" },
        { "Qwen-Qwen2.5-7B-Instruct.jinja", "ChatML", false, false,
          "You are Qwen, created by Alibaba Cloud. You are a helpful assistant." },
        { "llama3.jinja", "Llama 3", true, false, "" },
        { "meta-llama-Llama-3.2-3B-Instruct.jinja", "Llama 3", true, true, "" },
        { "gemma3.jinja", "Gemma", true, false, "" },
        { "microsoft-Phi-3.5-mini-instruct.jinja", "Phi-3", false, false, "" },
        { "mistralai-Mistral-Nemo-Instruct-2407.jinja", "Mistral", true, false, "" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *tmpl = template_text(cases[i].file);
        struct chat_template t;
        struct attn_error err;
        ck_assert_msg(chat_detect(tmpl, cases[i].file, &t, &err) == 0, "%s", err.msg);
        ck_assert_str_eq(t.name, cases[i].name);
        ck_assert_int_eq(t.bos, cases[i].bos);
        ck_assert_int_eq(t.dated, cases[i].dated);
        ck_assert_str_eq(t.system, cases[i].system);
        free(tmpl);
    }
}
END_TEST

/* Templates of other families, and of none, are refused by name (never guessed at). */
START_TEST(unknown_templates_are_refused_by_name)
{
    char *tmpl = template_text("Mistral-Small-3.2-24B-Instruct-2506.jinja");
    struct chat_template t;
    struct attn_error err;

    ck_assert_int_eq(chat_detect(tmpl, "x/tokenizer_config.json's chat_template", &t, &err), -1);
    ck_assert_msg(strstr(err.msg, "x/tokenizer_config.json's chat_template: Mistral's v7 template "
                                  "([SYSTEM_PROMPT]") != NULL, "%s", err.msg);
    free(tmpl);
    ck_assert_int_eq(chat_detect("{% for m in messages %}### {{ m.role }}: {{ m.content }}\n"
                                 "{% endfor %}### assistant:", "model.gguf's "
                                 "tokenizer.chat_template", &t, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "model.gguf's tokenizer.chat_template: a chat template of no "
                                  "family attnscope knows (it knows ChatML") != NULL, "%s",
                  err.msg);
}
END_TEST

/* The rendered Qwen3 turn, tokenized by Qwen3's tokenizer: each marker one special token. */
START_TEST(the_markers_are_special_tokens)
{
    const char *tmp = test_tmpdir();
    char path[512], cmd[8800];
    struct bpe b;
    struct chat_template t;
    struct attn_error err;
    char *tmpl = template_text("qwen3.jinja");
    char *text;
    int *ids = NULL, n = 0;

    snprintf(path, sizeof path, "%s/qwen3.json", tmp);
    snprintf(cmd, sizeof cmd, "xz -dc '%s' > '%s'",
             test_path("tests/fixtures/tokenizers/qwen3.tokenizer.json.xz"), path);
    ck_assert_msg(system(cmd) == 0, "%s failed (xz-utils installed?)", cmd);
    ck_assert_msg(bpe_load_tokenizer_json(&b, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(chat_detect(tmpl, "qwen3", &t, &err), 0);
    text = chat_render(&t, "", "", "Hi");
    ck_assert_msg(bpe_encode(&b, text, strlen(text), 0, &ids, &n, &err) == ATTN_OK, "%s",
                  err.msg);
    /* <|im_start|> user \n Hi <|im_end|> \n <|im_start|> assistant \n (Qwen3's ids) */
    ck_assert_int_eq(n, 9);
    ck_assert_int_eq(ids[0], 151644);
    ck_assert_int_eq(ids[4], 151645);
    ck_assert_int_eq(ids[6], 151644);
    ck_assert_str_eq(b.token[ids[1]], "user");
    ck_assert_str_eq(b.token[ids[7]], "assistant");
    free(ids);
    free(text);
    free(tmpl);
    bpe_destroy(&b);
    test_remove_dir(tmp);
}
END_TEST

static Suite *
chat_suite(void)
{
    Suite *s = suite_create("chat");
    TCase *tc = tcase_create("templates");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_template_renders_as_jinja_does);
    tcase_add_test(tc, templates_are_recognised_by_their_markers);
    tcase_add_test(tc, unknown_templates_are_refused_by_name);
    tcase_add_test(tc, the_markers_are_special_tokens);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(chat_suite)
