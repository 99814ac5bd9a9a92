/*
 * figure_file.c: a figure written to its file (see figure.h): the format
 * its name asks for, the page measured from what figure.c draws and drawn
 * again into SVG, PDF or PNG, written beside the target and renamed over it.
 */
#include "config.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "attnscope/files/filewrite.h"
#include "render/figure.h"
#include "render/figure_internal.h"

int
figure_format_of(const char *path, enum figure_format *format)
{
    const char *dot = strrchr(path, '.');

    if (dot == NULL || strchr(dot, '/') != NULL)
        return -1;
    if (strcasecmp(dot, ".svg") == 0)
        *format = FIGURE_SVG;
    else if (strcasecmp(dot, ".png") == 0)
        *format = FIGURE_PNG;
    else if (strcasecmp(dot, ".pdf") == 0)
        *format = FIGURE_PDF;
    else
        return -1;
    return 0;
}

/*
 * The page: what v shows drawn again (the same calls as measured) onto a
 * surface of the format, moved by (dx, dy) into its margins, into path.
 * (Drawn twice rather than a recording played back: cairo 1.16 reads
 * uninitialised memory replaying a recording onto an SVG or PDF.)
 */
/* cairo's output into the figure's temporary; a failed write fails the surface. */
static cairo_status_t
to_file(void *closure, const unsigned char *data, unsigned int length)
{
    return filewrite_bytes(closure, data, length) == 0 ? CAIRO_STATUS_SUCCESS
                                                       : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_status_t
page(struct view *v, const struct pipeline *p, enum figure_format format, struct filewrite *out,
     double dx, double dy, struct figure_result *res)
{
    const double w = res->width;
    const double h = res->height;
    const int scale = res->png_scale;
    struct figure_result again;
    cairo_surface_t *page;
    cairo_t *cr;
    cairo_status_t st;

    page = format == FIGURE_SVG   ? cairo_svg_surface_create_for_stream(to_file, out, w, h)
           : format == FIGURE_PDF ? cairo_pdf_surface_create_for_stream(to_file, out, w, h)
                                  : cairo_image_surface_create(CAIRO_FORMAT_RGB24,
                                                               (int)ceil(w * scale),
                                                               (int)ceil(h * scale));
    cr = cairo_create(page);
    cairo_scale(cr, scale, scale);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_translate(cr, dx, dy);
    memset(&again, 0, sizeof again);
    st = figure_draw(cr, v, p, &again) == 0 ? cairo_status(cr) : CAIRO_STATUS_NO_MEMORY;
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && format == FIGURE_PNG)
        st = cairo_surface_write_to_png_stream(page, to_file, out);
    cairo_surface_finish(page);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(page);
    cairo_surface_destroy(page);
    return st;
}

static enum attn_status write_figure(struct view *v, const struct pipeline *p,
                                     enum figure_format format, const char *path,
                                     struct figure_result *res, struct attn_error *err);

enum attn_status
figure_write(struct view *v, const struct pipeline *p, const char *path, struct figure_result *res,
             struct attn_error *err)
{
    struct figure_result own;
    enum figure_format format;

    if (res == NULL)
        res = &own;
    memset(res, 0, sizeof *res);
    if (figure_format_of(path, &format) != 0)
        return attn_fail(err, ATTN_EVALUE, "%s: a figure's name ends in .svg, .png or .pdf", path);
    {
        /* In colour and UTF-8 whatever the terminal (a mono one's glyphs are not a figure's). */
        const bool colour = v->colour;
        const bool utf8 = v->utf8;
        enum attn_status st;
        v->colour = v->utf8 = v->paper = true;
        st = write_figure(v, p, format, path, res, err);
        v->colour = colour;
        v->utf8 = utf8;
        v->paper = false;
        return st;
    }
}

static enum attn_status
write_figure(struct view *v, const struct pipeline *p, enum figure_format format, const char *path,
             struct figure_result *res, struct attn_error *err)
{
    cairo_surface_t *rec;
    cairo_t *cr;
    cairo_status_t st;
    double x0, y0, w, h;
    struct filewrite out;
    int drawn;

    /* Measured first: drawn onto a recording surface, whose ink sizes the page. */
    rec = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
    cr = cairo_create(rec);
    drawn = figure_draw(cr, v, p, res);
    cairo_destroy(cr);
    if (drawn != 0) {
        cairo_surface_destroy(rec);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory drawing the figure", path);
    }
    cairo_recording_surface_ink_extents(rec, &x0, &y0, &w, &h);
    cairo_surface_destroy(rec);
    res->width = ceil(w + 2 * FIG_MARGIN);
    res->height = ceil(h + 2 * FIG_MARGIN);
    res->png_scale = res->width * FIG_PNG_SCALE > FIG_PNG_MAX_PX ||
                             res->height * FIG_PNG_SCALE > FIG_PNG_MAX_PX
                         ? 1
                         : FIG_PNG_SCALE;
    res->first.x += FIG_MARGIN - x0;
    res->first.y += FIG_MARGIN - y0;
    /*
     * Written into a new hidden file beside the target and renamed over it:
     * a failed figure loses no earlier one, and no file of the user's is
     * written through.
     */
    if (filewrite_begin(&out, path, err) != ATTN_OK)
        return err->status;
    st = page(v, p, format, &out, FIG_MARGIN - x0, FIG_MARGIN - y0, res);
    if (st != CAIRO_STATUS_SUCCESS && out.error == 0) {
        /* (A failed write says its own errno at the commit.) */
        attn_fail(err, st == CAIRO_STATUS_NO_MEMORY ? ATTN_ENOMEM : ATTN_EIO,
                  "cannot write %s: %s", path, cairo_status_to_string(st));
        filewrite_abort(&out);
        return err->status;
    }
    return filewrite_commit(&out, err);
}

