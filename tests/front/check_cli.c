/* check_cli.c: the command line (src/cli.c). */
#include "config.h"

#include <ctype.h>

#include <stdarg.h>

#include "attnscope/architectures/architecture.h"
#include "front/cli/cli.h"
#include "testutil.h"

static int
parse(struct cli_options *o, char *err, const char *first, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;
    const char *a;

    argv[argc++] = (char *)"attnscope";
    va_start(ap, first);
    for (a = first; a != NULL && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    err[0] = '\0';
    return cli_parse(argc, argv, o, err, 512);
}

START_TEST(defaults_are_the_books_mha)
{
    struct cli_options o;
    char err[512];

    ck_assert_int_eq(parse(&o, err, NULL), 0);
    ck_assert_int_eq(o.mode, CLI_TUI);
    ck_assert_int_eq(o.cfg.variant, ATTN_MHA);
    ck_assert_int_eq(o.cfg.d_out, 2);
    ck_assert_int_eq(o.cfg.heads, 2);
    ck_assert_uint_eq(o.cfg.seed, 123);
    ck_assert_int_eq(o.cfg.mask, ATTN_MASK_CAUSAL);
    ck_assert(o.cfg.scale);
    ck_assert(o.cfg.train);
    ck_assert_str_eq(o.sentence, "Your journey starts with one step");
    ck_assert_ptr_null(o.embeddings);
}
END_TEST

START_TEST(learned_positional_is_a_third_state)
{
    struct cli_options o;
    char err[512];

    ck_assert_msg(parse(&o, err, "--print", "--learned-positional", NULL) == 0, "%s", err);
    ck_assert(o.cfg.positional && o.cfg.positional_learned);
    /* The later option wins, as for every knob. */
    ck_assert_msg(parse(&o, err, "--print", "--learned-positional", "--positional", NULL) == 0, "%s", err);
    ck_assert(o.cfg.positional && !o.cfg.positional_learned);
    ck_assert_int_ne(parse(&o, err, "--print", "--qkv", "q", "--learned-positional", NULL), 0);
    ck_assert_msg(strstr(err, "drop --learned-positional") != NULL, "%s", err);
}
END_TEST

START_TEST(every_option_reaches_the_config)
{
    struct cli_options o;
    char err[512];

    ck_assert_msg(parse(&o, err, "--print", "-s", "Hello shiny sun!", "-e", "v.csv", "--variant",
                        "wrapper", "--d-out", "5", "--heads", "3", "--seed", "18446744073709551615",
                        "--dropout", "0.25", "--eval", "--qkv-bias", "--mask", "none",
                        "--no-scale", "--temperature", "0.5", "--positional", "--rng", "mkl",
                        "--weights", "w", "--stage", "weights", "--stage", "W_query.weight",
                        "--digits", "6", "--dropout-seed", "7", "--dropout-pass", "2", "--mono",
                        NULL) == 0,
                  "%s", err);
    ck_assert_int_eq(o.mode, CLI_PRINT);
    ck_assert_str_eq(o.sentence, "Hello shiny sun!");
    ck_assert_str_eq(o.embeddings, "v.csv");
    ck_assert_int_eq(o.cfg.variant, ATTN_WRAPPER);
    ck_assert_int_eq(o.cfg.d_out, 5);
    ck_assert_int_eq(o.cfg.heads, 3);
    ck_assert_uint_eq(o.cfg.seed, UINT64_MAX);
    ck_assert_double_eq(o.cfg.dropout, 0.25);
    ck_assert(!o.cfg.train);
    ck_assert(o.cfg.qkv_bias);
    ck_assert_int_eq(o.cfg.mask, ATTN_MASK_NONE);
    ck_assert(!o.cfg.scale);
    ck_assert_double_eq(o.cfg.temperature, 0.5);
    ck_assert(o.cfg.positional);
    ck_assert(!o.cfg.positional_learned);
    ck_assert_int_eq(o.cfg.rng_path, RNG_PATH_MKL);
    ck_assert_str_eq(o.weights_dir, "w");
    ck_assert_int_eq(o.stage_count, 2);
    ck_assert_str_eq(o.stages[1], "W_query.weight");
    ck_assert_int_eq(o.digits, 6);
    ck_assert(o.cfg.dropout_reseed);
    ck_assert_uint_eq(o.cfg.dropout_seed, 7);
    ck_assert_int_eq(o.cfg.dropout_pass, 2);
    ck_assert(o.mono);
}
END_TEST

START_TEST(variant_defaults_follow_the_book)
{
    struct cli_options o;
    char err[512];

    ck_assert_int_eq(parse(&o, err, "--variant", "simple", NULL), 0);
    ck_assert(!o.cfg.scale);
    ck_assert_int_eq(o.cfg.mask, ATTN_MASK_NONE);
    ck_assert_int_eq(parse(&o, err, "--variant", "v2", NULL), 0);
    ck_assert(o.cfg.scale);
    ck_assert_int_eq(o.cfg.mask, ATTN_MASK_NONE);
    /* Explicit choices win whatever their place on the line. */
    ck_assert_int_eq(parse(&o, err, "--mask", "causal", "--scale", "--variant", "simple", NULL), 0);
    ck_assert(o.cfg.scale);
    ck_assert_int_eq(o.cfg.mask, ATTN_MASK_CAUSAL);
    ck_assert_int_eq(parse(&o, err, "--export", "out", NULL), 0);
    ck_assert_int_eq(o.mode, CLI_EXPORT);
    ck_assert_str_eq(o.export_dir, "out");
}
END_TEST

static void
expect_error(const char *needle, const char *a, const char *b, const char *c)
{
    struct cli_options o;
    char err[512];

    ck_assert_int_eq(parse(&o, err, a, b, c, NULL), -1);
    ck_assert_msg(strstr(err, needle) != NULL, "'%s' not in: %s", needle, err);
}

START_TEST(bad_options_are_named)
{
    expect_error("--bogus: unknown option", "--bogus", NULL, NULL);
    expect_error("-x: unknown option", "-x", NULL, NULL);
    /* The nearest option suggested (issue 62, item 7); a far one is not. */
    expect_error("--sentance: unknown option; did you mean --sentence?", "--sentance", "x", NULL);
    expect_error("--modle: unknown option; did you mean --model?", "--modle=m", NULL, NULL);
    expect_error("--sentenec-file: unknown option; did you mean --sentence-file?",
                 "--sentenec-file", "f", NULL);
    {
        struct cli_options o;
        char err[512];
        ck_assert_int_eq(parse(&o, err, "--bogus", NULL), -1);
        ck_assert_msg(strcmp(err, "--bogus: unknown option") == 0, "%s", err);
        ck_assert_int_eq(parse(&o, err, "--s", "x", NULL), -1);
        ck_assert_msg(strstr(err, "--s: which option? it begins --sentence, ") == err, "%s", err);
    }
    expect_error("--heads needs a value", "--heads", NULL, NULL);
    expect_error("--heads 0: give a number from 1 to 256", "--heads", "0", NULL);
    expect_error("--d-out: 'two' is not a whole number", "--d-out", "two", NULL);
    expect_error("--d-out -3: give a number from 1 to 8192", "--d-out", "-3", NULL);
    expect_error("--d-out 99999999999999999999: give", "--d-out", "99999999999999999999", NULL);
    expect_error("--dropout 1: p must be at least 0 and below 1", "--dropout", "1", NULL);
    expect_error("--dropout -0.1: p must be", "--dropout", "-0.1", NULL);
    expect_error("--dropout: 'nan' is not a finite number", "--dropout", "nan", NULL);
    expect_error("--seed 18446744073709551616: beyond 64 bits", "--seed", "18446744073709551616", NULL);
    expect_error("--seed: '-1' is not a whole number", "--seed", "-1", NULL);
    expect_error("--temperature 0: T must be above 0", "--temperature", "0", NULL);
    expect_error("--mask: 'upper' is not a mask", "--mask", "upper", NULL);
    expect_error("--variant: 'gpt' is not a variant", "--variant", "gpt", NULL);
    expect_error("--rng: 'cuda' is not a generator path", "--rng", "cuda", NULL);
    /* --print and --export go together, in either order (issue 50, item 6); a third is refused. */
    {
        struct cli_options o;
        char err[512];
        ck_assert_msg(parse(&o, err, "--print", "--export", "d", NULL) == 0, "%s", err);
        ck_assert(o.mode == CLI_PRINT && o.print_and_export && strcmp(o.export_dir, "d") == 0);
        ck_assert_msg(parse(&o, err, "--export=d", "--print", NULL) == 0, "%s", err);
        ck_assert(o.mode == CLI_PRINT && o.print_and_export && strcmp(o.export_dir, "d") == 0);
        ck_assert_msg(parse(&o, err, "--print", NULL) == 0, "%s", err);
        ck_assert(!o.print_and_export);
    }
    {
        struct cli_options o;
        char err[512];
        ck_assert_int_eq(parse(&o, err, "--print", "--export", "d", "--figure", "f.svg", NULL), -1);
        ck_assert_msg(strstr(err, "--print and --figure: choose one") != NULL, "%s", err);
    }
    expect_error("--stage: the view opens on one stage", "--stage", "weights", "--stage=scores");
    expect_error("--print and --figure: choose one", "--figure", "f.svg", "--print");
    expect_error("--figure and --export: choose one", "--figure", "f.svg", "--export=d");
    expect_error("--head says where the view opens, or what --figure draws; with --print",
                 "--print", "--head", "1");
    /* The arithmetic of a quantized model's products (issue 61): named, refused without its model. */
    expect_error("--arith fast: choose exact or int8", "--model", "m", "--arith=fast");
    expect_error("--compare-arith int4: choose exact or int8", "--compare-arith", "int4", NULL);
    expect_error("--arith works with --model", "--arith", "int8", NULL);
    expect_error("--compare-arith is the second model's arithmetic: give --compare too",
                 "--model", "m", "--compare-arith=int8");
    {
        struct cli_options o;
        char err[512];
        ck_assert_msg(parse(&o, err, "--model", "m", NULL) == 0, "%s", err);
        ck_assert_int_eq(o.arith, CLI_ARITH_EXACT);
        ck_assert_int_eq(o.compare_arith, -1);
        ck_assert_msg(parse(&o, err, "--model", "m", "--compare", "m", "--arith", "int8",
                            "--compare-arith", "exact", NULL) == 0, "%s", err);
        ck_assert_int_eq(o.arith, CLI_ARITH_INT8);
        ck_assert_int_eq(o.compare_arith, CLI_ARITH_EXACT);
    }
    expect_error("'hello': unexpected argument", "hello", NULL, NULL);
    expect_error("--digits 12: give a number from 0 to 9", "--digits", "12", NULL);
    {
        struct cli_options o;
        char err[512];
        ck_assert_int_eq(parse(&o, err, "--model", "minigpt", "--print", "--stage", "next",
                               "--top", "0", NULL), -1);
        ck_assert_msg(strstr(err, "--stage next with --top 0: no next tokens") != NULL, "%s", err);
        ck_assert_int_eq(parse(&o, err, "--model", "minigpt", "--print", "--stage", "next",
                               "--top", "1", NULL), 0);
    }
}
END_TEST

START_TEST(help_and_version)
{
    struct cli_options o;
    char err[512];

    /* (the shipped models as --model finds them from any build folder: distcheck's too) */
    setenv("ATTNSCOPE_MODELS", test_path("samples/models"), 1);
    ck_assert_int_eq(parse(&o, err, "--heads", "2", "--help", NULL), 0);
    ck_assert_int_eq(o.mode, CLI_HELP);
    ck_assert_int_eq(parse(&o, err, "--version", NULL), 0);
    ck_assert_int_eq(o.mode, CLI_VERSION);
    ck_assert(strstr(cli_usage(), "--export DIR") != NULL);
    /* Whole: --stage's help to its last word (issue 35: cut at 512 bytes, "the stage the vi"),
       and the text to its end. */
    {
        const char *u = cli_usage();
        char *flat = malloc(strlen(u) + 1);
        size_t n = 0;
        ck_assert_ptr_nonnull(flat);
        for (const char *c = u; *c != '\0'; c++)
            if (!(isspace((unsigned char)*c) && n > 0 && flat[n - 1] == ' '))
                flat[n++] = isspace((unsigned char)*c) ? ' ' : *c;
        flat[n] = '\0';
        ck_assert_msg(strstr(flat, "lens (the logit lens) or kv (the KV cache, also cache); "
                                   "without them, the stage the view opens on --head H") != NULL,
                      "%s", flat);
        ck_assert_msg(strstr(flat, "(in a clone of the source: man -l doc/attnscope.1).") != NULL,
                      "%s", flat);
        /*
         * --model's lists are the tables' (issue 62, item 10): every family it
         * opens by its title, every model that ships (samples/models, as
         * --model finds them) by its folder's name.
         */
        for (int i = 0; architectures[i] != NULL; i++) {
            char want[64];
            snprintf(want, sizeof want, "%s%s", architectures[i]->title,
                     architectures[i + 1] == NULL ? ":" : architectures[i + 2] == NULL ? " or"
                                                                                       : ",");
            ck_assert_msg(strstr(flat, want) != NULL, "no '%s' in --model's help: %s", want, flat);
        }
        {
            static const char *const shipped[] = { "chapter5", "minigemma", "minigpt", "minillama",
                                                   "minillama-q4", "minillama-tuned", "minimoe",
                                                   "miniqwen35" };
            const char *ships = strstr(flat, "that ships (");
            ck_assert_ptr_nonnull(ships);
            for (size_t k = 0; k < sizeof shipped / sizeof shipped[0]; k++) {
                char want[64];
                snprintf(want, sizeof want, "%s%s", shipped[k],
                         k + 1 == sizeof shipped / sizeof shipped[0] ? ")" : k + 2 == sizeof shipped / sizeof shipped[0] ? " and " : ", ");
                ck_assert_msg(strstr(ships, want) != NULL && strstr(ships, want) < strchr(ships, ')') + 1,
                              "no '%s' in: %.300s", want, ships);
            }
        }
        free(flat);
    }
}
END_TEST

static Suite *
cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("parse");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, defaults_are_the_books_mha);
    tcase_add_test(tc, every_option_reaches_the_config);
    tcase_add_test(tc, learned_positional_is_a_third_state);
    tcase_add_test(tc, variant_defaults_follow_the_book);
    tcase_add_test(tc, bad_options_are_named);
    tcase_add_test(tc, help_and_version);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(cli_suite)
