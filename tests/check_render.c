/*
 * check_render.c: the renderer, stage matrix -> cell grid -> text
 * (src/render).  Pictures are compared with golden text in
 * tests/golden/render/ in colour and without; GENERATE=1 rewrites them.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "golden.h"
#include "render/explain.h"
#include "render/grid.h"
#include "render/stagemap.h"
#include "render/heatmap.h"
#include "render/inspect.h"
#include "render/palette.h"
#include "render/text.h"
#include "render/view.h"
#include "front/app/app.h"
#include "testutil.h"
#include "gpt2_random.h"
#include "attnscope/families/decoder/family_decoder.h"
#include "attnscope/families/decoder/model.h"
#include "attnscope/families/decoder/headmap.h"

static struct vocab book;

static void
setup(void)
{
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
}

static void
teardown(void)
{
    vocab_destroy(&book);
}

/* view_render with the footer the interactive view gives it (the front end's key table). */
static void
render_frame(struct view *v, const struct pipeline *p, struct grid *g)
{
    v->footer_items = app_footer(v->screen, &v->footer_count);
    view_render(v, p, g);
}

static void
run(struct pipeline *p, struct attention_config *cfg, const char *sentence)
{
    struct pipeline_source src = { sentence, &book, NULL, NULL, NULL, NULL, 0, false, NULL, NULL, NULL };
    struct attn_error err;

    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

/* A w x h frame of v on p as text: the characters, then (styles) the styles. */
static char *
rendered(const struct pipeline *p, struct view *v, int w, int h, bool styles)
{
    struct grid g;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_int_eq(grid_create(&g, w, h), 0);
    render_frame(v, p, &g);
    grid_dump_text(&g, f);
    if (styles) {
        fputs("--- styles\n", f);
        grid_dump_styles(&g, f);
    }
    fclose(f);
    grid_destroy(&g);
    return buf;
}

static void
frame(struct pipeline *p, enum view_stage stage, int w, int h, bool colour, bool utf8,
      int cursor_row, int cursor_col, const char *golden)
{
    struct view v;
    char *text;

    view_init(&v);
    v.stage = stage;
    v.colour = colour;
    v.utf8 = utf8;
    v.cursor_row = cursor_row;
    v.cursor_col = cursor_col;
    text = rendered(p, &v, w, h, true);
    golden_compare(golden, text);
    free(text);
    view_destroy(&v);
}

/* A view of stage in colour and UTF-8, in presentation mode or not. */
static void
view_at(struct view *v, enum view_stage stage, bool present)
{
    view_init(v);
    v->stage = stage;
    v->colour = true;
    v->utf8 = true;
    v->present = present;
}

/*
 * The editor shows a sentence's line ends and tabs (a sentence file holds
 * them) as marks instead of nothing (issue 23, item 18): "line one↵line
 * two⇥!", and "~" without UTF-8.
 */
START_TEST(the_editor_shows_line_ends)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    view_at(&v, VIEW_WEIGHTS, false);
    v.editing = true;
    v.edit_text = "line one\nline two\t!";
    v.edit_cursor = 0;
    text = rendered(&p, &v, 80, 24, false);
    ck_assert_msg(strstr(text, "line one\xe2\x86\xb5line two\xe2\x87\xa5!") != NULL, "%s", text);
    free(text);
    v.utf8 = false;
    text = rendered(&p, &v, 80, 24, false);
    ck_assert_msg(strstr(text, "line one~line two~!") != NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(weights_heatmap_in_colour_and_without)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    frame(&p, VIEW_WEIGHTS, 80, 24, true, true, 2, 1, "tests/golden/render/weights-colour.txt");
    frame(&p, VIEW_WEIGHTS, 80, 24, false, true, 2, 1, "tests/golden/render/weights-mono.txt");
    frame(&p, VIEW_WEIGHTS, 80, 24, false, false, 2, 1, "tests/golden/render/weights-ascii.txt");
    pipeline_destroy(&p);
}
END_TEST

START_TEST(masked_dropped_and_inf_cells_differ)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    frame(&p, VIEW_DROPOUT, 80, 24, true, true, 1, 0, "tests/golden/render/dropout-colour.txt");
    frame(&p, VIEW_DROPOUT, 80, 24, false, false, 1, 0, "tests/golden/render/dropout-ascii.txt");
    frame(&p, VIEW_MASK, 80, 24, true, true, 0, 3, "tests/golden/render/masked-colour.txt");
    pipeline_destroy(&p);
}
END_TEST

START_TEST(scores_output_and_wide_screen)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_V1);
    run(&p, &cfg, "Your journey starts with one step");
    frame(&p, VIEW_SCORES, 120, 30, true, true, 1, 2, "tests/golden/render/scores-wide.txt");
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    frame(&p, VIEW_OUTPUT, 80, 24, true, true, 0, 0, "tests/golden/render/output-colour.txt");
    pipeline_destroy(&p);
}
END_TEST

START_TEST(large_matrices_scroll_with_the_cursor)
{
    struct attention_config cfg;
    struct pipeline p;
    char sentence[512] = "";

    for (int i = 0; i < 50; i++) {
        char w[16];
        snprintf(w, sizeof w, "%sw%d", i ? " " : "", i);
        strcat(sentence, w);
    }
    attention_config_init(&cfg);
    run(&p, &cfg, sentence);
    frame(&p, VIEW_SCORES, 80, 24, true, true, 45, 44, "tests/golden/render/scroll.txt");
    pipeline_destroy(&p);
}
END_TEST

START_TEST(too_small_says_so)
{
    struct attention_config cfg;
    struct pipeline p;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey");
    frame(&p, VIEW_WEIGHTS, 40, 10, true, true, 0, 0, "tests/golden/render/too-small.txt");
    pipeline_destroy(&p);
}
END_TEST

/* The legend's line of a frame of stage s at 100x30: "min ... max ...". */
static void
legend_line(struct pipeline *p, enum view_stage s, char *line, size_t size)
{
    struct view v;
    char *text;
    const char *at;

    view_init(&v);
    v.stage = s;
    text = rendered(p, &v, 100, 30, false);
    at = strstr(text, "\nmin ");
    ck_assert_msg(at != NULL, "no legend in:\n%s", text);
    snprintf(line, size, "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
    free(text);
    view_destroy(&v);
}

/*
 * The legend gives the numbers' own range, and the colour scale's beside
 * it where that differs: the weights' scale starts at 0 and heads share
 * one, but the smallest weight a cell shows is the data's min (the masked
 * cells left out); where the scale is the data's range, it reads as before.
 */
START_TEST(the_legend_gives_the_data_range)
{
    struct attention_config cfg;
    struct pipeline p;
    char line[256], want[128];
    float lo = INFINITY, hi = -INFINITY;

    attention_config_init(&cfg);
    cfg.heads = 2;
    cfg.d_out = 2;
    run(&p, &cfg, "Your journey starts with one step");
    /* Head 0's weights under the causal mask: the cells j <= i. */
    for (int i = 0; i < p.st.nq; i++)
        for (int j = 0; j <= i; j++) {
            const float w = p.st.weights[(size_t)i * (size_t)p.st.nk + (size_t)j];
            lo = w < lo ? w : lo;
            hi = w > hi ? w : hi;
        }
    ck_assert(lo > 0.0f);
    legend_line(&p, VIEW_WEIGHTS, line, sizeof line);
    snprintf(want, sizeof want, "min %.4f max %.4f   scale 0.0000 ", (double)lo, (double)hi);
    ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s (want %s)", line, want);
    pipeline_destroy(&p);
    /* One head's scores: the scale is the data's range, "min ... max" as ever. */
    cfg.heads = 1;
    cfg.d_out = 2;
    run(&p, &cfg, "Your journey starts with one step");
    legend_line(&p, VIEW_SCORES, line, sizeof line);
    ck_assert_msg(strstr(line, "scale") == NULL && strstr(line, " max ") != NULL, "%s", line);
    pipeline_destroy(&p);
}
END_TEST

/*
 * f leaves the first key out of the colour scale (issue 27, item 5: an
 * attention sink flattens every other colour): the scale is every head's
 * keys from the second on, the legend says so, and stages that are not key
 * by key keep theirs.
 */
/*
 * c puts weights on a log scale (issue 27, item 5): from the smallest weight
 * above 0 (every head's; at most four factors of ten below the largest) to
 * the largest, each factor of ten one step; the legend says log.
 */
START_TEST(weights_take_a_log_scale)
{
    struct attention_config cfg;
    struct pipeline p;
    struct stagemap sm;
    struct heatmap_spec spec;
    float least = INFINITY;
    float most = 0.0f;
    struct view v;
    size_t count;
    const float *all;

    attention_config_init(&cfg);
    cfg.temperature = 0.05; /* weights far apart: a few near 1, many near 0 */
    run(&p, &cfg, "Your journey starts with one step");
    all = pipeline_stage_all_heads(&p, STAGE_WEIGHTS, &count);
    for (size_t e = 0; e < count; e++) {
        if (all[e] > 0.0f && all[e] < least)
            least = all[e];
        most = all[e] > most ? all[e] : most;
    }
    memset(&sm, 0, sizeof sm);
    sm.log_scale = true;
    stagemap_spec(&sm, &p, STAGE_WEIGHTS, 0, false, true, true, &spec);
    ck_assert(spec.log_scale);
    ck_assert(spec.hi == most);
    ck_assert(spec.lo == (least > most * 1e-4f ? least : most * 1e-4f));
    ck_assert_int_eq(heatmap_level(&spec, spec.hi), 255);
    ck_assert_int_eq(heatmap_level(&spec, spec.lo), 0);
    ck_assert_int_eq(heatmap_level(&spec, spec.lo / 10.0f), 0);
    {
        const float mid = sqrtf(spec.lo * spec.hi); /* halfway in factors of ten */
        ck_assert_int_le(abs(heatmap_level(&spec, mid) - 128), 1);
    }
    /* Not on signed stages: scores keep their linear scale around 0. */
    stagemap_spec(&sm, &p, STAGE_SCORES, 0, false, true, true, &spec);
    ck_assert(!spec.log_scale);
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    v.log_scale = true;
    {
        char *text = rendered(&p, &v, 100, 30, false);
        ck_assert_msg(strstr(text, " (log)") != NULL, "%s", text);
        free(text);
    }
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(the_first_key_can_leave_the_scale)
{
    struct attention_config cfg;
    struct pipeline p;
    struct stagemap sm;
    struct heatmap_spec spec;
    float hi = -INFINITY, all = -INFINITY;
    char line[256];
    struct view v;

    attention_config_init(&cfg);
    cfg.heads = 2;
    cfg.d_out = 2;
    run(&p, &cfg, "Your journey starts with one step");
    p.st.scores[(size_t)3 * p.st.nk] = 9.0f; /* a sink: head 0's query 3 on the first key */
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < p.st.nq; i++)
            for (int j = 0; j < p.st.nk; j++) {
                const float x = p.st.scores[((size_t)h * p.st.nq + i) * p.st.nk + j];
                all = x > all ? x : all;
                if (j > 0)
                    hi = x > hi ? x : hi;
            }
    ck_assert(hi < all && all == 9.0f);
    memset(&sm, 0, sizeof sm);
    sm.skip_first = true;
    stagemap_spec(&sm, &p, STAGE_SCORES, 1, false, false, true, &spec);
    ck_assert(spec.range_skips_first && spec.hi == hi);
    stagemap_spec(&sm, &p, STAGE_QUERIES, 0, false, false, true, &spec);
    ck_assert(!spec.range_skips_first);
    sm.skip_first = false; /* (the cache knows the difference) */
    stagemap_spec(&sm, &p, STAGE_SCORES, 1, false, false, true, &spec);
    ck_assert(!spec.range_skips_first && spec.hi == all);
    view_init(&v);
    v.stage = VIEW_SCORES;
    v.skip_first_key = true;
    {
        char *text = rendered(&p, &v, 100, 30, false);
        const char *at = strstr(text, "\nmin ");
        ck_assert_ptr_nonnull(at);
        snprintf(line, sizeof line, "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
        free(text);
    }
    ck_assert_msg(strstr(line, "without the first key") != NULL, "%s", line);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(legend_says_when_its_scale_spans_every_head)
{
    static const struct {
        int heads;
        const char *says; /* NULL: nothing about heads */
    } cases[] = { { 1, NULL }, { 2, "0.3079 (both heads)" }, { 3, "(all 3 heads)" } };
    static const enum view_stage sliced[] = { VIEW_QKV, VIEW_SCORES, VIEW_WEIGHTS, VIEW_CONTEXT };
    char line[256];

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct attention_config cfg;
        struct pipeline p;

        attention_config_init(&cfg);
        cfg.heads = cases[c].heads;
        cfg.d_out = 6;
        if (cases[c].heads == 2)
            cfg.d_out = 2; /* the book's: the scores' max is head 0's 0.3079 */
        run(&p, &cfg, "Your journey starts with one step");
        for (size_t k = 0; k < sizeof sliced / sizeof sliced[0]; k++) {
            legend_line(&p, sliced[k], line, sizeof line);
            if (cases[c].says == NULL)
                ck_assert_msg(strstr(line, "head") == NULL, "%d head(s): %s", cases[c].heads, line);
            else if (sliced[k] == VIEW_SCORES || cases[c].heads == 3)
                ck_assert_msg(strstr(line, cases[c].says) != NULL, "%d heads: %s", cases[c].heads,
                              line);
            else
                ck_assert_msg(strstr(line, "(both heads)") != NULL, "%d heads: %s", cases[c].heads,
                              line);
        }
        /* Stages of all heads at once have their own range: nothing to say. */
        legend_line(&p, VIEW_CONCAT, line, sizeof line);
        ck_assert_msg(strstr(line, "head") == NULL, "concat: %s", line);
        legend_line(&p, VIEW_OUTPUT, line, sizeof line);
        ck_assert_msg(strstr(line, "head") == NULL, "output: %s", line);
        pipeline_destroy(&p);
    }
}
END_TEST

START_TEST(heatmap_levels_and_hits)
{
    float data[] = { -2.0f, 0.0f, 2.0f, 1.0f };
    struct matrix m = matrix_view(data, 2, 2);
    const char *const rows[] = { "a", "b" };
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    struct grid g;
    int sr = 0;
    int sc = 0;
    int row;
    int col;
    struct rect r = { 0, 0, 30, 5 };

    memset(&spec, 0, sizeof spec);
    spec.m = &m;
    spec.row_labels = rows;
    spec.ramp = RAMP_DIVERGING;
    spec.lo = -2.0f;
    spec.hi = 2.0f;
    spec.cursor_row = -1;
    spec.cursor_col = -1;
    spec.colour = true;
    ck_assert_int_eq(heatmap_level(&spec, -2.0f), 0);
    ck_assert_int_eq(heatmap_level(&spec, 0.0f), 128);
    ck_assert_int_eq(heatmap_level(&spec, 2.0f), 255);
    spec.ramp = RAMP_SEQUENTIAL;
    spec.lo = 0.0f;
    ck_assert_int_eq(heatmap_level(&spec, 1.0f), 128);
    ck_assert_int_eq(heatmap_level(&spec, -INFINITY), 0);

    ck_assert_int_eq(grid_create(&g, 30, 5), 0);
    heatmap_render(&g, r, &spec, &sr, &sc, &geo);
    ck_assert_int_eq(geo.vis_rows, 2);
    ck_assert_int_eq(geo.vis_cols, 2);
    ck_assert_int_eq(heatmap_hit(&geo, geo.x0 + geo.cell_w, geo.y0 + 1, &row, &col), 0);
    ck_assert_int_eq(row, 1);
    ck_assert_int_eq(col, 1);
    ck_assert_int_eq(heatmap_hit(&geo, 0, 0, &row, &col), -1);
    ck_assert_int_eq(heatmap_hit(&geo, geo.x0 + 2 * geo.cell_w, geo.y0, &row, &col), -1);
    grid_destroy(&g);
}
END_TEST

START_TEST(palette_quantises_like_terminals)
{
    ck_assert(palette_scheme_complete());
    struct rgb red = { 255, 0, 0 };
    struct rgb black = { 0, 0, 0 };
    struct rgb grey = { 128, 128, 128 };
    struct rgb white = { 255, 255, 255 };
    struct rgb lo = palette_ramp_rgb(RAMP_SEQUENTIAL, 0);
    struct rgb hi = palette_ramp_rgb(RAMP_SEQUENTIAL, 255);

    ck_assert_int_eq(palette_rgb_to_256(red), 196);
    ck_assert_int_eq(palette_rgb_to_256(black), 16);
    ck_assert_int_eq(palette_rgb_to_256(white), 231);
    ck_assert_int_eq(palette_rgb_to_256(grey), 244);
    ck_assert(lo.r == 68 && lo.g == 1 && lo.b == 84);
    ck_assert(hi.r == 253 && hi.g == 231 && hi.b == 37);
    ck_assert(palette_text_on(hi).r == 0);
    ck_assert(palette_text_on(lo).r == 255);
    ck_assert_uint_eq(palette_ramp_glyph(0, true), ' ');
    ck_assert_uint_eq(palette_ramp_glyph(255, true), 0x2588);
    ck_assert_uint_eq(palette_ramp_glyph(255, false), '@');
    for (int level = 0; level < 256; level++) {
        uint32_t gch = palette_ramp_glyph(level, false);
        ck_assert_msg(gch != '-' && gch != '+', "glyph %c reads as a sign", (int)gch);
    }
    ck_assert_int_eq(palette_ramp_to_8(RAMP_DIVERGING, 128), 7);
}
END_TEST

/*
 * Projector contrast (issue 13, item 15): text on every ramp colour and every
 * fixed pair of colours has WCAG AA's 4.5:1, and a role on the terminal's own
 * background has it on black and on white.
 */
START_TEST(colours_have_contrast)
{
    const struct rgb black = { 0, 0, 0 };
    const struct rgb white = { 255, 255, 255 };
    const enum palette_ramp ramps[] = { RAMP_SEQUENTIAL, RAMP_DIVERGING, RAMP_SEQUENTIAL_HC,
                                        RAMP_DIVERGING_HC };

    ck_assert_double_eq_tol(palette_contrast(black, white), 21.0, 1e-9);
    ck_assert_double_eq_tol(palette_contrast(white, white), 1.0, 1e-9);
    for (size_t r = 0; r < sizeof ramps / sizeof ramps[0]; r++)
        for (int level = 0; level < 256; level++) {
            struct rgb bg = palette_ramp_rgb(ramps[r], level);
            double c = palette_contrast(palette_text_on(bg), bg);
            ck_assert_msg(c >= 4.5, "ramp %zu level %d: text contrast %.2f", r, level, c);
        }
    for (int role = 0; role < ROLE_COUNT; role++) {
        struct rgb fg;
        struct rgb bg;
        bool own_bg;
        if (!palette_role_rgb((enum palette_role)role, &fg, &bg, &own_bg))
            continue;
        if (own_bg) {
            ck_assert_msg(palette_contrast(fg, black) >= 4.5 && palette_contrast(fg, white) >= 4.5,
                          "role %c on the terminal's background", palette_role_letter(role));
        } else {
            ck_assert_msg(palette_contrast(fg, bg) >= 4.5, "role %c: contrast %.2f",
                          palette_role_letter(role), palette_contrast(fg, bg));
            /* Colour already says it; dim on top would make it faint. */
            ck_assert_msg(!(palette_role_attrs((enum palette_role)role, true) & ATTR_DIM),
                          "role %c is dim on its own colours", palette_role_letter(role));
        }
    }
}
END_TEST

/*
 * The projector (issue 13, item 15): in presentation mode a masked cell has
 * neither the colours nor the glyphs of any weight, at every colour depth;
 * the cursor keeps its cell's colours (reverse video made 1.0 look like 0.0);
 * and no text is dim.
 */
START_TEST(masked_never_looks_like_a_weight)
{
    const enum palette_depth depths[] = { DEPTH_8, DEPTH_256, DEPTH_DIRECT };
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    struct grid g;
    int masked = 0;
    int weights = 0;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    view_at(&v, VIEW_WEIGHTS, true);
    v.cursor_row = 0; /* Your attends only to itself: weight 1.0, the ramp's darkest */
    v.cursor_col = 0;
    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    render_frame(&v, &p, &g);
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
        for (int y = 0; y < g.height; y++)
            for (int x = 0; x < g.width; x++) {
                const struct cell *c = grid_at(&g, x, y);
                int fg;
                int bg;
                grid_cell_colours(c, depths[d], &fg, &bg);
                ck_assert_msg(!(grid_cell_attrs(&g, c, depths[d]) & (ATTR_DIM | ATTR_REVERSE)),
                              "cell %d,%d is dim or reversed on a projector", x, y);
                if (c->role == ROLE_MASKED) {
                    masked++;
                    ck_assert_int_eq(bg, -1); /* the terminal's own: never a ramp colour */
                } else if (c->role == ROLE_HEAT) {
                    weights++;
                    ck_assert_int_ge(bg, 0);
                    ck_assert_uint_ne(c->ch, HEAT_HATCH);
                }
            }
    }
    ck_assert_int_gt(masked, 0);
    ck_assert_int_gt(weights, 0);
    /* The cursor's cell: the darkest weight, its own colour, a pointer before its number. */
    {
        char *text = rendered(&p, &v, 100, 30, false);
        ck_assert_msg(strstr(text, "\xe2\x96\xb8" "1.0000") != NULL, "%s", text);
        free(text);
    }
    grid_destroy(&g);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/*
 * A wider or taller terminal never shows less (issue 13, item 14): for
 * sentences of 6, 13 and 24 tokens, one head and the all-heads grid, every
 * size from 80x24 to 250x60 (every 10 columns, every 12 rows) shows at least
 * the columns and decimals of every smaller size, every tile alike, and a
 * taller one at least its rows; a
 * wider one shows fewer rows only to show more numbers (the panel leaving
 * the matrix's side for below it); the legend is never cut.
 */
struct shown {
    int cols, rows, decimals, tiles;
};

static struct shown
shown_at(const struct pipeline *p, enum view_stage stage, bool grid_heads, int w, int h,
         char **text)
{
    struct view v;
    struct grid g;
    struct shown sh = { INT_MAX, INT_MAX, 4, 0 };

    view_at(&v, stage, false);
    v.grid_heads = grid_heads;
    ck_assert_int_eq(grid_create(&g, w, h), 0);
    render_frame(&v, p, &g);
    sh.tiles = v.frame.tiles;
    for (int t = 0; t < v.frame.tiles; t++) {
        const struct heatmap_geometry *geo = &v.frame.geo[t];
        sh.cols = geo->vis_cols < sh.cols ? geo->vis_cols : sh.cols;
        sh.rows = geo->vis_rows < sh.rows ? geo->vis_rows : sh.rows;
        sh.decimals = geo->decimals < sh.decimals ? geo->decimals : sh.decimals;
        if (t > 0)
            ck_assert_msg(geo->decimals == v.frame.geo[0].decimals,
                          "%dx%d: head %d shows %d decimals, head 0 %d", w, h, t, geo->decimals,
                          v.frame.geo[0].decimals);
    }
    if (text != NULL) {
        size_t len = 0;
        FILE *f = open_memstream(text, &len);
        grid_dump_text(&g, f);
        fclose(f);
    }
    grid_destroy(&g);
    view_destroy(&v);
    return sh;
}

START_TEST(wider_never_shows_less)
{
    const char *sentences[] = { "Your journey starts with one step",
                                "the cat sat on the mat and the dog saw the cat today",
                                "a b c d e f g h i j k l m n o p q r s t u v w x" };
    const enum view_stage stages[] = { VIEW_WEIGHTS, VIEW_SCORES, VIEW_DROPOUT, VIEW_EMBEDDINGS };
    enum { WIDTHS = 18, HEIGHTS = 4 };
    struct attention_config cfg;

    for (size_t k = 0; k < sizeof sentences / sizeof sentences[0]; k++) {
        struct pipeline p;
        attention_config_init(&cfg);
        cfg.dropout = 0.5;
        run(&p, &cfg, sentences[k]);
        for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++)
            for (int grid_heads = 0; grid_heads < 2; grid_heads++) {
                /* Every size once, 80x24 to 250x60; then each against its smaller neighbours. */
                struct shown at[HEIGHTS][WIDTHS];
                for (int hi = 0; hi < HEIGHTS; hi++)
                    for (int wi = 0; wi < WIDTHS; wi++) {
                        const int w = 80 + 10 * wi;
                        const int h = 24 + 12 * hi;
                        char *text = NULL;
                        struct shown now = shown_at(&p, stages[s], grid_heads, w, h, &text);
                        struct shown narrower = wi > 0 ? at[hi][wi - 1] : (struct shown){ 0, 0, -1, 0 };
                        struct shown shorter = hi > 0 ? at[hi - 1][wi] : (struct shown){ 0, 0, -1, 0 };
                        bool more_numbers = now.decimals > narrower.decimals || now.cols > narrower.cols;
                        bool ok = now.cols >= narrower.cols && now.decimals >= narrower.decimals &&
                                  (now.rows >= narrower.rows || more_numbers) &&
                                  now.tiles >= narrower.tiles;
                        if (!ok) /* the screen, for whoever reads the log */
                            fprintf(stderr, "%s", text);
                        ck_assert_msg(ok,
                                      "'%s' stage %d grid %d: %dx%d shows %d cols %d rows %d "
                                      "decimals, 10 columns fewer showed %d, %d, %d",
                                      sentences[k], (int)stages[s], grid_heads, w, h, now.cols,
                                      now.rows, now.decimals, narrower.cols, narrower.rows,
                                      narrower.decimals);
                        ck_assert_msg(now.cols >= shorter.cols && now.decimals >= shorter.decimals &&
                                          now.rows >= shorter.rows,
                                      "'%s' stage %d grid %d: %dx%d shows less than %dx%d",
                                      sentences[k], (int)stages[s], grid_heads, w, h, w, h - 12);
                        /* The legend's items come whole: no "✕ dr". */
                        ck_assert_msg(strstr(text, "\xe2\x9c\x95 dropped") != NULL ||
                                          strstr(text, "\xe2\x9c\x95 d") == NULL,
                                      "%dx%d: a legend item is cut", w, h);
                        free(text);
                        at[hi][wi] = now;
                    }
            }
        pipeline_destroy(&p);
    }
}
END_TEST

/* The first and last rows of g with anything on them, and the leftmost and rightmost columns. */
static void
content_box(const struct grid *g, int *top, int *bottom, int *left, int *right)
{
    *top = g->height;
    *bottom = -1;
    *left = g->width;
    *right = -1;
    for (int y = 0; y < g->height; y++)
        for (int x = 0; x < g->width; x++) {
            const struct cell *c = grid_at(g, x, y);
            if (c->ch == ' ' && c->role != ROLE_HEAT)
                continue;
            *top = y < *top ? y : *top;
            *bottom = y > *bottom ? y : *bottom;
            *left = x < *left ? x : *left;
            *right = x > *right ? x : *right;
        }
}

/*
 * Presentation mode presents (issue 13, item 16): on a bigger screen the
 * cells are wider and the rows spaced out, and the content sits in the
 * middle, not in the top-left corner.
 */
START_TEST(presentation_scales_and_centres)
{
    struct attention_config cfg;
    struct pipeline p;
    int cell_w[2];
    int row_h[2];
    const int sizes[2][2] = { { 100, 30 }, { 160, 45 } };

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    for (int k = 0; k < 2; k++) {
        struct view v;
        struct grid g;
        int top;
        int bottom;
        int left;
        int right;
        view_at(&v, VIEW_WEIGHTS, true);
        ck_assert_int_eq(grid_create(&g, sizes[k][0], sizes[k][1]), 0);
        render_frame(&v, &p, &g);
        cell_w[k] = v.frame.geo[0].cell_w;
        row_h[k] = v.frame.geo[0].row_h;
        content_box(&g, &top, &bottom, &left, &right);
        ck_assert_msg(abs(left - (g.width - 1 - right)) <= 2 && left > 0,
                      "%dx%d: columns %d-%d are not centred", g.width, g.height, left, right);
        /* (At 100x30 the spaced-out rows and the panel fill the screen.) */
        ck_assert_msg(abs(top - (g.height - 1 - bottom)) <= 2 && (top > 0 || k == 0),
                      "%dx%d: rows %d-%d are not centred", g.width, g.height, top, bottom);
        grid_destroy(&g);
        view_destroy(&v);
    }
    ck_assert_int_gt(cell_w[1], cell_w[0]);
    ck_assert_int_gt(row_h[1], 1);
    pipeline_destroy(&p);
}
END_TEST

/*
 * At the sizes a zoomed projector font leaves (64x20, down to the 50x16 the
 * view needs) a lesson's step keeps its title whole, the cursor's row in
 * view and its narration whole: a narration longer than its room is paged,
 * and the pages together hold every word of it.
 */
START_TEST(presentation_small_keeps_the_step)
{
    struct attention_config cfg;
    struct pipeline p;
    char narration[4096] = "";
    const int sizes[3][2] = { { 64, 20 }, { 60, 17 }, { 50, 16 } };

    for (int w = 0; w < 60; w++) {
        char word[32];
        snprintf(word, sizeof word, "%sword%02d", w > 0 ? (w % 20 == 0 ? "\n" : " ") : "", w);
        strcat(narration, word);
    }
    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    for (int k = 0; k < 3; k++) {
        struct view v;
        bool seen[60] = { false };
        view_at(&v, VIEW_WEIGHTS, true);
        v.narration = narration;
        v.walk_title = "4. Multi-head attention";
        v.step_title = "Each head attends its own way, and this title is long";
        v.steps = 5;
        v.step = 1;
        v.following = true;
        v.cursor_row = 5;
        v.cursor_col = 2;
        for (int page = 0; page < 40; page++) {
            struct grid g;
            char *text;
            size_t len = 0;
            FILE *f;
            ck_assert_int_eq(grid_create(&g, sizes[k][0], sizes[k][1]), 0);
            render_frame(&v, &p, &g);
            f = open_memstream(&text, &len);
            grid_dump_text(&g, f);
            fclose(f);
            /* The title, wrapped but whole; the cursor's row; a page that says where the rest is. */
            ck_assert_msg(strstr(text, "step 2 of 5") != NULL && strstr(text, "is long") != NULL,
                          "%dx%d: the step's title is cut:\n%s", g.width, g.height, text);
            ck_assert_msg(v.frame.tiles == 1 &&
                              v.frame.geo[0].row0 <= 5 &&
                              5 < v.frame.geo[0].row0 + v.frame.geo[0].vis_rows,
                          "%dx%d: the cursor's row is not shown:\n%s", g.width, g.height, text);
            for (int w = 0; w < 60; w++) {
                char word[16];
                snprintf(word, sizeof word, "word%02d", w);
                seen[w] = seen[w] || strstr(text, word) != NULL;
            }
            if (v.frame.narration_rows > v.frame.narration_page)
                ck_assert_msg(strstr(text, " of ") != NULL && (strstr(text, "] more") != NULL ||
                                                               strstr(text, "[ back") != NULL),
                              "%dx%d: a page that does not say there is more:\n%s", g.width,
                              g.height, text);
            free(text);
            grid_destroy(&g);
            if (v.narration_scroll + v.frame.narration_page >= v.frame.narration_rows)
                break;
            v.narration_scroll += v.frame.narration_page; /* what ] does */
        }
        for (int w = 0; w < 60; w++)
            ck_assert_msg(seen[w], "%dx%d: word%02d is on no page", sizes[k][0], sizes[k][1], w);
        view_destroy(&v);
    }
    pipeline_destroy(&p);
}
END_TEST

START_TEST(text_wrapping)
{
    size_t next;

    ck_assert_uint_eq(text_wrap("one two three", 9, &next), 7);
    ck_assert_uint_eq(next, 8);
    ck_assert_uint_eq(text_wrap("abcdefgh", 3, &next), 3);          /* no space: cut */
    ck_assert_uint_eq(text_wrap("x", 0, &next), 1);                  /* never stuck */
}
END_TEST

START_TEST(inspector_spells_out_each_stage)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[4096];

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    inspect_cell(&p, VIEW_SCORES, 0, 1, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "score[journey][Your] = q_journey . k_Your") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_WEIGHTS, 1, 2, 1, false, 6, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "weight[starts][journey]") != NULL && strstr(buf, "sum ") != NULL, "%s",
                  buf);
    inspect_cell(&p, VIEW_DROPOUT, 0, 1, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "draw u = ") != NULL && strstr(buf, "sums to") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_MASK, 0, 1, 4, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "hidden, the score becomes -inf") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_CONTEXT, 1, 3, 0, false, 3, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "... (6 terms in all)") != NULL, "%s", buf);
    pipeline_destroy(&p);

    cfg.dropout = 0.0;
    run(&p, &cfg, "Your journey starts with one step");
    inspect_cell(&p, VIEW_OUTPUT, 0, 0, 0, false, 4, true, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "out[Your][0] = 0.3190") != NULL && strstr(buf, "\xc3\x97") != NULL,
                  "%s", buf);
    pipeline_destroy(&p);
}
END_TEST

/* With the positional encoding the view goes as it is computed: E, then E + PE (issue 13, item 4). */
START_TEST(positional_encoding_in_the_order_it_is_computed)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char buf[2048];
    char *text;

    attention_config_init(&cfg);
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_EMBEDDINGS, false), STAGE_EMBEDDINGS);
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_POSITIONAL, false), STAGE_INPUTS);
    view_init(&v);
    v.stage = VIEW_EMBEDDINGS;
    text = rendered(&p, &v, 100, 30, false);
    /* Your's d1: 0.15 as looked up, 1.15 with cos 0 = 1 added. */
    ck_assert_msg(strstr(text, "0.1500") != NULL && strstr(text, "1.1500") == NULL, "%s", text);
    free(text);
    v.stage = VIEW_POSITIONAL;
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, "1.1500") != NULL, "%s", text);
    free(text);
    view_destroy(&v);
    explain_text(&p, VIEW_EMBEDDINGS, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "The next stage adds the positional encoding") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_POSITIONAL, 0, 1, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "x[journey][0] = E 0.5500 + PE(1, 0) 0.8415 = 1.3915") != NULL, "%s",
                  buf);
    pipeline_destroy(&p);
    /* Without it, stage 1 is the inputs themselves. */
    cfg.positional = false;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_EMBEDDINGS, false), STAGE_INPUTS);
    pipeline_destroy(&p);
}
END_TEST

/* Off the script a lesson's narration is dimmed: it no longer matches the screen (item 19). */
START_TEST(narration_dims_off_the_script)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;
    const char *styles;
    const char *at;
    int row = 0;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    v.narration = "Narration about the weights.";
    v.walk_title = "Lesson";
    v.step_title = "Step";
    v.steps = 1;
    for (int following = 1; following >= 0; following--) {
        v.following = following;
        text = rendered(&p, &v, 100, 30, true);
        at = strstr(text, "Narration about");
        ck_assert_ptr_nonnull(at);
        for (const char *c = text; c < at; c++)
            row += *c == '\n';
        /* The same row of the style dump: 'd' is dim, '.' plain text. */
        styles = strstr(text, "--- styles\n") + strlen("--- styles\n");
        for (int r = 0; r < row; r++)
            styles = strchr(styles, '\n') + 1;
        ck_assert_msg(styles[0] == (following ? '.' : 'd'), "following %d: style '%c'", following,
                      styles[0]);
        free(text);
        row = 0;
    }
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* The mask text on a variant without a mask does not say "again" (issue 13, item 19). */
START_TEST(mask_text_fits_the_variant)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[1024];

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "has no mask") != NULL && strstr(buf, "again") == NULL, "%s", buf);
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    cfg.mask = ATTN_MASK_NONE; /* mha with its mask switched off */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "hide the future again") != NULL, "%s", buf);
    pipeline_destroy(&p);
}
END_TEST

/* Column labels that would be cut alike ("to" for tok0 ... tok29) show their position (item 11). */
START_TEST(cut_labels_show_positions)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char sentence[400];
    size_t used = 0;
    char *text;

    for (int i = 0; i < 30; i++)
        used += (size_t)snprintf(sentence + used, sizeof sentence - used, "%stok%d", i ? " " : "", i);
    attention_config_init(&cfg);
    run(&p, &cfg, sentence);
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, " 10 11 12 ") != NULL && strstr(text, " to to ") == NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* A knob that changes nothing here says why and what to press (issue 13, item 10). */
START_TEST(scaling_by_one_says_so)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[1024];
    int key_dir;
    const struct knob *slash = knob_for_key('/', &key_dir);

    ck_assert_ptr_nonnull(slash);
    attention_config_init(&cfg); /* mha, d_out 2, 2 heads: d_k 1 */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_SCALED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "Here d_k is 1 and sqrt(1) = 1, so / changes nothing") != NULL, "%s", buf);
    knob_said(slash, &p, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "sqrt(1) = 1 changes nothing here") != NULL, "%s", buf);
    pipeline_destroy(&p);
    cfg.d_out = 8; /* d_k 4 */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_SCALED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "changes nothing") == NULL, "%s", buf);
    knob_said(slash, &p, buf, sizeof buf);
    ck_assert_str_eq(buf, "scores divided by sqrt(d_k)");
    pipeline_destroy(&p);
}
END_TEST

/* A made-up token keeps its '*' on every stage, not only the embeddings (issue 13, item 6). */
START_TEST(made_up_tokens_stay_marked)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one leap");
    view_init(&v);
    for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
        if (!explain_stage_present(&p, (enum view_stage)s))
            continue;
        v.stage = (enum view_stage)s;
        text = rendered(&p, &v, 100, 30, false);
        ck_assert_msg(strstr(text, "\nleap*") != NULL, "stage %s: %s",
                      explain_stage_name((enum view_stage)s), text);
        free(text);
    }
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* Given Q, K, V with fewer queries than keys: the missing query cells are blank, not NaN (item 5). */
START_TEST(absent_queries_are_blank_not_nan)
{
    struct qkv_given q;
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src = { NULL, NULL, NULL, &q, NULL, NULL, 0, false, NULL, NULL, NULL };
    struct attn_error err;
    struct heatmap_spec spec;
    struct view v;
    char *text;

    ck_assert_msg(qkv_load(&q, test_path("samples/soft-dictionary"), &err) == ATTN_OK, "%s", err.msg);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    cfg.scale_dim = 4;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    view_init(&v);
    v.stage = VIEW_QKV;
    ck_assert_int_eq(view_stage_spec(&v, &p, VIEW_QKV, 0, &spec), 0);
    ck_assert_int_eq(spec.m->rows, 4);
    ck_assert_int_eq(heatmap_kind(&spec, 3, 0), HEAT_ABSENT); /* query 4 does not exist */
    ck_assert_int_eq(heatmap_kind(&spec, 3, 3), HEAT_VALUE);  /* key 4 does */
    ck_assert_int_eq(heatmap_kind(&spec, 2, 0), HEAT_VALUE);
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, "nan") == NULL && strstr(text, "NaN") == NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
    qkv_destroy(&q);
}
END_TEST

/* A row with an infinite score is nan, and the panel says why instead of "sums to 1". */
START_TEST(inspector_explains_nan_rows)
{
    const char *csv = "token,d0,d1,d2\nbig,1e30,1e30,1e30\nsmall,-1e30,2e30,1e30\n";
    struct attention_config cfg;
    struct pipeline p;
    struct vocab big;
    struct pipeline_source src = { "big small big", &big, NULL, NULL, NULL, NULL, 0, false, NULL, NULL, NULL };
    struct attn_error err;
    char buf[4096];

    test_tmpdir_setup();
    ck_assert_int_eq(vocab_load_csv(&big, test_write_file(dir, "big.csv", csv, strlen(csv)), &err),
                     ATTN_OK);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    inspect_cell(&p, VIEW_WEIGHTS, 0, 0, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "sum to 1") == NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "the largest score is +inf and exp(inf - inf) is nan") != NULL, "%s",
                  buf);
    pipeline_destroy(&p);
    vocab_destroy(&big);
    test_tmpdir_teardown();
}
END_TEST

/* The core's formula, the view's and the inspector's describe one divisor. */
START_TEST(scaling_is_described_once)
{
    static const struct {
        int scale_dim;
        double temperature;
        bool scale;
        const char *core, *view, *inspector;
    } cases[] = {
        { 16, 2.0, true, "masked / (sqrt(--scale-dim) T)", "w_ij / (sqrt(--scale-dim) T) = w_ij / 8",
          "divided by sqrt(--scale-dim) = sqrt(16) times the temperature." },
        { 16, 1.0, true, "masked / sqrt(--scale-dim)", "w_ij / sqrt(--scale-dim) = w_ij / sqrt(16)",
          "divided by sqrt(--scale-dim) = sqrt(16)." },
        { 0, 1.0, true, "masked / sqrt(d_k)", "w_ij / sqrt(d_k) = w_ij / sqrt(1)",
          "divided by sqrt(d_k) = sqrt(1)." },
        { 0, 2.0, false, "masked / T", "w_ij / T = w_ij / 2", "scaling is off: divided by T only." },
    };

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct attention_config cfg;
        struct pipeline p;
        char buf[1024];

        attention_config_init(&cfg);
        cfg.scale_dim = cases[k].scale_dim;
        cfg.temperature = cases[k].temperature;
        cfg.scale = cases[k].scale;
        run(&p, &cfg, "Your journey starts with one step");
        ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_SCALED), cases[k].core);
        explain_formula(&p, VIEW_SCALED, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[k].view);
        inspect_cell(&p, VIEW_SCALED, 0, 1, 0, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, cases[k].inspector) != NULL, "case %zu: %s", k, buf);
        pipeline_destroy(&p);
    }
}
END_TEST

/* Stage s of p has a formula, an explanation and an inspector for cell (row, col) of head. */
static void
expect_explained(const struct pipeline *p, enum view_stage s, int head, int row, int col)
{
    const char *name = explain_stage_name(s);
    char buf[2048];

    explain_formula(p, s, buf, sizeof buf);
    ck_assert_msg(buf[0] != '\0', "stage %s has no formula", name);
    explain_text(p, s, buf, sizeof buf);
    ck_assert_msg(strlen(buf) > 40, "stage %s has no explanation", name);
    inspect_cell(p, s, head, row, col, false, 4, false, buf, sizeof buf);
    ck_assert_msg(buf[0] != '\0', "stage %s has no inspector", name);
}

/* The pipeline of the model in the folder rel on text, showing its layer 1. */
static void
model_on_layer_1(struct pipeline *p, const struct attention_config *cfg, struct model *m,
                 const char *rel, const char *text)
{
    struct pipeline_source src;
    struct attn_error err;

    ck_assert_msg(model_open(m, test_path(rel), NULL, &err) == ATTN_OK, "%s", err.msg);
    memset(&src, 0, sizeof src);
    src.sentence = text;
    src.family = &family_decoder;
    src.model = m;
    src.top = 2;
    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_select_layer(p, 1, &err), ATTN_OK);
}

/* Every view stage has its name, title, formula and inspector, and names round-trip. */
START_TEST(every_view_stage_is_complete)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[2048];
    char names[256];

    attention_config_init(&cfg);
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step");
    explain_stage_names(" ", names, sizeof names);
    for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
        enum view_stage back;
        const char *name = explain_stage_name((enum view_stage)s);
        ck_assert_int_eq(explain_stage_parse(name, &back), 0);
        ck_assert_int_eq(back, s);
        ck_assert_msg(strstr(names, name) != NULL, "%s not in '%s'", name, names);
        if (PIPELINE_BLOCK_STAGES & FAMILY_STAGE(explain_pipeline_stage(&p, (enum view_stage)s, false))) {
            /* A transformer block's own: a trained model's (below), not the book's. */
            ck_assert(!explain_stage_present(&p, (enum view_stage)s));
            continue;
        }
        if (s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE) {
            /* The notes' class alone drops its output, nn-mha alone averages, a source is cross-attention's (below). */
            ck_assert(!explain_stage_present(&p, (enum view_stage)s));
            continue;
        }
        ck_assert(explain_stage_present(&p, (enum view_stage)s));
        ck_assert_str_ne(explain_title((enum view_stage)s), "?");
        expect_explained(&p, (enum view_stage)s, 0, 1, 0);
    }
    pipeline_destroy(&p);
    attention_config_set_variant(&cfg, ATTN_NOTES);
    cfg.heads = 3;
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert(explain_stage_present(&p, VIEW_OUTDROP));
    ck_assert(!explain_stage_present(&p, VIEW_DROPOUT));
    expect_explained(&p, VIEW_OUTDROP, 0, 2, 1);
    inspect_cell(&p, VIEW_OUTDROP, 0, 2, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, p.st.keep[2 * 3 + 1] ? "kept, scaled by 1/(1-p) = 2" : "dropped, set to 0"),
                  "%s", buf);
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "no mask"));
    pipeline_destroy(&p);
    attention_config_set_variant(&cfg, ATTN_NN_MHA);
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert(explain_stage_present(&p, VIEW_AVERAGE));
    expect_explained(&p, VIEW_AVERAGE, 0, 2, 1);
    inspect_cell(&p, VIEW_AVERAGE, 0, 2, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, ") / 3\n") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_QKV, 1, 2, 1, false, 4, false, buf, sizeof buf); /* head 1's k0 */
    ck_assert_msg(strstr(buf, "row 4 of W_k (in_proj_weight)") != NULL, "%s", buf);
    pipeline_destroy(&p);
    /* Across sentences: the source's stage, keys spelled from its rows, no mask said plainly. */
    {
        struct pipeline_source src = { "with one step", &book, NULL, NULL, NULL, NULL, 0, false, NULL,
                                       "Your journey starts with one", NULL };
        struct attn_error err;
        cfg.cross = true;
        attention_config_set_variant(&cfg, ATTN_MHA);
        cfg.heads = 2;
        cfg.d_out = 4;
        ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
        ck_assert(explain_stage_present(&p, VIEW_SOURCE));
        expect_explained(&p, VIEW_SOURCE, 0, 4, 1);
        inspect_cell(&p, VIEW_SOURCE, 0, 4, 1, false, 4, false, buf, sizeof buf);
        /* 0.25 + PE(4, 1) = cos 4: each sentence counts its positions from 0. */
        ck_assert_msg(strstr(buf, "x_src[one][1] = -0.4036") != NULL && strstr(buf, "plus PE") != NULL, "%s", buf);
        inspect_cell(&p, VIEW_QKV, 0, 4, 2, false, 4, false, buf, sizeof buf); /* the source's 'one': k0 */
        ck_assert_msg(strstr(buf, "k[one][0] (head 0)") != NULL && strstr(buf, "x_src[one] . row 0 of W_k") != NULL,
                      "%s", buf);
        explain_formula(&p, VIEW_QKV, buf, sizeof buf);
        ck_assert_str_eq(buf, "Q = x W_q^T,  K = x_src W_k^T,  V = x_src W_v^T");
        explain_text(&p, VIEW_MASK, buf, sizeof buf);
        ck_assert_ptr_nonnull(strstr(buf, "Across sentences there is no mask"));
        cfg.cross = false;
    }
    ck_assert_int_eq(explain_stage_parse("nope", &(enum view_stage){ 0 }), -1);
    ck_assert_int_eq(explain_stage_parse("", &(enum view_stage){ 0 }), -1);
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    /* A trained model has every view stage but dropout, each explained and inspected. */
    {
        static struct model tiny;
        model_on_layer_1(&p, &cfg, &tiny, "tests/fixtures/gpt2/tiny", "The cat sat on the mat.");
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            const char *name = explain_stage_name((enum view_stage)s);
            if (s == VIEW_DROPOUT || s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE ||
                s == VIEW_QNORM || s == VIEW_KNORM || s == VIEW_QROPE || s == VIEW_KROPE ||
                s == VIEW_GATE || s == VIEW_SWIGLU) {
                ck_assert(!explain_stage_present(&p, (enum view_stage)s));
                continue;
            }
            ck_assert_msg(explain_stage_present(&p, (enum view_stage)s), "%s", name);
            expect_explained(&p, (enum view_stage)s, 1, 2, 3);
        }
        /* The inspector's numbers are the stages' own (layer norm: spelled from its row). */
        inspect_cell(&p, VIEW_LN2, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "ln2[\xc2\xb7sat][3] = ") && strstr(buf, "row residual1: mean "),
                      "%s", buf);
        inspect_cell(&p, VIEW_RESIDUAL2, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "the last block's output: ln_f reads it"), "%s", buf);
        {
            char want[64];
            char got[32];
            snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&p.block.gelu, 2, 3));
            snprintf(want, sizeof want, ") = %s", got);
            inspect_cell(&p, VIEW_GELU, 0, 2, 3, false, 4, false, buf, sizeof buf);
            ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        }
        pipeline_destroy(&p);
        model_close(&tiny);
    }
    /*
     * A Llama-style model (Qwen3's parts: RMSNorm, QK-norm, RoPE, grouped keys,
     * SwiGLU) has its own stages and no positional encoding or GELU, each
     * explained and inspected; the RoPE cell's pair and angle, and its score at
     * distance 0 is the score the weights came from.
     */
    {
        static struct model qwen;
        char want[64], got[32];
        struct matrix scores;
        model_on_layer_1(&p, &cfg, &qwen, "tests/fixtures/llama/qwen3", "the cat sat on the mat.");
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            const char *name = explain_stage_name((enum view_stage)s);
            if (s == VIEW_DROPOUT || s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE ||
                s == VIEW_POSITIONAL || s == VIEW_GELU) {
                ck_assert_msg(!explain_stage_present(&p, (enum view_stage)s), "%s", name);
                continue;
            }
            ck_assert_msg(explain_stage_present(&p, (enum view_stage)s), "%s", name);
            expect_explained(&p, (enum view_stage)s, 3, 2, 3);
        }
        inspect_cell(&p, VIEW_LN1, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "mean square") != NULL, "%s", buf);
        /* Head 3's column 2 of row 4: pair 2, position 4; its own key at distance 0. */
        inspect_cell(&p, VIEW_QROPE, 0, 4, 3 * 8 + 2, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "pair 2: (x[2], x[6])") && strstr(buf, "angle = position 4"),
                      "%s", buf);
        scores = attention_head(&p.st, p.st.scores, 3);
        snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&scores, 4, 4));
        snprintf(want, sizeof want, "d 0: %s", got);
        ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&p.block.swiglu, 2, 3));
        snprintf(want, sizeof want, " = %s", got);
        inspect_cell(&p, VIEW_SWIGLU, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        /*
         * The map's sink measure (the weight on the first token) from every layer's
         * weights made again, wider queries (32) than the stream (16) included.
         */
        {
            float first[3 * 4];
            double mean = 0.0;
            struct matrix w = attention_head(&p.st, p.st.weights, 3);
            ck_assert_int_eq(head_measures(&p, MEASURE_FIRST, first), 0);
            for (int i = 1; i < w.rows; i++)
                mean += MAT_AT(&w, i, 0);
            mean /= w.rows - 1;
            ck_assert_msg(fabs(first[1 * 4 + 3] - mean) < 1e-6, "%g vs %g",
                          (double)first[1 * 4 + 3], mean);
        }
        /* The scores' cell reads the turned queries and keys of head 3's key head (1). */
        inspect_cell(&p, VIEW_SCORES, 3, 4, 2, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "after RoPE and QK-norm; key head 1") != NULL, "%s", buf);
        pipeline_destroy(&p);
        model_close(&qwen);
    }
}
END_TEST

/*
 * Packed weights that replace the f32 ones (the view's, decoder_release_unpacked)
 * read the same: the next tokens, the logit lens, and every cell of every
 * stage of every layer as the inspector spells it out (the products through
 * W_q, W_k, W_v, W_o and the MLP read single weights from the pack), the
 * same text as from the f32 weights.
 */
START_TEST(packed_weights_read_as_the_f32_ones)
{
    const struct decoder_config shape = {
        .n_layer = 2, .n_head = 4, .n_embd = 64, .n_positions = 32, .vocab_size = 317,
        .n_inner = 256, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    const char *tmp = test_tmpdir();
    char folder[600], want[4096], got[4096];
    struct model plain, packed;
    struct pipeline a, b;
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;
    int ids_a[2 * 5], ids_b[2 * 5];
    float probs_a[2 * 5], probs_b[2 * 5];

    snprintf(folder, sizeof folder, "%s/packed", tmp);
    ck_assert_int_eq(
        gpt2_random_folder_with(folder, &shape, 0.2f, 7, test_path("tests/fixtures/gpt2/tiny")), 0);
    ck_assert_msg(model_open(&plain, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(model_open(&packed, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(decoder_pack(&packed.dec));
    /* Every linear's weights (16 KiB and more) and the embedding: whole pages given back. */
    ck_assert_uint_ge(decoder_release_unpacked(&packed.dec), 2 * 4 * 4096);
    ck_assert(packed.dec.wte == NULL && packed.dec.lm_head == NULL);
    ck_assert(packed.dec.blocks[1].q.w == NULL && packed.dec.blocks[1].down.w == NULL);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = "the cat sat on the mat";
    src.family = &family_decoder;
    src.top = 3;
    src.model = &plain;
    ck_assert_msg(pipeline_create(&a, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.model = &packed;
    ck_assert_msg(pipeline_create(&b, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < shape.n_layer; l++) {
        const int n = a.tokens.count;
        const int cells[][2] = { { 0, 0 }, { 1, 1 }, { n - 1, 3 } };
        ck_assert(pipeline_select_layer(&a, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&b, l, &err) == ATTN_OK);
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            if (!explain_stage_present(&a, (enum view_stage)s))
                continue;
            for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
                inspect_cell(&a, (enum view_stage)s, 1, cells[c][0], cells[c][1], false, 64, false,
                             want, sizeof want);
                inspect_cell(&b, (enum view_stage)s, 1, cells[c][0], cells[c][1], false, 64, false,
                             got, sizeof got);
                ck_assert_msg(strcmp(want, got) == 0, "layer %d, %s (%d, %d):\n%s\nagainst\n%s",
                              l, explain_stage_name((enum view_stage)s), cells[c][0], cells[c][1],
                              got, want);
            }
        }
    }
    {
        const struct decoder_run *ra = &pipeline_decoder(&a)->run, *rb = &pipeline_decoder(&b)->run;
        ck_assert_int_eq(ra->n, rb->n);
        ck_assert(memcmp(ra->top_ids, rb->top_ids, (size_t)ra->n * 3 * sizeof(int)) == 0);
        ck_assert(memcmp(ra->top_probs, rb->top_probs, (size_t)ra->n * 3 * sizeof(float)) == 0);
        ck_assert(decoder_logit_lens(&plain.dec, ra, 2, 5, ids_a, probs_a, &err) == ATTN_OK);
        ck_assert(decoder_logit_lens(&packed.dec, rb, 2, 5, ids_b, probs_b, &err) == ATTN_OK);
        ck_assert(memcmp(ids_a, ids_b, sizeof ids_a) == 0);
        ck_assert(memcmp(probs_a, probs_b, sizeof probs_a) == 0);
    }
    pipeline_destroy(&a);
    pipeline_destroy(&b);
    model_close(&plain);
    model_close(&packed);
    test_remove_dir(tmp);
}
END_TEST

/* The legend of stage s (head 1, or 0) of p, with the kinds found by the spec's kinds or cell by cell. */
static void
legend_text(const struct pipeline *p, enum pipeline_stage s, bool mask_matrix, bool cell_by_cell,
            char *buf, size_t size)
{
    struct stagemap sm = { 0 };
    struct heatmap_spec spec;
    struct grid g;
    FILE *f = fmemopen(buf, size, "w");

    ck_assert_ptr_nonnull(f);
    stagemap_spec(&sm, p, s, p->st.shape.heads > 1 ? 1 : 0, mask_matrix, false, true, &spec);
    if (cell_by_cell)
        spec.kinds = NULL;
    ck_assert_int_eq(grid_create(&g, 200, 1), 0);
    heatmap_legend(&g, 0, 0, 200, &spec);
    grid_dump_text(&g, f);
    fclose(f);
    grid_destroy(&g);
}

/*
 * The legend's kinds found without asking every cell (stagemap_kinds) are
 * those found cell by cell: every stage, the mask matrix, with dropout,
 * with the mask off, with a NaN row (nothing visible), and on a model.
 */
START_TEST(the_legend_names_the_kinds_every_cell_has)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attn_error err;
    char fast[1024], slow[1024];

    for (int knobs = 0; knobs < 4; knobs++) {
        struct pipeline_source src;
        attention_config_init(&cfg);
        cfg.dropout = knobs == 1 ? 0.5 : 0.0;
        if (knobs == 2)
            cfg.mask = ATTN_MASK_NONE;
        memset(&src, 0, sizeof src);
        src.sentence = "Your journey starts with one step";
        src.vocab = &book;
        ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
        if (knobs == 3) { /* a row with nothing visible: NaN weights under masked cells */
            for (int j = 0; j < p.st.nk; j++)
                p.st.weights[j] = NAN;
            p.st.scores[1] = NAN; /* and a NaN among values */
            p.st.scores[(size_t)p.st.nq * (size_t)p.st.nk + 2] = NAN; /* (head 1's) */
        }
        for (int s = 0; s < STAGE_COUNT; s++)
            for (int mm = 0; mm < 2; mm++) {
                if (!pipeline_stage_present(&p, (enum pipeline_stage)s))
                    continue;
                legend_text(&p, (enum pipeline_stage)s, mm, false, fast, sizeof fast);
                legend_text(&p, (enum pipeline_stage)s, mm, true, slow, sizeof slow);
                ck_assert_msg(strcmp(fast, slow) == 0, "knobs %d, stage %d, mask %d:\n%s\n%s",
                              knobs, s, mm, fast, slow);
            }
        pipeline_destroy(&p);
    }
}
END_TEST

/* A grid too large to address is refused, never wrapped around to a small one. */
START_TEST(huge_grids_are_refused)
{
    struct grid g;

    ck_assert_int_eq(grid_create(&g, 268435457, 268435457), -1);
    ck_assert_int_eq(g.width, 0);
    ck_assert_ptr_null(g.cells);
    ck_assert_int_eq(grid_create(&g, 0, 5), 0);
    grid_destroy(&g);
}
END_TEST

static Suite *
render_suite(void)
{
    Suite *s = suite_create("render");
    TCase *golden = tcase_create("golden");
    TCase *units = tcase_create("units");

    /* (The size sweep renders some 1,700 frames: room for a loaded machine or the sanitizers.) */
    tcase_set_timeout(units, 120);

    tcase_add_checked_fixture(golden, setup, teardown);
    tcase_add_test(golden, weights_heatmap_in_colour_and_without);
    tcase_add_test(golden, the_editor_shows_line_ends);
    tcase_add_test(golden, masked_dropped_and_inf_cells_differ);
    tcase_add_test(golden, scores_output_and_wide_screen);
    tcase_add_test(golden, large_matrices_scroll_with_the_cursor);
    tcase_add_test(golden, too_small_says_so);
    suite_add_tcase(s, golden);
    tcase_add_checked_fixture(units, setup, teardown);
    tcase_add_test(units, heatmap_levels_and_hits);
    tcase_add_test(units, legend_says_when_its_scale_spans_every_head);
    tcase_add_test(units, palette_quantises_like_terminals);
    tcase_add_test(units, colours_have_contrast);
    tcase_add_test(units, masked_never_looks_like_a_weight);
    tcase_add_test(units, wider_never_shows_less);
    tcase_add_test(units, presentation_scales_and_centres);
    tcase_add_test(units, presentation_small_keeps_the_step);
    tcase_add_test(units, text_wrapping);
    tcase_add_test(units, inspector_spells_out_each_stage);
    tcase_add_test(units, scaling_is_described_once);
    tcase_add_test(units, inspector_explains_nan_rows);
    tcase_add_test(units, positional_encoding_in_the_order_it_is_computed);
    tcase_add_test(units, absent_queries_are_blank_not_nan);
    tcase_add_test(units, made_up_tokens_stay_marked);
    tcase_add_test(units, scaling_by_one_says_so);
    tcase_add_test(units, cut_labels_show_positions);
    tcase_add_test(units, mask_text_fits_the_variant);
    tcase_add_test(units, narration_dims_off_the_script);
    tcase_add_test(units, every_view_stage_is_complete);
    tcase_add_test(units, huge_grids_are_refused);
    tcase_add_test(units, packed_weights_read_as_the_f32_ones);
    tcase_add_test(units, the_legend_names_the_kinds_every_cell_has);
    tcase_add_test(units, the_legend_gives_the_data_range);
    tcase_add_test(units, the_first_key_can_leave_the_scale);
    tcase_add_test(units, weights_take_a_log_scale);
    suite_add_tcase(s, units);
    return s;
}

TEST_MAIN(render_suite)
