/*
 * check_render.c: the renderer, stage matrix -> cell grid -> text
 * (src/render).  Pictures are compared with golden text in
 * tests/golden/render/ in colour and without; GENERATE=1 rewrites them.
 */
#include "config.h"

#include "render_harness.h"

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
    /*
     * One head's scores, here all positive: coloured around zero, so the
     * scale runs from 0 (white) to their largest (issue 62, item 1).
     */
    cfg.heads = 1;
    cfg.d_out = 2;
    run(&p, &cfg, "Your journey starts with one step");
    lo = INFINITY;
    hi = -INFINITY;
    for (int i = 0; i < p.st.nq; i++)
        for (int j = 0; j < p.st.nk; j++) {
            const float v = p.st.scores[(size_t)i * (size_t)p.st.nk + (size_t)j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    ck_assert(lo > 0.0f);
    legend_line(&p, VIEW_SCORES, line, sizeof line);
    snprintf(want, sizeof want, "min %.4f max %.4f   scale 0.0000 ", (double)lo, (double)hi);
    ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s (want %s)", line, want);
    snprintf(want, sizeof want, " %.4f", (double)hi);
    ck_assert_msg(strstr(line + 30, want) != NULL, "%s", line);
    pipeline_destroy(&p);
}
END_TEST

/*
 * The legend's swatches are the colours the cells take (issue 62, item 1:
 * the toy's embeddings, all positive, were coloured around zero while the
 * legend's blue end stood for their smallest).  A diverging ramp's scale is
 * -m .. m, white at 0; a stage of one sign shows the half it uses, from 0.
 * Read from the grid's cells, not only the text.
 */
static void
legend_swatches(const struct heatmap_spec *spec, char *text, size_t size, int *first, int *last,
                int *count)
{
    struct grid g;
    int x = 0;

    ck_assert_int_eq(grid_create(&g, 120, 1), 0);
    ck_assert_int_gt(heatmap_legend(&g, 0, 0, 120, spec), 0);
    *count = 0;
    for (int i = 0; i < g.width && (size_t)x + 5 < size; i++) {
        const struct cell *c = grid_at(&g, i, 0);
        if (c->role == ROLE_HEAT) {
            *last = c->level;
            if ((*count)++ == 0)
                *first = c->level;
        }
        if (c->ch != GRID_CONTINUATION)
            x += utf8_encode(c->ch, text + x);
    }
    text[x] = '\0';
    grid_destroy(&g);
}

START_TEST(the_legends_colours_are_the_cells)
{
    static const float one_sign[] = { 0.05f, 0.43f, 0.89f, 0.55f };
    static const float mixed[] = { -0.30f, 0.43f, 0.89f, 0.10f };
    static const float negative[] = { -0.05f, -0.43f, -0.89f, -0.55f };
    const float *data[] = { one_sign, mixed, negative };
    float cells[4];
    struct matrix m = matrix_view(cells, 2, 2);
    struct heatmap_spec spec;
    char text[512];
    int first = -1, last = -1, count = 0;

    for (int k = 0; k < 3; k++) {
        float lo = INFINITY, hi = -INFINITY;
        for (int e = 0; e < 4; e++) {
            cells[e] = data[k][e];
            lo = fminf(lo, data[k][e]);
            hi = fmaxf(hi, data[k][e]);
        }
        memset(&spec, 0, sizeof spec);
        spec.m = &m;
        spec.ramp = RAMP_DIVERGING;
        spec.colour = true;
        spec.lo = lo; /* as the view sets it: the numbers' range */
        spec.hi = hi;
        spec.cursor_row = spec.cursor_col = -1;
        legend_swatches(&spec, text, sizeof text, &first, &last, &count);
        ck_assert_int_eq(count, 16);
        if (k == 0) {
            /* From white (0's colour) to the largest's: the smallest's colour is near white. */
            ck_assert_int_eq(first, heatmap_level(&spec, 0.0f));
            ck_assert_int_eq(last, heatmap_level(&spec, 0.89f));
            ck_assert_int_lt(heatmap_level(&spec, 0.05f) - first, 10);
            ck_assert_msg(strstr(text, "min 0.0500 max 0.8900   scale 0.0000 ") == text, "%s", text);
            ck_assert_msg(strstr(text, " 0.8900") != NULL, "%s", text);
        } else if (k == 1) {
            /* Both signs: the whole ramp, -m .. m, its middle white. */
            ck_assert_int_eq(first, heatmap_level(&spec, -0.89f));
            ck_assert_int_eq(last, heatmap_level(&spec, 0.89f));
            ck_assert_int_eq(first, 0);
            ck_assert_int_eq(heatmap_level(&spec, 0.0f), 128);
            ck_assert_msg(strstr(text, "min -0.3000 max 0.8900   scale -0.8900 ") == text, "%s",
                          text);
        } else {
            ck_assert_int_eq(first, heatmap_level(&spec, -0.89f));
            ck_assert_int_eq(last, heatmap_level(&spec, 0.0f));
            ck_assert_msg(strstr(text, "scale -0.8900 ") != NULL && strstr(text, " 0.0000") != NULL,
                          "%s", text);
        }
    }
    /* The sequential ramp keeps its range: weights from 0 to their largest, as before. */
    m = matrix_view(cells, 1, 2);
    cells[0] = 0.2f;
    cells[1] = 0.6f;
    memset(&spec, 0, sizeof spec);
    spec.m = &m;
    spec.ramp = RAMP_SEQUENTIAL;
    spec.colour = true;
    spec.lo = 0.2f;
    spec.hi = 0.6f;
    spec.cursor_row = spec.cursor_col = -1;
    legend_swatches(&spec, text, sizeof text, &first, &last, &count);
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(last, 255);
    ck_assert_msg(strstr(text, "min 0.2000 ") == text, "%s", text);
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
    /* (the book's stages: every head's (nq, nk) block after the one before) */
    all = p.st.weights;
    count = (size_t)p.st.shape.heads * (size_t)p.st.nq * (size_t)p.st.nk;
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

/* A probability said as a percentage is never "0%" unless it is 0 (the header's next token). */
START_TEST(percentages_tell_small_from_zero)
{
    static const struct { double p; const char *want; } cases[] = {
        { 0.27, "27%" },     { 0.0096, "1%" },   { 0.0094, "0.9%" }, { 0.003, "0.3%" },
        { 0.00004, "0.004%" }, { 1e-6, "0.0001%" }, { 1e-9, "<0.0001%" }, { 0.0, "0%" },
        { 1.0, "100%" },
    };
    char out[24];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        text_percent(out, sizeof out, cases[i].p);
        ck_assert_msg(strcmp(out, cases[i].want) == 0, "%g: %s, not %s", cases[i].p, out,
                      cases[i].want);
    }
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
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(golden, 30);
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
    tcase_add_test(units, percentages_tell_small_from_zero);
    tcase_add_test(units, huge_grids_are_refused);
    tcase_add_test(units, the_legend_names_the_kinds_every_cell_has);
    tcase_add_test(units, the_legend_gives_the_data_range);
    tcase_add_test(units, the_legends_colours_are_the_cells);
    tcase_add_test(units, the_first_key_can_leave_the_scale);
    tcase_add_test(units, weights_take_a_log_scale);
    suite_add_tcase(s, units);
    return s;
}

TEST_MAIN(render_suite)
