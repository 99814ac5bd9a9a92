/*
 * check_figure.c: figures of the view (src/render/figure.c) and where the
 * view opens (src/front/app/app_start.c).  A figure's PNG is read back with
 * cairo and its cells' colours compared with the screen's colour scale;
 * SVG and PDF are checked for what their formats begin with.
 */
#include "config.h"

#include <cairo.h>
#include <signal.h>
#include <sys/stat.h>

#include "testutil.h"
#include "app_model.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/models/model.h"
#include "front/app/app.h"
#include "front/app/app_keys.h"
#include "render/explain.h"
#include "render/heatmap.h"
#include "render/view_parts.h"

static struct vocab book;
static struct app a;
static const char *dir;

static void
setup(void)
{
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_source src = {
        .sentence = "Your journey starts with one step",
        .vocab = &book,
    };

    dir = test_tmpdir();
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
    attention_config_init(&cfg);
    ck_assert_msg(app_init(&a, &cfg, &src, NULL, &err) == ATTN_OK, "%s", err.msg);
    a.view.colour = true;
    a.view.utf8 = true;
}

static void
teardown(void)
{
    char cmd[600];

    app_destroy(&a);
    vocab_destroy(&book);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *
in_dir(const char *name)
{
    static char path[600];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* The pixel at point (x, y) of a PNG written at scale pixels per point. */
static struct rgb
pixel(cairo_surface_t *png, int scale, double x, double y)
{
    const unsigned char *data = cairo_image_surface_get_data(png);
    const int stride = cairo_image_surface_get_stride(png);
    const int px = (int)(x * scale);
    const int py = (int)(y * scale);
    uint32_t v;

    ck_assert(px >= 0 && py >= 0 && px < cairo_image_surface_get_width(png) &&
              py < cairo_image_surface_get_height(png));
    memcpy(&v, data + (size_t)py * (size_t)stride + (size_t)px * 4, 4);
    return (struct rgb){ (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
}

static bool
starts_with(const char *path, const char *magic)
{
    char buf[16] = "";
    FILE *f = fopen(path, "rb");
    size_t got;

    if (f == NULL)
        return false;
    got = fread(buf, 1, strlen(magic), f);
    fclose(f);
    return got == strlen(magic) && memcmp(buf, magic, got) == 0;
}

/*
 * Every cell of the weights' figure has the screen's colour for its value,
 * the masked ones paper: read back from the PNG, one pixel near each cell's
 * top left corner (its number is at the centre).
 */
START_TEST(a_heatmaps_cells_have_the_screens_colours)
{
    struct figure_result res;
    struct attn_error err;
    struct heatmap_spec spec;
    cairo_surface_t *png;
    const struct app_start at = { "weights.h1", NULL, NULL, NULL };

    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.head, 1);
    /* In presentation mode too: the projector's grey is the screen's, a figure keeps colour. */
    a.view.present = _i == 1;
    ck_assert_msg(app_write_figure(&a, in_dir("w.png"), &res, &err) == ATTN_OK, "%s", err.msg);
    a.view.present = false;
    ck_assert_int_eq(res.heatmaps, 1);
    ck_assert_str_eq(res.what, "weights, head 1");
    ck_assert_int_eq(res.first.rows, 6);
    ck_assert_int_eq(res.first.cols, 6);
    png = cairo_image_surface_create_from_png(in_dir("w.png"));
    ck_assert_int_eq(cairo_surface_status(png), CAIRO_STATUS_SUCCESS);
    ck_assert_int_eq(cairo_image_surface_get_width(png), (int)ceil(res.width * res.png_scale));
    ck_assert_int_eq(cairo_image_surface_get_height(png), (int)ceil(res.height * res.png_scale));
    ck_assert_int_eq(view_stage_spec(&a.view, &a.pipe, VIEW_WEIGHTS, 1, &spec), 0);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            const struct rgb got = pixel(png, res.png_scale, res.first.x + j * res.first.cell_w + 2,
                                         res.first.y + i * res.first.cell_h + 2);
            const struct rgb want = j > i ? (struct rgb){ 255, 255, 255 }
                                          : palette_ramp_rgb(spec.ramp,
                                                             heatmap_level(&spec, MAT_AT(spec.m, i, j)));
            ck_assert_msg(got.r == want.r && got.g == want.g && got.b == want.b,
                          "cell (%d, %d): %d %d %d, the screen's %d %d %d", i, j, got.r, got.g,
                          got.b, want.r, want.g, want.b);
        }
    cairo_surface_destroy(png);
}
END_TEST

/* The three formats from the same drawing; the name decides, any case; others are refused. */
START_TEST(svg_png_and_pdf_by_their_names)
{
    struct attn_error err;
    enum figure_format f;
    struct stat sb;

    ck_assert_int_eq(figure_format_of("a.SVG", &f), 0);
    ck_assert_int_eq(f, FIGURE_SVG);
    ck_assert_int_eq(figure_format_of("a.b/c.pdf", &f), 0);
    ck_assert_int_eq(f, FIGURE_PDF);
    ck_assert_int_eq(figure_format_of("x.png", &f), 0);
    ck_assert_int_eq(f, FIGURE_PNG);
    ck_assert_int_eq(figure_format_of("x.jpg", &f), -1);
    ck_assert_int_eq(figure_format_of("x.png/y", &f), -1);
    ck_assert_int_eq(figure_format_of("png", &f), -1);

    ck_assert_msg(app_write_figure(&a, in_dir("s.svg"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(starts_with(in_dir("s.svg"), "<?xml"));
    ck_assert_msg(app_write_figure(&a, in_dir("s.pdf"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(starts_with(in_dir("s.pdf"), "%PDF-"));
    ck_assert_msg(app_write_figure(&a, in_dir("s.png"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(starts_with(in_dir("s.png"), "\x89PNG"));

    ck_assert_int_eq(app_write_figure(&a, in_dir("s.jpg"), NULL, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "s.jpg: a figure's name ends in .svg, .png or .pdf"));
    ck_assert_int_ne(stat(in_dir("s.jpg"), &sb), 0);
    /* A folder that is not there: the file named, nothing left behind. */
    ck_assert_int_eq(app_write_figure(&a, in_dir("none/s.svg"), NULL, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "cannot write ") && strstr(err.msg, "none/s.svg"), "%s", err.msg);
    ck_assert_int_eq(test_count_entries(dir, NULL), 3);
}
END_TEST

/* The whole of a file's bytes (up to size) into buf; how many, or -1. */
static long
file_bytes(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t got;

    if (f == NULL)
        return -1;
    got = fread(buf, 1, size, f);
    fclose(f);
    return (long)got;
}

/*
 * A figure is written into a new hidden file beside its target and renamed
 * over it (issue 35): a link or a file of the user's named like the old
 * fixed temporary (PATH.part) is neither written through nor removed; a
 * link at the target itself is replaced, its file untouched; a missing or
 * unwritable folder is said as such, not as memory.
 */
START_TEST(a_figure_writes_through_no_file_of_the_users)
{
    struct attn_error err;
    char buf[64];
    struct stat sb;

    test_write_file(dir, "notes.txt", "my notes", 8);
    ck_assert_int_eq(symlink("notes.txt", in_dir("out.svg.part")), 0);
    ck_assert_msg(app_write_figure(&a, in_dir("out.svg"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(file_bytes(in_dir("notes.txt"), buf, sizeof buf), 8);
    ck_assert(memcmp(buf, "my notes", 8) == 0);
    ck_assert(starts_with(in_dir("out.svg"), "<?xml"));
    ck_assert_int_eq(lstat(in_dir("out.svg"), &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
    ck_assert_int_eq(lstat(in_dir("out.svg.part"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));

    test_write_file(dir, "d.png.part", "keep me", 7);
    ck_assert_msg(app_write_figure(&a, in_dir("d.png"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(file_bytes(in_dir("d.png.part"), buf, sizeof buf), 7);

    /* A link at the target: the link is replaced by the figure, its file keeps its text. */
    ck_assert_int_eq(symlink("notes.txt", in_dir("link.pdf")), 0);
    ck_assert_msg(app_write_figure(&a, in_dir("link.pdf"), NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(starts_with(in_dir("link.pdf"), "%PDF-"));
    ck_assert_int_eq(file_bytes(in_dir("notes.txt"), buf, sizeof buf), 8);
    /* notes.txt, out.svg, out.svg.part, d.png, d.png.part, link.pdf: no temporary left. */
    ck_assert_int_eq(test_count_entries(dir, NULL), 6);

    ck_assert_int_eq(app_write_figure(&a, in_dir("none/s.svg"), NULL, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "none/s.svg") && strstr(err.msg, "No such file or directory") &&
                      strstr(err.msg, "memory") == NULL,
                  "%s", err.msg);
    ck_assert_int_eq(app_write_figure(&a, in_dir("notes.txt/s.svg"), NULL, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "Not a directory") && strstr(err.msg, "memory") == NULL, "%s",
                  err.msg);
}
END_TEST

/*
 * A disk that fills while a figure is written (a file size limit makes the
 * writes fail as ENOSPC would): every format says so and the earlier
 * figure keeps every byte (issue 35: a PDF said "wrote" over a truncated
 * file).
 */
START_TEST(a_full_disk_keeps_the_earlier_figure)
{
    static const char *const names[] = { "f.pdf", "f.svg", "f.png" };
    struct attn_error err;
    struct rlimit lim;

    signal(SIGXFSZ, SIG_IGN); /* (as main.c has it: the write fails instead) */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        static char before[1 << 20], after[1 << 20];
        long had, has;
        ck_assert_msg(app_write_figure(&a, in_dir(names[i]), NULL, &err) == ATTN_OK, "%s",
                      err.msg);
        had = file_bytes(in_dir(names[i]), before, sizeof before);
        ck_assert_int_gt(had, 1000);
        ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
        lim.rlim_cur = 512;
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        ck_assert_int_ne(app_write_figure(&a, in_dir(names[i]), NULL, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, names[i]) && strstr(err.msg, "File too large"), "%s",
                      err.msg);
        lim.rlim_cur = lim.rlim_max;
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        has = file_bytes(in_dir(names[i]), after, sizeof after);
        ck_assert_int_eq(has, had);
        ck_assert(memcmp(before, after, (size_t)had) == 0);
        ck_assert_int_eq(test_count_entries(dir, NULL), (int)i + 1);
    }
}
END_TEST

/* g's figure: every head, on one scale, each as many cells as the matrix. */
START_TEST(the_heads_grid_draws_every_head)
{
    struct figure_result res;
    struct attn_error err;
    const struct app_start at = { "scores", NULL, "grid", NULL };

    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(a.view.grid_heads);
    ck_assert_msg(app_write_figure(&a, in_dir("g.png"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(res.heatmaps, a.pipe.st.shape.heads);
    ck_assert_str_eq(res.what, "scores, every head");
    ck_assert_int_eq(res.first.rows, 6);
    ck_assert_int_eq(res.first.cols, 6);
    /* A figure shows every head, and names no key: even when the screen had paged them */
    a.view.frame.heads_first = 0;
    a.view.frame.heads_shown = 1;
    ck_assert_msg(app_write_figure(&a, in_dir("g.png"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(res.legend[0] != '\0', "no legend");
    ck_assert_msg(strstr(res.legend, "of 2") == NULL && strstr(res.legend, "Tab") == NULL, "%s",
                  res.legend);
    ck_assert_int_eq(a.view.frame.heads_shown, 1); /* (the screen's own state kept) */
}
END_TEST

/*
 * The sentence view as a figure (issue 38, item 7): the text and its
 * heaviest keys with what the shades mean (weight 0 to 1 on the ramp), on
 * the last token by default; not the view's message at the foot of a
 * screen 160 rows tall (the figure was 1,591 points high and 570 wide).
 */
START_TEST(a_sentence_figure_is_the_sentence_and_its_legend)
{
    struct figure_result res;
    struct attn_error err;
    const struct app_start at = { NULL, NULL, "sentence", NULL };
    struct grid g;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.cursor_row, 5); /* 'step', which sees the whole sentence */
    a.view.message = "untrained weights drawn from seed 123: the patterns show how attention "
                     "computes, not what words mean. Space: the next stage";
    ck_assert_msg(app_write_figure(&a, in_dir("t.png"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(res.height < 150 && res.width < 500, "%g x %g points", res.width, res.height);
    ck_assert_ptr_nonnull(a.view.message); /* (the view's own kept) */
    /* The legend, on the screen as in the figure; the dimmed tokens named when some are. */
    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    a.view.cursor_row = 1;
    view_render(&a.view, &a.pipe, &g);
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    ck_assert_msg(strstr(text, "weight 0 ") != NULL &&
                      strstr(text, " 1   dimmed: the tokens after it, hidden by the causal mask"),
                  "%s", text);
    free(text);
    grid_destroy(&g);
}
END_TEST

/*
 * A model that groups its keys: the grid figure names each query head's
 * key head as the screen does ("head 2 k1"), and the title says what k0
 * and k1 are (issue 38, item 7).
 */
START_TEST(a_grid_figure_keeps_the_key_heads)
{
    static struct model m;
    struct app b;
    struct attn_error err;
    struct figure_result res;
    const struct app_start at = { "weights", NULL, "grid", NULL };

    app_on_model(&b, &m, test_path("tests/fixtures/decoders/qwen3"), NULL, "the cat sat on the mat");
    b.view.colour = b.view.utf8 = true;
    ck_assert_msg(app_open_at(&b, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(app_write_figure(&b, in_dir("q.png"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_str_eq(res.names, "head 0 k0, head 1 k0, head 2 k1, head 3 k1");
    ck_assert_msg(strstr(res.title, "k0-k1: the 2 key and value heads they share") != NULL, "%s",
                  res.title);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/* The mask as a matrix: its legend in a figure says what see and hide mean, without M's key. */
START_TEST(a_figure_names_no_keys)
{
    struct figure_result res;
    struct attn_error err;
    const struct app_start at = { "mask", NULL, NULL, NULL };

    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    a.view.mask_matrix = true;
    ck_assert_msg(app_write_figure(&a, in_dir("m.svg"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(strstr(res.legend, "becomes -inf") != NULL, "%s", res.legend);
    ck_assert_msg(strstr(res.legend, "M:") == NULL, "%s", res.legend);
    ck_assert(!a.view.paper);
}
END_TEST

/* The view opens where the options say, and refuses what the pipeline lacks by the option's name. */
START_TEST(the_view_opens_where_it_is_told)
{
    struct attn_error err;
    struct app_start at = { "context", "1", NULL, "starts" };

    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.stage, VIEW_CONTEXT);
    ck_assert_int_eq(a.view.head, 1);
    ck_assert_int_eq(a.view.cursor_row, 2);
    at = (struct app_start){ "qkv", NULL, NULL, "5" };
    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.stage, VIEW_QKV);
    ck_assert_int_eq(a.view.cursor_row, 5);
    at = (struct app_start){ "keys", NULL, NULL, NULL }; /* --print's name for it */
    ck_assert_msg(app_open_at(&a, &at, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.stage, VIEW_QKV);

    at = (struct app_start){ "weights.h2", NULL, NULL, NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "--stage weights.h2: head out of range; the heads are 0-1");
    at = (struct app_start){ "softness", NULL, NULL, NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "--stage softness: no such stage here; stages are "));
    at = (struct app_start){ NULL, "5.1", NULL, NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "--head 5.1: layers are a trained model's"));
    at = (struct app_start){ NULL, "2", NULL, NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "--head 2: head out of range; the heads are 0-1");
    at = (struct app_start){ NULL, NULL, "map", NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "--view map: L shows a trained model's map"));
    at = (struct app_start){ NULL, NULL, "heads", NULL };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_str_eq(err.msg,
                     "--view heads: no such screen; choose stage, grid, map, overview, sentence or next");
    at = (struct app_start){ NULL, NULL, NULL, "dog" };
    ck_assert_int_eq(app_open_at(&a, &at, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "--query dog: no such token"));
}
END_TEST

/*
 * On a trained model: --head L.H opens the layer, and the map, the sentence
 * view and the predictions each make a figure from the screen's own cells;
 * F writes what the screen shows in the three formats.
 */
START_TEST(a_models_screens_make_figures)
{
    struct model m;
    struct app b;
    struct attn_error err;
    struct figure_result res;
    static const char *const views[] = { "map", "sentence", "next" };
    char out[600];

    app_on_model(&b, &m, test_path("samples/models/minigpt"), NULL, "cat map sun red cat map sun red");
    b.view.colour = b.view.utf8 = true;
    snprintf(out, sizeof out, "%s", in_dir("out"));
    b.export_dir = out;
    {
        const struct app_start at = { "weights", "1.2", NULL, "sun#6" };
        ck_assert_msg(app_open_at(&b, &at, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(b.pipe.layer, 1);
        ck_assert_int_eq(b.view.head, 2);
        ck_assert_int_eq(b.view.cursor_row, 6);
    }
    ck_assert_msg(app_write_figure(&b, in_dir("w.svg"), &res, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(res.heatmaps, 1);
    for (int k = 0; k < 3; k++) {
        const struct app_start at = { NULL, NULL, views[k], NULL };
        char want[64];
        cairo_surface_t *png;
        int dark = 0;
        ck_assert_msg(app_open_at(&b, &at, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(app_write_figure(&b, in_dir("s.png"), &res, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(res.heatmaps, 0);
        snprintf(want, sizeof want, "the %s screen", views[k]);
        ck_assert_str_eq(res.what, want);
        /* Something drawn: ink beyond the margins. */
        png = cairo_image_surface_create_from_png(in_dir("s.png"));
        ck_assert_int_eq(cairo_surface_status(png), CAIRO_STATUS_SUCCESS);
        for (double y = 20; y < res.height - 16; y += 1)
            for (double x = 20; x < res.width - 16; x += 1) {
                struct rgb c = pixel(png, res.png_scale, x, y);
                dark += c.r + c.g + c.b < 200;
            }
        ck_assert_msg(dark > 50, "%s: %d dark points", views[k], dark);
        cairo_surface_destroy(png);
    }
    {
        /* The map's heatmaps: every layer's every head, whole (no pooling in a figure). */
        const struct app_start at = { NULL, NULL, "overview", NULL };
        ck_assert_msg(app_open_at(&b, &at, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(b.view.screen, SCREEN_MAP);
        ck_assert_int_eq(b.view.map_measure, VIEW_MAP_HEATMAPS);
        ck_assert_msg(app_write_figure(&b, in_dir("o.png"), &res, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(res.heatmaps, 2 * 4);
        ck_assert_int_eq(res.first.rows, b.pipe.st.nq);
        ck_assert_int_eq(res.first.cols, b.pipe.st.nq);
        ck_assert_str_eq(res.what, "every head's weights, 2 layers x 4 heads");
    }
    {
        const struct app_start at = { NULL, NULL, "next", NULL };
        ck_assert_msg(app_open_at(&b, &at, &err) == ATTN_OK, "%s", err.msg);
        /* the logit lens after the last token unless --query says another (issue 38, item 7) */
        ck_assert_int_eq(b.view.cursor_row, b.pipe.st.nq - 1);
    }
    app_key(&b, 'F'); /* on the predictions */
    ck_assert_msg(strstr(b.message, "wrote figure-next.svg, .png and .pdf into "), "%s", b.message);
    ck_assert(starts_with(in_dir("out/figure-next.svg"), "<?xml"));
    ck_assert(starts_with(in_dir("out/figure-next.png"), "\x89PNG"));
    ck_assert(starts_with(in_dir("out/figure-next.pdf"), "%PDF-"));
    app_key(&b, 'F'); /* again: the first stays, the second is numbered */
    ck_assert_msg(strstr(b.message, "wrote figure-next-2.svg, .png and .pdf into "), "%s",
                  b.message);
    ck_assert(starts_with(in_dir("out/figure-next-2.png"), "\x89PNG"));
    ck_assert(starts_with(in_dir("out/figure-next.svg"), "<?xml"));
    app_key(&b, APP_KEY_ESCAPE);
    app_key(&b, 'g');
    app_key(&b, 'F');
    ck_assert_msg(strstr(b.message, "wrote figure-layer1-weights-heads.svg"), "%s", b.message);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

static Suite *
figure_suite(void)
{
    Suite *s = suite_create("figure");
    TCase *tc = tcase_create("figures");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, a_heatmaps_cells_have_the_screens_colours, 0, 2);
    tcase_add_test(tc, svg_png_and_pdf_by_their_names);
    tcase_add_test(tc, a_figure_writes_through_no_file_of_the_users);
    tcase_add_test(tc, a_full_disk_keeps_the_earlier_figure);
    tcase_add_test(tc, the_heads_grid_draws_every_head);
    tcase_add_test(tc, a_figure_names_no_keys);
    tcase_add_test(tc, a_grid_figure_keeps_the_key_heads);
    tcase_add_test(tc, a_sentence_figure_is_the_sentence_and_its_legend);
    tcase_add_test(tc, the_view_opens_where_it_is_told);
    tcase_add_test(tc, a_models_screens_make_figures);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(figure_suite)
